//! ARNs as policies use them: resource patterns (`acs:osstables:…` ≡ `arn:aws:s3tables:…`) and principal ARNs
//! (`acs:ram::<account>:user/<n>` ≡ `arn:aws:iam::<account>:user/<n>`). The two flavors are the same resource
//! (DESIGN.md: "both forms are accepted on input"), so a pattern written in either matches a resource named in
//! either. ARNs are case-sensitive, as in IAM.

use std::borrow::Cow;

use crate::PolicyError;

/// Which ARN spelling a deployment writes: the one place the services' ARN prefixes are spelled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ArnFlavor {
    /// `acs:osstables:…`, `acs:ram::…` (Alibaba OSS Tables and RAM), the default.
    #[default]
    Oss,
    /// `arn:aws:s3tables:…`, `arn:aws:iam::…`, `arn:aws:sts::…` (AWS).
    Aws,
}

impl ArnFlavor {
    /// Both flavors.
    pub const ALL: [Self; 2] = [Self::Oss, Self::Aws];

    /// The prefix of table bucket and table ARNs, up to the region (`acs:osstables:`).
    pub fn tables(self) -> &'static str {
        match self {
            Self::Oss => "acs:osstables:",
            Self::Aws => "arn:aws:s3tables:",
        }
    }

    /// The prefix of account, user and role ARNs, up to the account (`acs:ram::`).
    pub fn identities(self) -> &'static str {
        match self {
            Self::Oss => "acs:ram::",
            Self::Aws => "arn:aws:iam::",
        }
    }

    /// The prefix of role session ARNs, up to the account (`acs:ram::`, AWS: `arn:aws:sts::`).
    pub fn sessions(self) -> &'static str {
        match self {
            Self::Oss => "acs:ram::",
            Self::Aws => "arn:aws:sts::",
        }
    }

    /// The flavor whose identity prefix starts `arn`, and the rest (`<account>:<resource>`).
    pub fn strip_identity(arn: &str) -> Option<(Self, &str)> {
        Self::ALL
            .into_iter()
            .find_map(|flavor| arn.strip_prefix(flavor.identities()).map(|rest| (flavor, rest)))
    }
}

/// The prefixes that name the same service in the two flavors: (Alibaba Cloud, AWS).
const FLAVORS: &[(&str, &str)] = &[
    ("acs:osstables:", "arn:aws:s3tables:"),
    ("acs:ram:", "arn:aws:iam:"),
];

/// The ARN as given and, when it has a twin in the other flavor, that twin.
pub(crate) fn renderings(arn: &str) -> Vec<Cow<'_, str>> {
    let mut out = vec![Cow::Borrowed(arn)];
    for (acs, aws) in FLAVORS {
        if let Some(rest) = arn.strip_prefix(acs) {
            out.push(Cow::Owned(format!("{aws}{rest}")));
        } else if let Some(rest) = arn.strip_prefix(aws) {
            out.push(Cow::Owned(format!("{acs}{rest}")));
        }
    }
    out
}

/// Checks the shape of a `Resource` entry: `*`, or `acs:<service>:<region>:<account>:<resource>` /
/// `arn:<partition>:<service>:<region>:<account>:<resource>`, wildcards allowed in any part.
pub(crate) fn validate_resource(pattern: &str) -> Result<(), PolicyError> {
    if pattern == "*" {
        return Ok(());
    }
    let parts = match pattern.split_once(':') {
        Some(("acs", _)) => 5,
        Some(("arn", _)) => 6,
        _ => 0,
    };
    let fields: Vec<&str> = pattern.splitn(parts.max(1), ':').collect();
    let ok = parts > 0
        && fields.len() == parts
        && fields.get(1).is_some_and(|service| !service.is_empty())
        && fields.last().is_some_and(|resource| !resource.is_empty());
    if ok {
        Ok(())
    } else {
        Err(PolicyError::new(format!(
            "\"{pattern}\" is not a valid resource ARN (expected \"*\", \
             acs:osstables:<region>:<account>:bucket/<name>[/table/<id>] or \
             arn:aws:s3tables:<region>:<account>:bucket/<name>[/table/<id>])"
        )))
    }
}

/// A principal as a policy names it or as a caller is known, flavor-free.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PrincipalName {
    /// `"*"`: everyone.
    Anyone,
    /// An account id or the account's root ARN: the account, whose principals its identity policies govern.
    Account(String),
    /// A user, role or assumed-role session: account and the part after it (`user/ana`).
    Identity { account: String, resource: String },
}

/// Account ids are 12 (AWS) to 16 (Alibaba Cloud) digits, as the catalog's `AccountId` accepts.
pub(crate) fn is_account_id(s: &str) -> bool {
    (12..=16).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit())
}

impl PrincipalName {
    /// Parses `*`, an account id, or an `acs:ram::`/`arn:aws:iam::`/`arn:aws:sts::` ARN of a root, user, role or
    /// assumed-role session.
    pub(crate) fn parse(s: &str) -> Option<PrincipalName> {
        if s == "*" {
            return Some(PrincipalName::Anyone);
        }
        if is_account_id(s) {
            return Some(PrincipalName::Account(s.to_string()));
        }
        let rest = [
            ArnFlavor::Oss.identities(),
            ArnFlavor::Aws.identities(),
            ArnFlavor::Aws.sessions(),
        ]
            .iter()
            .find_map(|p| s.strip_prefix(p))?;
        let (account, resource) = rest.split_once(':')?;
        if !is_account_id(account) {
            return None;
        }
        if resource == "root" {
            return Some(PrincipalName::Account(account.to_string()));
        }
        let (kind, name) = resource.split_once('/')?;
        let known = matches!(kind, "user" | "role" | "assumed-role");
        (known && !name.is_empty() && !name.contains(['*', '?'])).then(|| PrincipalName::Identity {
            account: account.to_string(),
            resource: resource.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_shapes() {
        for (arn, ok) in [
            ("*", true),
            ("acs:osstables:cn-hangzhou:1142323451804027:bucket/b", true),
            ("acs:osstables:*:*:bucket/b/table/*", true),
            ("arn:aws:s3tables:us-east-1:111122223333:bucket/b", true),
            ("arn:aws:s3tables:*:*:*", true),
            ("acs:ram::111122223333:role/r", true),
            ("acs:osstables:cn-hangzhou:1142323451804027:", false),
            ("acs:osstables:cn-hangzhou:bucket/b", false),
            ("arn:aws:s3tables:us-east-1:bucket/b", false),
            ("bucket/b", false),
            ("", false),
            ("ARN:aws:s3tables:us-east-1:111122223333:bucket/b", false),
            ("acs::r:a:bucket/b", false),
        ] {
            assert_eq!(validate_resource(arn).is_ok(), ok, "{arn}");
        }
    }

    #[test]
    fn principals() {
        let user = || PrincipalName::Identity {
            account: "111122223333".into(),
            resource: "user/ana".into(),
        };
        for (s, want) in [
            ("*", Some(PrincipalName::Anyone)),
            (
                "111122223333",
                Some(PrincipalName::Account("111122223333".into())),
            ),
            (
                "1142323451804027",
                Some(PrincipalName::Account("1142323451804027".into())),
            ),
            (
                "acs:ram::111122223333:root",
                Some(PrincipalName::Account("111122223333".into())),
            ),
            (
                "arn:aws:iam::111122223333:root",
                Some(PrincipalName::Account("111122223333".into())),
            ),
            ("acs:ram::111122223333:user/ana", Some(user())),
            ("arn:aws:iam::111122223333:user/ana", Some(user())),
            ("12345", None),
            ("acs:ram::111122223333:group/g", None),
            ("acs:ram::111122223333:user/", None),
            ("acs:ram::111122223333:user/a*", None),
            ("acs:ram::abc:user/a", None),
            ("arn:aws:iam::111122223333:ROOT", None),
        ] {
            assert_eq!(PrincipalName::parse(s), want, "{s}");
        }
        assert_eq!(
            renderings("acs:osstables:r:1:bucket/b")[1],
            "arn:aws:s3tables:r:1:bucket/b"
        );
        assert_eq!(renderings("arn:aws:iam::1:user/u")[1], "acs:ram::1:user/u");
        assert_eq!(renderings("something").len(), 1);
    }
}

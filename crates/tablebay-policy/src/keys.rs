//! The condition keys Tablebay knows, and where each one's value comes from.
//!
//! A key that nothing fills makes a positive condition silently false and a negated one silently true, so a
//! `Deny` on it would never apply. Every key a policy names must therefore be one Tablebay fills; anything else is
//! refused when the policy is put (`docs/policies.md` lists them):
//!
//! - global keys: `aws:SecureTransport`, `aws:SourceIp`, `aws:CurrentTime`, `aws:EpochTime`, `aws:PrincipalAccount`,
//!   `aws:PrincipalArn`, `aws:PrincipalType`, `aws:ResourceAccount`, `aws:username`, `aws:ResourceTag/<key>`, and
//!   RAM's spellings `acs:SourceIp`, `acs:SecureTransport`, `acs:CurrentTime`;
//! - the table service's keys, under any of its prefixes (`s3tables:`, `oss:`, `osstables:`): `namespace`,
//!   `tableName` and `TableBucketTag/<key>` (S3 Tables' "Condition keys for Amazon S3 Tables").
//!
//! S3 Tables also documents `s3tables:KMSKeyArn`, `s3tables:SSEAlgorithm`, `s3tables:StorageClass`,
//! `aws:RequestTag/<key>` and `aws:TagKeys`, which describe a request's body; Tablebay's surfaces do not provide them,
//! so they are refused with a message saying so rather than accepted and never matched.

use crate::action::Service;

/// A known condition key, parsed from its lower-cased name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Key<'a> {
    SecureTransport,
    SourceIp,
    CurrentTime,
    EpochTime,
    PrincipalAccount,
    PrincipalArn,
    PrincipalType,
    ResourceAccount,
    Username,
    /// `aws:ResourceTag/<key>`: a tag of the resource acted on.
    ResourceTag(&'a str),
    /// `s3tables:namespace`.
    Namespace,
    /// `s3tables:tableName`.
    TableName,
    /// `s3tables:TableBucketTag/<key>`: a tag of the table bucket.
    TableBucketTag(&'a str),
}

impl Key<'_> {
    /// Whether the key reads the resource's namespace or table name.
    pub(crate) fn reads_names(self) -> bool {
        matches!(self, Key::Namespace | Key::TableName)
    }

    /// Whether the key reads the tags of the resource or of its bucket.
    pub(crate) fn reads_tags(self) -> bool {
        matches!(self, Key::ResourceTag(_) | Key::TableBucketTag(_))
    }
}

/// Keys S3 Tables documents that describe a request's body, which Tablebay does not fill.
const NOT_PROVIDED: &[&str] = &["kmskeyarn", "ssealgorithm", "storageclass"];

/// Parses a lower-cased key name; the error says why it is refused.
pub(crate) fn parse(key: &str) -> Result<Key<'_>, String> {
    let unknown = || {
        format!(
            "unknown condition key \"{key}\" (Tablebay fills the aws: global keys listed in its policy \
             documentation and s3tables:namespace, s3tables:tableName, s3tables:TableBucketTag/<key>)"
        )
    };
    let not_provided = || {
        format!(
            "the condition key \"{key}\" describes a request's body, which Tablebay does not evaluate; \
             a condition on it would never match"
        )
    };
    let Some((prefix, name)) = key.split_once(':') else {
        return Err(unknown());
    };
    match prefix {
        "aws" => match name {
            "securetransport" => Ok(Key::SecureTransport),
            "sourceip" => Ok(Key::SourceIp),
            "currenttime" => Ok(Key::CurrentTime),
            "epochtime" => Ok(Key::EpochTime),
            "principalaccount" => Ok(Key::PrincipalAccount),
            "principalarn" => Ok(Key::PrincipalArn),
            "principaltype" => Ok(Key::PrincipalType),
            "resourceaccount" => Ok(Key::ResourceAccount),
            "username" => Ok(Key::Username),
            "tagkeys" => Err(not_provided()),
            _ => match name.split_once('/') {
                Some(("resourcetag", tag)) if !tag.is_empty() => Ok(Key::ResourceTag(tag)),
                Some(("requesttag", tag)) if !tag.is_empty() => Err(not_provided()),
                _ => Err(unknown()),
            },
        },
        // Alibaba Cloud RAM's names of the same global facts.
        "acs" => match name {
            "securetransport" => Ok(Key::SecureTransport),
            "sourceip" => Ok(Key::SourceIp),
            "currenttime" => Ok(Key::CurrentTime),
            _ => Err(unknown()),
        },
        _ if Service::from_prefix(prefix) == Some(Service::Tables) => match name {
            "namespace" => Ok(Key::Namespace),
            "tablename" => Ok(Key::TableName),
            _ if NOT_PROVIDED.contains(&name) => Err(not_provided()),
            _ => match name.split_once('/') {
                Some(("tablebuckettag", tag)) if !tag.is_empty() => Ok(Key::TableBucketTag(tag)),
                _ => Err(unknown()),
            },
        },
        _ => Err(unknown()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_table() {
        for (key, want) in [
            ("aws:sourceip", Some(Key::SourceIp)),
            ("acs:sourceip", Some(Key::SourceIp)),
            ("aws:securetransport", Some(Key::SecureTransport)),
            ("acs:securetransport", Some(Key::SecureTransport)),
            ("aws:currenttime", Some(Key::CurrentTime)),
            ("aws:epochtime", Some(Key::EpochTime)),
            ("aws:principalaccount", Some(Key::PrincipalAccount)),
            ("aws:principalarn", Some(Key::PrincipalArn)),
            ("aws:principaltype", Some(Key::PrincipalType)),
            ("aws:resourceaccount", Some(Key::ResourceAccount)),
            ("aws:username", Some(Key::Username)),
            ("aws:resourcetag/env", Some(Key::ResourceTag("env"))),
            ("s3tables:namespace", Some(Key::Namespace)),
            ("oss:namespace", Some(Key::Namespace)),
            ("osstables:namespace", Some(Key::Namespace)),
            ("s3tables:tablename", Some(Key::TableName)),
            ("oss:tablename", Some(Key::TableName)),
            (
                "s3tables:tablebuckettag/team",
                Some(Key::TableBucketTag("team")),
            ),
            ("s3tables:foo", None),
            ("s3tables:ssealgorithm", None),
            ("s3tables:kmskeyarn", None),
            ("s3tables:storageclass", None),
            ("aws:tagkeys", None),
            ("aws:requesttag/env", None),
            ("aws:resourcetag/", None),
            ("s3tables:tablebuckettag/", None),
            ("aws:userid", None),
            ("aws:multifactorauthpresent", None),
            ("acs:accessid", None),
            ("sts:externalid", None),
            ("s3:prefix", None),
            ("a:b", None),
            ("namespace", None),
            ("", None),
        ] {
            assert_eq!(parse(key).ok(), want, "{key}");
        }
        assert!(
            parse("s3tables:ssealgorithm")
                .unwrap_err()
                .contains("request's body")
        );
        assert!(
            parse("s3tables:foo")
                .unwrap_err()
                .contains("unknown condition key")
        );
    }
}

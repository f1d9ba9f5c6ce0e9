//! Naming rules for table buckets, namespaces and tables
//! (<https://docs.aws.amazon.com/AmazonS3/latest/userguide/s3-tables-buckets-naming.html>, `reference/s3tables-api.md`
//! §3.2–3.3). Clients validate almost nothing (§1.7), so every rule is enforced here.

use std::fmt;

use crate::ServiceError;

/// A validated table bucket name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BucketName(String);

/// A validated namespace name (one level).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NamespaceName(String);

/// A validated table name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TableName(String);

const BUCKET_RESERVED_PREFIXES: &[&str] = &["xn--", "sthree-", "amzn-s3-demo-", "aws"];
const BUCKET_RESERVED_SUFFIXES: &[&str] = &["-s3alias", "--ol-s3", "--x-s3", "--table-s3"];

fn starts_and_ends_alphanumeric(s: &str) -> bool {
    let alnum = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    alnum(s.chars().next()) && alnum(s.chars().last())
}

impl BucketName {
    /// Validates a table bucket name: 3–63 characters of `a-z`, `0-9` and `-`, starting and ending with a letter or
    /// digit, none of the reserved prefixes and suffixes.
    pub fn parse(name: &str) -> Result<Self, ServiceError> {
        let bad = |why: &str| {
            Err(ServiceError::invalid(format!(
                "Invalid table bucket name '{name}': {why}"
            )))
        };
        if !(3..=63).contains(&name.len()) {
            return bad("must be between 3 and 63 characters long");
        }
        if !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return bad("may contain only lowercase letters, digits and hyphens");
        }
        if !starts_and_ends_alphanumeric(name) {
            return bad("must begin and end with a letter or digit");
        }
        if let Some(p) = BUCKET_RESERVED_PREFIXES
            .iter()
            .find(|p| name.starts_with(*p))
        {
            return bad(&format!("must not start with '{p}'"));
        }
        if let Some(s) = BUCKET_RESERVED_SUFFIXES.iter().find(|s| name.ends_with(*s)) {
            return bad(&format!("must not end with '{s}'"));
        }
        Ok(Self(name.to_string()))
    }

    /// The name as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Shared rule of namespace and table names: 1–255 of `a-z`, `0-9`, `_`, starting and ending with a letter or digit.
fn check_lower_underscore(kind: &str, name: &str) -> Result<(), ServiceError> {
    let bad = |why: &str| {
        Err(ServiceError::invalid(format!(
            "Invalid {kind} name '{name}': {why}"
        )))
    };
    if !(1..=255).contains(&name.len()) {
        return bad("must be between 1 and 255 characters long");
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    {
        return bad("may contain only lowercase letters, digits and underscores");
    }
    if !starts_and_ends_alphanumeric(name) {
        return bad("must begin and end with a letter or digit");
    }
    Ok(())
}

impl NamespaceName {
    /// Validates a namespace name; additionally it must not start with `aws`.
    pub fn parse(name: &str) -> Result<Self, ServiceError> {
        check_lower_underscore("namespace", name)?;
        if name.starts_with("aws") {
            return Err(ServiceError::invalid(format!(
                "Invalid namespace name '{name}': must not start with 'aws'"
            )));
        }
        Ok(Self(name.to_string()))
    }

    /// The name as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TableName {
    /// Validates a table name.
    pub fn parse(name: &str) -> Result<Self, ServiceError> {
        check_lower_underscore("table", name)?;
        Ok(Self(name.to_string()))
    }

    /// The name as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

macro_rules! display_as_str {
    ($($t:ty),*) => {$(
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    )*};
}
display_as_str!(BucketName, NamespaceName, TableName);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_names() {
        for (name, ok) in [
            ("abc", true),
            ("a-b-c", true),
            ("my-bucket-01", true),
            ("ab", false),
            ("-abc", false),
            ("abc-", false),
            ("ABC", false),
            ("a_b", false),
            ("a.b", false),
            ("xn--abc", false),
            ("sthree-x", false),
            ("awsdata", false),
            ("amzn-s3-demo-x", false),
            ("abc--table-s3", false),
            ("abc-s3alias", false),
            ("abc--ol-s3", false),
            ("abc--x-s3", false),
            (&"a".repeat(63), true),
            (&"a".repeat(64), false),
        ] {
            assert_eq!(BucketName::parse(name).is_ok(), ok, "{name}");
        }
    }

    #[test]
    fn namespace_and_table_names() {
        for (name, ok) in [
            ("a", true),
            ("ns_1", true),
            ("1ns", true),
            ("", false),
            ("_ns", false),
            ("ns_", false),
            ("Ns", false),
            ("n-s", false),
            ("n.s", false),
            ("n s", false),
            (&"a".repeat(255), true),
            (&"a".repeat(256), false),
        ] {
            assert_eq!(NamespaceName::parse(name).is_ok(), ok, "namespace {name}");
            assert_eq!(TableName::parse(name).is_ok(), ok, "table {name}");
        }
        assert!(NamespaceName::parse("awsns").is_err());
        assert!(TableName::parse("awstable").is_ok());
    }
}

//! The `Condition` element: operators (String*, Numeric*, Date*, Bool, IpAddress/NotIpAddress, Arn*, Null), the
//! `IfExists` suffix and the `ForAnyValue:` / `ForAllValues:` set qualifiers, parsed once and evaluated against the
//! request context.
//!
//! Semantics follow the IAM reference ("Condition operators", "Multivalued context keys"): operators AND together,
//! keys within an operator AND, values of a key OR. A key missing from the request makes a positive operator false
//! and a negated one (`StringNotEquals`, `NotIpAddress`, …) true; `…IfExists` makes it true either way;
//! `ForAllValues:` is true on a missing or empty set, `ForAnyValue:` false. Key names are case-insensitive.

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use serde_json::Value;

use crate::PolicyError;
use crate::arn;
use crate::ip::Cidr;
use crate::pattern::wildcard_match;

/// A parsed `Condition` element: every clause must hold.
#[derive(Clone, Debug, Default)]
pub(crate) struct Condition {
    clauses: Vec<Clause>,
}

#[derive(Clone, Debug)]
struct Clause {
    test: Test,
    negated: bool,
    if_exists: bool,
    set: SetQualifier,
    /// Lower-cased, so that lookups are case-insensitive.
    key: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SetQualifier {
    Single,
    ForAnyValue,
    ForAllValues,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cmp {
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    fn holds(self, ord: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::*;
        matches!(
            (self, ord),
            (Cmp::Eq, Equal)
                | (Cmp::Lt, Less)
                | (Cmp::Le, Less | Equal)
                | (Cmp::Gt, Greater)
                | (Cmp::Ge, Greater | Equal)
        )
    }
}

/// The positive form of an operator with its parsed policy values.
#[derive(Clone, Debug)]
enum Test {
    StringEquals(Vec<String>),
    StringEqualsIgnoreCase(Vec<String>),
    StringLike(Vec<String>),
    Numeric(Cmp, Vec<f64>),
    Date(Cmp, Vec<DateTime<Utc>>),
    Bool(Vec<bool>),
    Ip(Vec<Cidr>),
    /// ArnEquals and ArnLike behave alike in IAM: both take wildcards.
    Arn(Vec<String>),
    /// `Null: true` means "the key is absent".
    Null(Vec<bool>),
}

/// Operator name (case-insensitive, without qualifier or `IfExists`) → (negated, how to build its test).
type Builder = fn(&[&Value]) -> Result<Test, String>;

fn operator(name: &str) -> Option<(bool, Builder)> {
    macro_rules! op {
        ($neg:expr, |$v:ident| $body:expr) => {
            Some((
                $neg,
                (|$v: &[&Value]| -> Result<Test, String> { $body }) as Builder,
            ))
        };
    }
    match name.to_ascii_lowercase().as_str() {
        "stringequals" => op!(false, |v| Ok(Test::StringEquals(scalars(v)?))),
        "stringnotequals" => op!(true, |v| Ok(Test::StringEquals(scalars(v)?))),
        "stringequalsignorecase" => op!(false, |v| Ok(Test::StringEqualsIgnoreCase(scalars(v)?))),
        "stringnotequalsignorecase" => op!(true, |v| Ok(Test::StringEqualsIgnoreCase(scalars(v)?))),
        "stringlike" => op!(false, |v| Ok(Test::StringLike(scalars(v)?))),
        "stringnotlike" => op!(true, |v| Ok(Test::StringLike(scalars(v)?))),
        "numericequals" => op!(false, |v| numbers(v, Cmp::Eq)),
        "numericnotequals" => op!(true, |v| numbers(v, Cmp::Eq)),
        "numericlessthan" => op!(false, |v| numbers(v, Cmp::Lt)),
        "numericlessthanequals" => op!(false, |v| numbers(v, Cmp::Le)),
        "numericgreaterthan" => op!(false, |v| numbers(v, Cmp::Gt)),
        "numericgreaterthanequals" => op!(false, |v| numbers(v, Cmp::Ge)),
        "dateequals" => op!(false, |v| dates(v, Cmp::Eq)),
        "datenotequals" => op!(true, |v| dates(v, Cmp::Eq)),
        "datelessthan" => op!(false, |v| dates(v, Cmp::Lt)),
        "datelessthanequals" => op!(false, |v| dates(v, Cmp::Le)),
        "dategreaterthan" => op!(false, |v| dates(v, Cmp::Gt)),
        "dategreaterthanequals" => op!(false, |v| dates(v, Cmp::Ge)),
        "bool" => op!(false, |v| Ok(Test::Bool(bools(v)?))),
        "ipaddress" => op!(false, |v| cidrs(v)),
        "notipaddress" => op!(true, |v| cidrs(v)),
        "arnequals" | "arnlike" => op!(false, |v| arns(v)),
        "arnnotequals" | "arnnotlike" => op!(true, |v| arns(v)),
        "null" => op!(false, |v| Ok(Test::Null(bools(v)?))),
        _ => None,
    }
}

/// A condition value as a string: JSON strings as is, numbers and booleans as their JSON text.
fn scalar(v: &Value) -> Result<String, String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        _ => Err("condition values must be strings, numbers or booleans".into()),
    }
}

fn scalars(vals: &[&Value]) -> Result<Vec<String>, String> {
    vals.iter().map(|v| scalar(v)).collect()
}

fn parse_number(s: &str) -> Option<f64> {
    s.trim().parse::<f64>().ok().filter(|n| n.is_finite())
}

fn numbers(vals: &[&Value], cmp: Cmp) -> Result<Test, String> {
    let parsed = scalars(vals)?
        .iter()
        .map(|s| parse_number(s).ok_or_else(|| format!("\"{s}\" is not a number")))
        .collect::<Result<_, _>>()?;
    Ok(Test::Numeric(cmp, parsed))
}

/// ISO 8601 in the forms IAM accepts (`2026-01-01`, `2026-01-01T00:00:00Z`, with offset or fraction), or epoch
/// seconds.
fn parse_date(s: &str) -> Option<DateTime<Utc>> {
    let s = s.trim();
    if let Ok(d) = DateTime::parse_from_rfc3339(s) {
        return Some(d.with_timezone(&Utc));
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"] {
        if let Ok(d) = NaiveDateTime::parse_from_str(s, format) {
            return Some(d.and_utc());
        }
    }
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return d.and_hms_opt(0, 0, 0).map(|d| d.and_utc());
    }
    if !s.is_empty() && s.len() <= 12 && s.bytes().all(|b| b.is_ascii_digit()) {
        return s
            .parse::<i64>()
            .ok()
            .and_then(|secs| DateTime::from_timestamp(secs, 0));
    }
    None
}

fn dates(vals: &[&Value], cmp: Cmp) -> Result<Test, String> {
    let parsed = scalars(vals)?
        .iter()
        .map(|s| {
            parse_date(s)
                .ok_or_else(|| format!("\"{s}\" is not a date (use ISO 8601 or epoch seconds)"))
        })
        .collect::<Result<_, _>>()?;
    Ok(Test::Date(cmp, parsed))
}

fn parse_bool(s: &str) -> Option<bool> {
    if s.eq_ignore_ascii_case("true") {
        Some(true)
    } else if s.eq_ignore_ascii_case("false") {
        Some(false)
    } else {
        None
    }
}

fn bools(vals: &[&Value]) -> Result<Vec<bool>, String> {
    scalars(vals)?
        .iter()
        .map(|s| {
            parse_bool(s)
                .ok_or_else(|| format!("\"{s}\" is not a boolean (use \"true\" or \"false\")"))
        })
        .collect()
}

fn cidrs(vals: &[&Value]) -> Result<Test, String> {
    let parsed = scalars(vals)?
        .iter()
        .map(|s| {
            Cidr::parse(s).ok_or_else(|| format!("\"{s}\" is not an IP address or CIDR block"))
        })
        .collect::<Result<_, _>>()?;
    Ok(Test::Ip(parsed))
}

fn arns(vals: &[&Value]) -> Result<Test, String> {
    let parsed = scalars(vals)?;
    for s in &parsed {
        if s != "*" && s.split(':').count() < 5 {
            return Err(format!("\"{s}\" is not an ARN"));
        }
    }
    Ok(Test::Arn(parsed))
}

impl Condition {
    /// Parses a `Condition` object: `{ "<Operator>": { "<key>": value | [values] } }`.
    pub(crate) fn parse(value: &Value) -> Result<Condition, PolicyError> {
        let Value::Object(operators) = value else {
            return Err(PolicyError::new("must be an object of condition operators"));
        };
        let mut clauses = Vec::new();
        for (op_name, keys) in operators {
            let (set, rest) = if let Some(rest) = strip_prefix_ci(op_name, "ForAnyValue:") {
                (SetQualifier::ForAnyValue, rest)
            } else if let Some(rest) = strip_prefix_ci(op_name, "ForAllValues:") {
                (SetQualifier::ForAllValues, rest)
            } else {
                (SetQualifier::Single, op_name.as_str())
            };
            let (base, if_exists) = match strip_suffix_ci(rest, "IfExists") {
                Some(base) => (base, true),
                None => (rest, false),
            };
            let Some((negated, build)) = operator(base) else {
                return Err(PolicyError::new(format!(
                    "unknown condition operator \"{op_name}\""
                )));
            };
            let is_null = base.eq_ignore_ascii_case("Null");
            if is_null && (if_exists || set != SetQualifier::Single) {
                return Err(PolicyError::new(format!(
                    "\"{op_name}\": Null takes neither IfExists nor a set qualifier"
                )));
            }
            let Value::Object(keys) = keys else {
                return Err(PolicyError::new(format!(
                    "\"{op_name}\" must map condition keys to values"
                )));
            };
            if keys.is_empty() {
                return Err(PolicyError::new(format!(
                    "\"{op_name}\" names no condition key"
                )));
            }
            for (key, values) in keys {
                if key.is_empty() || key.len() > 128 {
                    return Err(PolicyError::new(format!(
                        "\"{op_name}\": bad condition key \"{key}\""
                    )));
                }
                let values: Vec<&Value> = match values {
                    Value::Array(items) => items.iter().collect(),
                    other => vec![other],
                };
                if values.is_empty() {
                    return Err(PolicyError::new(format!(
                        "\"{op_name}\".\"{key}\": no values"
                    )));
                }
                let test = build(&values)
                    .map_err(|why| PolicyError::new(format!("\"{op_name}\".\"{key}\": {why}")))?;
                clauses.push(Clause {
                    test,
                    negated,
                    if_exists,
                    set,
                    key: key.to_ascii_lowercase(),
                });
            }
        }
        Ok(Condition { clauses })
    }

    /// The (lower-cased) keys the clauses test.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &str> {
        self.clauses.iter().map(|clause| clause.key.as_str())
    }

    /// Whether every clause holds. `lookup` gets a lower-cased key and answers its values, `None` when absent.
    pub(crate) fn holds(&self, lookup: &dyn Fn(&str) -> Option<Vec<String>>) -> bool {
        self.clauses.iter().all(|clause| clause.holds(lookup))
    }
}

impl Clause {
    fn holds(&self, lookup: &dyn Fn(&str) -> Option<Vec<String>>) -> bool {
        let values = lookup(&self.key).filter(|v| !v.is_empty());
        if let Test::Null(expect_absent) = &self.test {
            let absent = values.is_none();
            return expect_absent.contains(&absent);
        }
        let Some(values) = values else {
            return match self.set {
                SetQualifier::ForAllValues => true,
                SetQualifier::ForAnyValue => self.if_exists,
                SetQualifier::Single => self.if_exists || self.negated,
            };
        };
        let value_ok = |v: &String| self.test.matches(v) != self.negated;
        match self.set {
            SetQualifier::ForAllValues => values.iter().all(value_ok),
            SetQualifier::ForAnyValue => values.iter().any(value_ok),
            SetQualifier::Single => values.iter().any(|v| self.test.matches(v)) != self.negated,
        }
    }
}

impl Test {
    /// Whether one request value matches any of the policy values.
    fn matches(&self, value: &str) -> bool {
        match self {
            Test::StringEquals(want) => want.iter().any(|w| w == value),
            Test::StringEqualsIgnoreCase(want) => {
                let value = value.to_lowercase();
                want.iter().any(|w| w.to_lowercase() == value)
            }
            Test::StringLike(want) => want.iter().any(|w| wildcard_match(w, value, false)),
            Test::Numeric(cmp, want) => parse_number(value).is_some_and(|v| {
                want.iter()
                    .any(|w| v.partial_cmp(w).is_some_and(|o| cmp.holds(o)))
            }),
            Test::Date(cmp, want) => {
                parse_date(value).is_some_and(|v| want.iter().any(|w| cmp.holds(v.cmp(w))))
            }
            Test::Bool(want) => parse_bool(value).is_some_and(|v| want.contains(&v)),
            Test::Ip(blocks) => value
                .trim()
                .parse()
                .is_ok_and(|ip| blocks.iter().any(|b| b.contains(ip))),
            Test::Arn(want) => {
                let forms = arn::renderings(value);
                want.iter()
                    .any(|w| forms.iter().any(|f| wildcard_match(w, f, false)))
            }
            Test::Null(_) => false,
        }
    }
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| s.get(prefix.len()..))
        .flatten()
}

fn strip_suffix_ci<'a>(s: &'a str, suffix: &str) -> Option<&'a str> {
    let cut = s.len().checked_sub(suffix.len())?;
    let tail = s.get(cut..)?;
    tail.eq_ignore_ascii_case(suffix)
        .then(|| s.get(..cut))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn check(condition: &str, context: &[(&str, &[&str])]) -> bool {
        let condition = Condition::parse(&serde_json::from_str(condition).unwrap()).unwrap();
        let map: BTreeMap<String, Vec<String>> = context
            .iter()
            .map(|(k, v)| {
                (
                    k.to_ascii_lowercase(),
                    v.iter().map(|s| s.to_string()).collect(),
                )
            })
            .collect();
        condition.holds(&|key| map.get(key).cloned())
    }

    #[test]
    fn operators_table() {
        let ip: &[(&str, &[&str])] = &[("aws:SourceIp", &["203.0.113.9"])];
        let ip6: &[(&str, &[&str])] = &[("aws:SourceIp", &["2001:db8::5"])];
        let tls: &[(&str, &[&str])] = &[("aws:SecureTransport", &["true"])];
        let plain: &[(&str, &[&str])] = &[("aws:SecureTransport", &["false"])];
        let now: &[(&str, &[&str])] = &[("aws:CurrentTime", &["2026-06-01T12:00:00Z"])];
        let ns: &[(&str, &[&str])] = &[("s3tables:namespace", &["sales"])];
        let tags: &[(&str, &[&str])] = &[("aws:TagKeys", &["env", "team"])];
        let empty_tags: &[(&str, &[&str])] = &[("aws:TagKeys", &[])];
        let num: &[(&str, &[&str])] = &[("s3tables:maxTables", &["10"])];
        let arn: &[(&str, &[&str])] = &[("aws:PrincipalArn", &["acs:ram::111122223333:user/ana"])];
        let none: &[(&str, &[&str])] = &[];
        for (cond, ctx, want) in [
            // Strings: exact, case rules, wildcards, negation, key names case-insensitive.
            (
                r#"{"StringEquals":{"s3tables:namespace":"sales"}}"#,
                ns,
                true,
            ),
            (
                r#"{"StringEquals":{"S3Tables:Namespace":"sales"}}"#,
                ns,
                true,
            ),
            (
                r#"{"StringEquals":{"s3tables:namespace":"Sales"}}"#,
                ns,
                false,
            ),
            (
                r#"{"StringEqualsIgnoreCase":{"s3tables:namespace":"SALES"}}"#,
                ns,
                true,
            ),
            (
                r#"{"StringNotEqualsIgnoreCase":{"s3tables:namespace":"SALES"}}"#,
                ns,
                false,
            ),
            (
                r#"{"StringEquals":{"s3tables:namespace":["hr","sales"]}}"#,
                ns,
                true,
            ),
            (
                r#"{"StringNotEquals":{"s3tables:namespace":["hr","sales"]}}"#,
                ns,
                false,
            ),
            (
                r#"{"StringNotEquals":{"s3tables:namespace":"hr"}}"#,
                ns,
                true,
            ),
            (r#"{"StringLike":{"s3tables:namespace":"sa*"}}"#, ns, true),
            (r#"{"StringLike":{"s3tables:namespace":"s?les"}}"#, ns, true),
            (
                r#"{"StringNotLike":{"s3tables:namespace":"sa*"}}"#,
                ns,
                false,
            ),
            (
                r#"{"stringequals":{"s3tables:namespace":"sales"}}"#,
                ns,
                true,
            ),
            // A missing key: positive false, negated true, IfExists true.
            (
                r#"{"StringEquals":{"s3tables:namespace":"sales"}}"#,
                none,
                false,
            ),
            (
                r#"{"StringNotEquals":{"s3tables:namespace":"sales"}}"#,
                none,
                true,
            ),
            (
                r#"{"StringEqualsIfExists":{"s3tables:namespace":"hr"}}"#,
                none,
                true,
            ),
            (
                r#"{"StringEqualsIfExists":{"s3tables:namespace":"hr"}}"#,
                ns,
                false,
            ),
            (
                r#"{"StringEqualsIfExists":{"s3tables:namespace":"sales"}}"#,
                ns,
                true,
            ),
            // Numbers.
            (
                r#"{"NumericLessThan":{"s3tables:maxTables":"11"}}"#,
                num,
                true,
            ),
            (
                r#"{"NumericLessThan":{"s3tables:maxTables":10}}"#,
                num,
                false,
            ),
            (
                r#"{"NumericLessThanEquals":{"s3tables:maxTables":10}}"#,
                num,
                true,
            ),
            (
                r#"{"NumericGreaterThan":{"s3tables:maxTables":9.5}}"#,
                num,
                true,
            ),
            (
                r#"{"NumericGreaterThanEquals":{"s3tables:maxTables":"10.0"}}"#,
                num,
                true,
            ),
            (
                r#"{"NumericEquals":{"s3tables:maxTables":"10"}}"#,
                num,
                true,
            ),
            (
                r#"{"NumericNotEquals":{"s3tables:maxTables":"10"}}"#,
                num,
                false,
            ),
            // Dates, in several spellings.
            (
                r#"{"DateLessThan":{"aws:CurrentTime":"2026-12-31T00:00:00Z"}}"#,
                now,
                true,
            ),
            (
                r#"{"DateLessThan":{"aws:CurrentTime":"2026-01-01"}}"#,
                now,
                false,
            ),
            (
                r#"{"DateGreaterThan":{"aws:CurrentTime":"2026-06-01T11:59:59+00:00"}}"#,
                now,
                true,
            ),
            (
                r#"{"DateGreaterThanEquals":{"aws:CurrentTime":"2026-06-01T12:00:00Z"}}"#,
                now,
                true,
            ),
            (
                r#"{"DateLessThanEquals":{"aws:CurrentTime":"2026-06-01T14:00:00+02:00"}}"#,
                now,
                true,
            ),
            (
                r#"{"DateEquals":{"aws:CurrentTime":"2026-06-01T12:00:00.000Z"}}"#,
                now,
                true,
            ),
            (
                r#"{"DateNotEquals":{"aws:CurrentTime":"2026-06-01T12:00:00Z"}}"#,
                now,
                false,
            ),
            (
                r#"{"DateGreaterThan":{"aws:CurrentTime":"1780000000"}}"#,
                now,
                true,
            ),
            // Bool.
            (r#"{"Bool":{"aws:SecureTransport":"true"}}"#, tls, true),
            (r#"{"Bool":{"aws:SecureTransport":true}}"#, tls, true),
            (r#"{"Bool":{"aws:SecureTransport":"false"}}"#, tls, false),
            (r#"{"Bool":{"aws:SecureTransport":"false"}}"#, plain, true),
            (r#"{"Bool":{"aws:SecureTransport":"TRUE"}}"#, tls, true),
            // IP blocks, both families.
            (
                r#"{"IpAddress":{"aws:SourceIp":"203.0.113.0/24"}}"#,
                ip,
                true,
            ),
            (
                r#"{"IpAddress":{"aws:SourceIp":["10.0.0.0/8","2001:db8::/32"]}}"#,
                ip,
                false,
            ),
            (
                r#"{"IpAddress":{"aws:SourceIp":["10.0.0.0/8","2001:db8::/32"]}}"#,
                ip6,
                true,
            ),
            (
                r#"{"NotIpAddress":{"aws:SourceIp":"203.0.113.0/24"}}"#,
                ip,
                false,
            ),
            (
                r#"{"NotIpAddress":{"aws:SourceIp":"203.0.113.0/24"}}"#,
                ip6,
                true,
            ),
            (
                r#"{"IpAddress":{"aws:SourceIp":"203.0.113.0/24"}}"#,
                none,
                false,
            ),
            (
                r#"{"NotIpAddress":{"aws:SourceIp":"203.0.113.0/24"}}"#,
                none,
                true,
            ),
            // ARNs: wildcards, both flavors, case-sensitive.
            (
                r#"{"ArnLike":{"aws:PrincipalArn":"acs:ram::111122223333:user/*"}}"#,
                arn,
                true,
            ),
            (
                r#"{"ArnEquals":{"aws:PrincipalArn":"arn:aws:iam::111122223333:user/ana"}}"#,
                arn,
                true,
            ),
            (
                r#"{"ArnEquals":{"aws:PrincipalArn":"arn:aws:iam::111122223333:user/ANA"}}"#,
                arn,
                false,
            ),
            (
                r#"{"ArnNotLike":{"aws:PrincipalArn":"acs:ram::*:role/*"}}"#,
                arn,
                true,
            ),
            // Null.
            (r#"{"Null":{"s3tables:namespace":"true"}}"#, none, true),
            (r#"{"Null":{"s3tables:namespace":"true"}}"#, ns, false),
            (r#"{"Null":{"s3tables:namespace":"false"}}"#, ns, true),
            // Set qualifiers, including an empty set.
            (
                r#"{"ForAllValues:StringEquals":{"aws:TagKeys":["env","team","owner"]}}"#,
                tags,
                true,
            ),
            (
                r#"{"ForAllValues:StringEquals":{"aws:TagKeys":["env"]}}"#,
                tags,
                false,
            ),
            (
                r#"{"ForAllValues:StringEquals":{"aws:TagKeys":["env"]}}"#,
                empty_tags,
                true,
            ),
            (
                r#"{"ForAllValues:StringEquals":{"aws:TagKeys":["env"]}}"#,
                none,
                true,
            ),
            (
                r#"{"ForAnyValue:StringEquals":{"aws:TagKeys":["team"]}}"#,
                tags,
                true,
            ),
            (
                r#"{"ForAnyValue:StringEquals":{"aws:TagKeys":["x"]}}"#,
                tags,
                false,
            ),
            (
                r#"{"ForAnyValue:StringEquals":{"aws:TagKeys":["team"]}}"#,
                empty_tags,
                false,
            ),
            (
                r#"{"ForAnyValue:StringNotEquals":{"aws:TagKeys":["team"]}}"#,
                tags,
                true,
            ),
            (
                r#"{"ForAllValues:StringNotEquals":{"aws:TagKeys":["team"]}}"#,
                tags,
                false,
            ),
            (
                r#"{"ForAnyValue:StringEqualsIfExists":{"aws:TagKeys":["team"]}}"#,
                none,
                true,
            ),
            (
                r#"{"forallvalues:stringlike":{"aws:TagKeys":["e*","t*"]}}"#,
                tags,
                true,
            ),
            // Several operators and keys AND together.
            (
                r#"{"Bool":{"aws:SecureTransport":"true"},"IpAddress":{"aws:SourceIp":"203.0.113.0/24"}}"#,
                tls,
                false,
            ),
            (
                r#"{"StringEquals":{"s3tables:namespace":"sales","aws:username":"ana"}}"#,
                ns,
                false,
            ),
            (r#"{}"#, none, true),
        ] {
            assert_eq!(check(cond, ctx), want, "{cond} with {ctx:?}");
        }
    }

    #[test]
    fn bad_conditions() {
        for (cond, msg) in [
            (
                r#"{"StringEqualz":{"a:b":"x"}}"#,
                "unknown condition operator \"StringEqualz\"",
            ),
            (
                r#"{"ForSomeValues:StringEquals":{"a:b":"x"}}"#,
                "unknown condition operator",
            ),
            (r#"{"NumericLessThan":{"a:b":"ten"}}"#, "is not a number"),
            (
                r#"{"DateLessThan":{"aws:CurrentTime":"yesterday"}}"#,
                "is not a date",
            ),
            (
                r#"{"Bool":{"aws:SecureTransport":"yes"}}"#,
                "is not a boolean",
            ),
            (
                r#"{"IpAddress":{"aws:SourceIp":"10.0.0.0/33"}}"#,
                "is not an IP address",
            ),
            (
                r#"{"ArnLike":{"aws:PrincipalArn":"user/ana"}}"#,
                "is not an ARN",
            ),
            (r#"{"NullIfExists":{"a:b":"true"}}"#, "Null takes neither"),
            (r#"{"StringEquals":{"a:b":[]}}"#, "no values"),
            (r#"{"StringEquals":{"a:b":{"c":1}}}"#, "must be strings"),
            (r#"{"StringEquals":{}}"#, "names no condition key"),
            (r#"{"StringEquals":"x"}"#, "must map condition keys"),
            (r#"[]"#, "must be an object"),
        ] {
            let err = Condition::parse(&serde_json::from_str(cond).unwrap()).unwrap_err();
            assert!(err.message().contains(msg), "{cond}: {err}");
        }
    }
}

//! Policy documents: the IAM JSON grammar (`Version`, `Id`, `Statement` with `Sid`, `Effect`, `Principal` /
//! `NotPrincipal`, `Action` / `NotAction`, `Resource` / `NotResource`, `Condition`), parsed and validated into a
//! [`Policy`] so that a stored policy is always one the evaluator understands.
//!
//! Validation is strict where a mistake would silently grant or deny something (an unknown action or key, a
//! malformed ARN, a principal in an identity policy) and every error names the place in the document.

use serde_json::{Map, Value};

use crate::action::{Action, Service};
use crate::arn::{self, PrincipalName};
use crate::condition::Condition;
use crate::keys::{self, Key};
use crate::pattern::wildcard_match;
use crate::{MAX_POLICY_BYTES, PolicyError};

/// Where a policy is attached, which decides whether it must or must not name a `Principal`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PolicyKind {
    /// Attached to a user or role: no `Principal` (the holder is the principal).
    Identity,
    /// A table bucket or table policy: every statement names a `Principal`.
    Resource,
    /// An inline session policy passed to `AssumeRole`: no `Principal`; narrows the role's permissions.
    Session,
    /// A role's trust policy: names who may assume the role (`sts:AssumeRole`); needs a `Principal`, no
    /// `Resource`.
    Trust,
}

impl PolicyKind {
    fn needs_principal(self) -> bool {
        matches!(self, PolicyKind::Resource | PolicyKind::Trust)
    }

    fn name(self) -> &'static str {
        match self {
            PolicyKind::Identity => "an identity policy",
            PolicyKind::Resource => "a resource policy",
            PolicyKind::Session => "a session policy",
            PolicyKind::Trust => "a trust policy",
        }
    }
}

/// A parsed and validated policy document.
#[derive(Clone, Debug)]
pub struct Policy {
    source: String,
    kind: PolicyKind,
    pub(crate) statements: Vec<Statement>,
}

/// `Allow` or `Deny`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Effect {
    Allow,
    Deny,
}

/// One statement, parsed.
#[derive(Clone, Debug)]
pub(crate) struct Statement {
    pub sid: Option<String>,
    pub effect: Effect,
    /// `None` in identity and session policies.
    pub principal: Option<Negatable<PrincipalName>>,
    pub action: Negatable<ActionPattern>,
    /// `None` only in trust policies.
    pub resource: Option<Negatable<String>>,
    pub condition: Condition,
}

/// The names of the `${…}` policy variables in a `Resource` entry, but the literal-character ones (`${*}`,
/// `${?}`, `${$}`).
pub(crate) fn variables(pattern: &str) -> impl Iterator<Item = &str> {
    pattern
        .split("${")
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
        .filter(|name| !matches!(*name, "*" | "?" | "$"))
}

/// A variable that names no key Tablebay fills would make its entry match nothing, silently: refused.
fn check_variables(pattern: &str) -> Result<(), PolicyError> {
    for name in variables(pattern) {
        keys::parse(&name.to_ascii_lowercase()).map_err(|why| {
            PolicyError::new(format!("\"{pattern}\": policy variable ${{{name}}}: {why}"))
        })?;
    }
    Ok(())
}

/// Which facts about the resource a policy's conditions and variables read, so that the caller fetches only
/// those (a table's namespace and name, its and its bucket's tags).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResourceFacts {
    /// `s3tables:namespace` or `s3tables:tableName`.
    pub names: bool,
    /// `aws:ResourceTag/<key>` or `s3tables:TableBucketTag/<key>`.
    pub tags: bool,
}

impl std::ops::BitOr for ResourceFacts {
    type Output = ResourceFacts;
    fn bitor(self, other: ResourceFacts) -> ResourceFacts {
        ResourceFacts {
            names: self.names || other.names,
            tags: self.tags || other.tags,
        }
    }
}

/// `X` or `NotX`: the entries, and whether the element is the negated one.
#[derive(Clone, Debug)]
pub(crate) struct Negatable<T> {
    pub negated: bool,
    pub items: Vec<T>,
}

/// An `Action` entry: `*`, or a service pattern and a name pattern (both matched case-insensitively).
#[derive(Clone, Debug)]
pub(crate) enum ActionPattern {
    Any,
    Named { service: String, name: String },
}

impl ActionPattern {
    fn parse(entry: &str) -> Result<ActionPattern, PolicyError> {
        if entry == "*" {
            return Ok(ActionPattern::Any);
        }
        let unknown = || PolicyError::new(format!("unknown action \"{entry}\""));
        let Some((service, name)) = entry.split_once(':') else {
            return Err(PolicyError::new(format!(
                "\"{entry}\" is not an action (expected \"oss:<Action>\", \"s3tables:<Action>\" or \"*\")"
            )));
        };
        let pattern = ActionPattern::Named {
            service: service.to_string(),
            name: name.to_string(),
        };
        let services: Vec<Service> = [Service::Tables, Service::Sts]
            .into_iter()
            .filter(|s| {
                s.prefixes()
                    .iter()
                    .any(|p| wildcard_match(service, p, true))
            })
            .collect();
        if services.is_empty() {
            return Err(PolicyError::new(format!(
                "unknown service \"{service}\" in action \"{entry}\" (expected oss, s3tables, osstables or sts)"
            )));
        }
        // Without wildcards this is "is it a known action"; with them, a pattern that matches nothing is almost
        // always a typo that would silently grant nothing.
        if !Action::every().iter().any(|a| pattern.matches(*a)) {
            return Err(unknown());
        }
        Ok(pattern)
    }

    pub(crate) fn matches(&self, action: Action) -> bool {
        match self {
            ActionPattern::Any => true,
            ActionPattern::Named { service, name } => {
                action
                    .service()
                    .prefixes()
                    .iter()
                    .any(|p| wildcard_match(service, p, true))
                    && wildcard_match(name, action.name(), true)
            }
        }
    }
}

/// A string or a non-empty array of strings (IAM's "string or list" fields).
fn string_list<'a>(value: &'a Value, what: &str) -> Result<Vec<&'a str>, PolicyError> {
    let items: Vec<&Value> = match value {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    };
    if items.is_empty() {
        return Err(PolicyError::new(format!(
            "{what} must not be an empty list"
        )));
    }
    items
        .into_iter()
        .map(|v| match v {
            Value::String(s) if !s.is_empty() => Ok(s.as_str()),
            Value::String(_) => Err(PolicyError::new(format!(
                "{what} entries must not be empty"
            ))),
            _ => Err(PolicyError::new(format!(
                "{what} must be a string or a list of strings"
            ))),
        })
        .collect()
}

/// Picks `X` or `NotX` (exactly one allowed).
fn negatable<'a>(
    statement: &'a Map<String, Value>,
    name: &'static str,
    not_name: &'static str,
) -> Result<Option<(bool, &'static str, &'a Value)>, PolicyError> {
    match (statement.get(name), statement.get(not_name)) {
        (Some(_), Some(_)) => Err(PolicyError::new(format!(
            "a statement has either {name} or {not_name}, not both"
        ))),
        (Some(v), None) => Ok(Some((false, name, v))),
        (None, Some(v)) => Ok(Some((true, not_name, v))),
        (None, None) => Ok(None),
    }
}

fn parse_principal(value: &Value, element: &str) -> Result<Vec<PrincipalName>, PolicyError> {
    let entries: Vec<&str> = match value {
        Value::String(s) if s == "*" => vec!["*"],
        Value::String(s) => {
            return Err(PolicyError::new(format!(
                "{element} must be \"*\" or an object such as {{\"AWS\": [...]}} or {{\"RAM\": [...]}}, not \"{s}\""
            )));
        }
        Value::Object(map) if !map.is_empty() => {
            let mut entries = Vec::new();
            for (kind, ids) in map {
                if kind != "AWS" && kind != "RAM" {
                    return Err(PolicyError::new(format!(
                        "{element} type \"{kind}\" is not supported (use \"AWS\" or \"RAM\")"
                    )));
                }
                entries.extend(string_list(ids, &format!("{element}.{kind}"))?);
            }
            entries
        }
        _ => {
            return Err(PolicyError::new(format!(
                "{element} must be \"*\" or an object such as {{\"AWS\": [...]}}"
            )));
        }
    };
    entries
        .into_iter()
        .map(|e| {
            PrincipalName::parse(e).ok_or_else(|| {
                PolicyError::new(format!(
                    "{element} \"{e}\" is not \"*\", an account id or a root, user or role ARN \
                     (acs:ram::<account>:user/<name>, arn:aws:iam::<account>:role/<name>, …)"
                ))
            })
        })
        .collect()
}

const STATEMENT_KEYS: &[&str] = &[
    "Sid",
    "Effect",
    "Principal",
    "NotPrincipal",
    "Action",
    "NotAction",
    "Resource",
    "NotResource",
    "Condition",
];

fn parse_statement(value: &Value, kind: PolicyKind) -> Result<Statement, PolicyError> {
    let Value::Object(statement) = value else {
        return Err(PolicyError::new("a statement must be a JSON object"));
    };
    if let Some(key) = statement
        .keys()
        .find(|k| !STATEMENT_KEYS.contains(&k.as_str()))
    {
        return Err(PolicyError::new(format!(
            "unknown statement element \"{key}\""
        )));
    }
    let sid = match statement.get("Sid") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(PolicyError::new("Sid must be a string")),
    };
    let effect = match statement.get("Effect") {
        Some(Value::String(s)) if s == "Allow" => Effect::Allow,
        Some(Value::String(s)) if s == "Deny" => Effect::Deny,
        Some(other) => {
            return Err(PolicyError::new(format!(
                "Effect must be \"Allow\" or \"Deny\", not {other}"
            )));
        }
        None => return Err(PolicyError::new("missing Effect")),
    };
    let principal = match negatable(statement, "Principal", "NotPrincipal")? {
        Some((_, element, _)) if !kind.needs_principal() => {
            return Err(PolicyError::new(format!(
                "{element} is not allowed in {}",
                kind.name()
            )));
        }
        Some((negated, element, value)) => Some(Negatable {
            negated,
            items: parse_principal(value, element)?,
        }),
        None if kind.needs_principal() => {
            return Err(PolicyError::new(format!(
                "missing Principal: {} must say whom it applies to",
                kind.name()
            )));
        }
        None => None,
    };
    let action = match negatable(statement, "Action", "NotAction")? {
        Some((negated, element, value)) => {
            let items = string_list(value, element)?
                .into_iter()
                .map(|e| ActionPattern::parse(e).map_err(|err| err.at(element)))
                .collect::<Result<_, _>>()?;
            Negatable { negated, items }
        }
        None => return Err(PolicyError::new("missing Action (or NotAction)")),
    };
    let resource = match negatable(statement, "Resource", "NotResource")? {
        Some((negated, element, value)) => {
            let items = string_list(value, element)?
                .into_iter()
                .map(|e| {
                    arn::validate_resource(e)
                        .and_then(|()| check_variables(e))
                        .map(|()| e.to_string())
                        .map_err(|err| err.at(element))
                })
                .collect::<Result<_, _>>()?;
            Some(Negatable { negated, items })
        }
        None if kind == PolicyKind::Trust => None,
        None => return Err(PolicyError::new("missing Resource (or NotResource)")),
    };
    let condition = match statement.get("Condition") {
        Some(value) => Condition::parse(value).map_err(|e| e.at("Condition"))?,
        None => Condition::default(),
    };
    for key in condition.keys() {
        keys::parse(key).map_err(|why| PolicyError::new(why).at("Condition"))?;
    }
    Ok(Statement {
        sid,
        effect,
        principal,
        action,
        resource,
        condition,
    })
}

impl Policy {
    /// Parses and validates a document of the given kind; at most [`MAX_POLICY_BYTES`] bytes.
    pub fn parse(json: &str, kind: PolicyKind) -> Result<Policy, PolicyError> {
        if json.trim().is_empty() {
            return Err(PolicyError::new("the policy document is empty"));
        }
        if json.len() > MAX_POLICY_BYTES {
            return Err(PolicyError::new(format!(
                "the policy document is {} bytes; the limit is {MAX_POLICY_BYTES}",
                json.len()
            )));
        }
        let doc: Value = serde_json::from_str(json)
            .map_err(|e| PolicyError::new(format!("the policy document is not valid JSON: {e}")))?;
        let Value::Object(doc) = doc else {
            return Err(PolicyError::new(
                "the policy document must be a JSON object",
            ));
        };
        if let Some(key) = doc
            .keys()
            .find(|k| !matches!(k.as_str(), "Version" | "Id" | "Statement"))
        {
            return Err(PolicyError::new(format!(
                "unknown policy element \"{key}\""
            )));
        }
        match doc.get("Version") {
            None => {}
            Some(Value::String(v)) if matches!(v.as_str(), "2012-10-17" | "2008-10-17" | "1") => {}
            Some(other) => {
                return Err(PolicyError::new(format!(
                    "Version must be \"2012-10-17\" (or RAM's \"1\"), not {other}"
                )));
            }
        }
        if doc.get("Id").is_some_and(|id| !id.is_string()) {
            return Err(PolicyError::new("Id must be a string"));
        }
        let statements: Vec<&Value> = match doc.get("Statement") {
            Some(Value::Array(items)) => items.iter().collect(),
            Some(item @ Value::Object(_)) => vec![item],
            Some(_) => {
                return Err(PolicyError::new(
                    "Statement must be an object or a list of objects",
                ));
            }
            None => return Err(PolicyError::new("missing Statement")),
        };
        if statements.is_empty() {
            return Err(PolicyError::new("Statement must not be empty"));
        }
        let statements = statements
            .into_iter()
            .enumerate()
            .map(|(i, s)| parse_statement(s, kind).map_err(|e| e.at(&format!("Statement[{i}]"))))
            .collect::<Result<_, _>>()?;
        Ok(Policy {
            source: json.to_string(),
            kind,
            statements,
        })
    }

    /// The document exactly as given (what Get*Policy answers).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The kind the document was validated as.
    pub fn kind(&self) -> PolicyKind {
        self.kind
    }

    /// Which resource facts the document's conditions and policy variables read.
    pub fn resource_facts(&self) -> ResourceFacts {
        let mut lowered = Vec::new();
        for statement in &self.statements {
            lowered.extend(statement.condition.keys().map(str::to_string));
            for pattern in statement.resource.iter().flat_map(|r| r.items.iter()) {
                lowered.extend(variables(pattern).map(str::to_ascii_lowercase));
            }
        }
        lowered.iter().filter_map(|key| keys::parse(key).ok()).fold(
            ResourceFacts::default(),
            |facts, key: Key<'_>| {
                facts
                    | ResourceFacts {
                        names: key.reads_names(),
                        tags: key.reads_tags(),
                    }
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUCKET: &str = "acs:osstables:cn-hangzhou:1142323451804027:bucket/b";

    fn doc(statement: &str) -> String {
        format!(r#"{{"Version":"2012-10-17","Statement":[{statement}]}}"#)
    }

    #[test]
    fn accepted_documents() {
        for (json, kind) in [
            (doc(&format!(r#"{{"Effect":"Allow","Action":"oss:GetTable","Resource":"{BUCKET}/table/*"}}"#)), PolicyKind::Identity),
            (
                r#"{"Version":"1","Statement":{"Effect":"Deny","Action":["oss:*"],"Resource":["*"]}}"#.to_string(),
                PolicyKind::Identity,
            ),
            (r#"{"Statement":[{"Effect":"Allow","NotAction":"s3tables:Delete*","NotResource":"arn:aws:s3tables:*:*:bucket/x"}]}"#.to_string(), PolicyKind::Session),
            (doc(r#"{"Sid":"s1","Effect":"Allow","Principal":"*","Action":"osstables:*","Resource":"*"}"#), PolicyKind::Resource),
            (doc(r#"{"Effect":"Allow","Principal":{"AWS":["111122223333","arn:aws:iam::444455556666:root"]},"Action":"s3tables:Get*","Resource":"*"}"#), PolicyKind::Resource),
            (doc(r#"{"Effect":"Allow","Principal":{"RAM":"acs:ram::1142323451804027:user/ana"},"Action":"oss:GetTable","Resource":"*","Condition":{"Bool":{"aws:SecureTransport":"true"}}}"#), PolicyKind::Resource),
            (doc(r#"{"Effect":"Allow","NotPrincipal":{"AWS":"acs:ram::111122223333:role/r"},"Action":"oss:GetTable","Resource":"*"}"#), PolicyKind::Resource),
            (doc(r#"{"Effect":"Allow","Principal":{"AWS":"acs:ram::111122223333:user/u"},"Action":"sts:AssumeRole"}"#), PolicyKind::Trust),
            (doc(r#"{"Effect":"Allow","Action":"*","Resource":"*"}"#), PolicyKind::Identity),
            (doc(r#"{"Effect":"Allow","Action":"OSS:gettable","Resource":"*"}"#), PolicyKind::Identity),
            (doc(r#"{"Effect":"Allow","Action":"*:GetTable","Resource":"*"}"#), PolicyKind::Identity),
            (doc(r#"{"Effect":"Deny","Principal":"*","Action":"oss:*","Resource":"*","Condition":{"StringEquals":{"s3tables:namespace":"hr","OSS:TableName":"t","aws:ResourceTag/env":"x","osstables:TableBucketTag/team":"y"}}}"#), PolicyKind::Resource),
            (doc(r#"{"Effect":"Allow","Action":"oss:*","Resource":"acs:osstables:*:*:bucket/${aws:username}-${s3tables:namespace}/${*}"}"#), PolicyKind::Identity),
        ] {
            let policy = Policy::parse(&json, kind).unwrap_or_else(|e| panic!("{json}: {e}"));
            assert_eq!(policy.source(), json);
            assert_eq!(policy.kind(), kind);
        }
    }

    #[test]
    fn refused_documents_say_why() {
        let any = r#""Action":"oss:GetTable","Resource":"*""#;
        for (json, kind, msg) in [
            (String::new(), PolicyKind::Identity, "empty"),
            ("not json".into(), PolicyKind::Identity, "not valid JSON"),
            (
                r#"{"Version":"2012-10-17","Statement":"#.into(),
                PolicyKind::Identity,
                "not valid JSON",
            ),
            ("[]".into(), PolicyKind::Identity, "must be a JSON object"),
            (
                r#"{"Version":"2012-10-17"}"#.into(),
                PolicyKind::Identity,
                "missing Statement",
            ),
            (
                r#"{"Version":"2012-10-17","Statement":[]}"#.into(),
                PolicyKind::Identity,
                "must not be empty",
            ),
            (
                r#"{"Version":"2012-10-17","Statement":"x"}"#.into(),
                PolicyKind::Identity,
                "object or a list",
            ),
            (
                r#"{"Version":"2013-01-01","Statement":{}}"#.into(),
                PolicyKind::Identity,
                "Version must be",
            ),
            (
                r#"{"Version":1,"Statement":{}}"#.into(),
                PolicyKind::Identity,
                "Version must be",
            ),
            (
                r#"{"Versio":"1","Statement":{}}"#.into(),
                PolicyKind::Identity,
                "unknown policy element \"Versio\"",
            ),
            (
                r#"{"Id":5,"Statement":{}}"#.into(),
                PolicyKind::Identity,
                "Id must be a string",
            ),
            (
                doc("5"),
                PolicyKind::Identity,
                "Statement[0]: a statement must be a JSON object",
            ),
            (
                doc(&format!("{{{any}}}")),
                PolicyKind::Identity,
                "Statement[0]: missing Effect",
            ),
            (
                doc(&format!(r#"{{"Effect":"allow",{any}}}"#)),
                PolicyKind::Identity,
                "Effect must be",
            ),
            (
                doc(&format!(r#"{{"Effect":"Allow","Sid":1,{any}}}"#)),
                PolicyKind::Identity,
                "Sid must be a string",
            ),
            (
                doc(&format!(r#"{{"Effect":"Allow","Extra":1,{any}}}"#)),
                PolicyKind::Identity,
                "unknown statement element \"Extra\"",
            ),
            (
                doc(r#"{"Effect":"Allow","Resource":"*"}"#),
                PolicyKind::Identity,
                "missing Action",
            ),
            (
                doc(r#"{"Effect":"Allow","Action":"oss:GetTable"}"#),
                PolicyKind::Identity,
                "missing Resource",
            ),
            (
                doc(
                    r#"{"Effect":"Allow","Action":"oss:GetTable","NotAction":"oss:GetTable","Resource":"*"}"#,
                ),
                PolicyKind::Identity,
                "not both",
            ),
            (
                doc(r#"{"Effect":"Allow","Action":"oss:GetTabel","Resource":"*"}"#),
                PolicyKind::Identity,
                "Statement[0]: Action: unknown action \"oss:GetTabel\"",
            ),
            (
                doc(r#"{"Effect":"Allow","Action":"oss:Frob*","Resource":"*"}"#),
                PolicyKind::Identity,
                "unknown action \"oss:Frob*\"",
            ),
            (
                doc(r#"{"Effect":"Allow","Action":"s3:GetObject","Resource":"*"}"#),
                PolicyKind::Identity,
                "unknown service \"s3\"",
            ),
            (
                doc(r#"{"Effect":"Allow","Action":"GetTable","Resource":"*"}"#),
                PolicyKind::Identity,
                "is not an action",
            ),
            (
                doc(r#"{"Effect":"Allow","Action":[],"Resource":"*"}"#),
                PolicyKind::Identity,
                "must not be an empty list",
            ),
            (
                doc(r#"{"Effect":"Allow","Action":[""],"Resource":"*"}"#),
                PolicyKind::Identity,
                "must not be empty",
            ),
            (
                doc(r#"{"Effect":"Allow","Action":[1],"Resource":"*"}"#),
                PolicyKind::Identity,
                "string or a list of strings",
            ),
            (
                doc(r#"{"Effect":"Allow","Action":"oss:GetTable","Resource":"bucket/b"}"#),
                PolicyKind::Identity,
                "Resource: \"bucket/b\" is not a valid resource ARN",
            ),
            (
                doc(
                    r#"{"Effect":"Allow","Action":"oss:GetTable","Resource":"acs:osstables:r:bucket/b"}"#,
                ),
                PolicyKind::Identity,
                "not a valid resource ARN",
            ),
            (
                doc(&format!(r#"{{"Effect":"Allow","Principal":"*",{any}}}"#)),
                PolicyKind::Identity,
                "Principal is not allowed in an identity policy",
            ),
            (
                doc(&format!(r#"{{"Effect":"Allow","NotPrincipal":"*",{any}}}"#)),
                PolicyKind::Session,
                "NotPrincipal is not allowed in a session policy",
            ),
            (
                doc(&format!(r#"{{"Effect":"Allow",{any}}}"#)),
                PolicyKind::Resource,
                "missing Principal",
            ),
            (
                doc(r#"{"Effect":"Allow","Action":"sts:AssumeRole"}"#),
                PolicyKind::Trust,
                "missing Principal",
            ),
            (
                doc(&format!(r#"{{"Effect":"Allow","Principal":"me",{any}}}"#)),
                PolicyKind::Resource,
                "must be \"*\" or an object",
            ),
            (
                doc(&format!(
                    r#"{{"Effect":"Allow","Principal":{{"Service":"x"}},{any}}}"#
                )),
                PolicyKind::Resource,
                "type \"Service\" is not supported",
            ),
            (
                doc(&format!(
                    r#"{{"Effect":"Allow","Principal":{{"AWS":"bob"}},{any}}}"#
                )),
                PolicyKind::Resource,
                "\"bob\" is not",
            ),
            (
                doc(&format!(r#"{{"Effect":"Allow","Principal":{{}},{any}}}"#)),
                PolicyKind::Resource,
                "must be \"*\" or an object",
            ),
            (
                doc(&format!(
                    r#"{{"Effect":"Allow","Condition":{{"Foo":{{"a:b":"c"}}}},{any}}}"#
                )),
                PolicyKind::Identity,
                "Statement[0]: Condition: unknown condition operator \"Foo\"",
            ),
            (
                doc(&format!(
                    r#"{{"Effect":"Deny","Condition":{{"StringEquals":{{"s3tables:Foo":"x"}}}},{any}}}"#
                )),
                PolicyKind::Identity,
                "Statement[0]: Condition: unknown condition key \"s3tables:foo\"",
            ),
            (
                doc(&format!(
                    r#"{{"Effect":"Deny","Principal":"*","Condition":{{"StringEquals":{{"aws:TagKeys":"x"}}}},{any}}}"#
                )),
                PolicyKind::Resource,
                "describes a request's body",
            ),
            (
                doc(&format!(
                    r#"{{"Effect":"Deny","Condition":{{"StringEquals":{{"s3tables:SSEAlgorithm":"AES256"}}}},{any}}}"#
                )),
                PolicyKind::Session,
                "describes a request's body",
            ),
            (
                doc(&format!(
                    r#"{{"Effect":"Deny","Condition":{{"Bool":{{"aws:MultiFactorAuthPresent":"false"}}}},{any}}}"#
                )),
                PolicyKind::Identity,
                "unknown condition key \"aws:multifactorauthpresent\"",
            ),
            (
                doc(
                    r#"{"Effect":"Allow","Principal":"*","Action":"sts:AssumeRole","Condition":{"StringEquals":{"sts:ExternalId":"x"}}}"#,
                ),
                PolicyKind::Trust,
                "unknown condition key \"sts:externalid\"",
            ),
            (
                doc(
                    r#"{"Effect":"Allow","Action":"oss:GetTable","Resource":"acs:osstables:*:*:bucket/${s3tables:bucketName}/*"}"#,
                ),
                PolicyKind::Identity,
                "policy variable ${s3tables:bucketName}: unknown condition key",
            ),
            (
                format!(
                    r#"{{"Statement":[],"Id":"{}"}}"#,
                    "x".repeat(MAX_POLICY_BYTES)
                ),
                PolicyKind::Identity,
                "the limit is 20480",
            ),
        ] {
            let err = Policy::parse(&json, kind).expect_err(&json);
            assert!(
                err.to_string().contains(msg),
                "{json}\n  got: {err}\n  want: {msg}"
            );
        }
    }

    #[test]
    fn resource_facts_say_what_to_fetch() {
        for (json, names, tags) in [
            (
                doc(r#"{"Effect":"Allow","Action":"*","Resource":"*"}"#),
                false,
                false,
            ),
            (
                doc(
                    r#"{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}}"#,
                ),
                false,
                false,
            ),
            (
                doc(
                    r#"{"Effect":"Deny","Action":"*","Resource":"*","Condition":{"StringEquals":{"oss:namespace":"hr"}}}"#,
                ),
                true,
                false,
            ),
            (
                doc(
                    r#"{"Effect":"Allow","Action":"*","Resource":"acs:osstables:*:*:bucket/${S3Tables:TableName}"}"#,
                ),
                true,
                false,
            ),
            (
                doc(
                    r#"{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"Null":{"s3tables:TableBucketTag/x":"false"}}}"#,
                ),
                false,
                true,
            ),
            (
                doc(
                    r#"{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"StringEquals":{"aws:ResourceTag/x":"1","s3tables:tableName":"t"}}}"#,
                ),
                true,
                true,
            ),
        ] {
            let facts = Policy::parse(&json, PolicyKind::Identity)
                .unwrap()
                .resource_facts();
            assert_eq!((facts.names, facts.tags), (names, tags), "{json}");
        }
    }

    #[test]
    fn the_second_statement_is_named_in_the_error() {
        let json = doc(
            r#"{"Effect":"Allow","Action":"*","Resource":"*"},{"Effect":"Allow","Action":"oss:Nope","Resource":"*"}"#,
        );
        let err = Policy::parse(&json, PolicyKind::Identity).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Statement[1]: Action: unknown action \"oss:Nope\""
        );
    }
}

//! Deciding one request, the way AWS IAM does ("Policy evaluation logic", same- and cross-account):
//!
//! 1. an applicable `Deny` in any policy (identity, resource, session) wins;
//! 2. same account: an `Allow` in an identity policy, or in a resource policy that names the caller, suffices;
//!    the account root has every permission on its own account's resources;
//! 3. across accounts: the resource policy must allow the caller's account (or the caller) **and** the caller's
//!    identity policy must allow too, and only for actions the guide marks as cross-account;
//! 4. a session policy narrows: the result of 2/3 must also be allowed by it.
//!
//! A resource policy that names an *account* (its id or root ARN) delegates to that account: its users need their
//! own identity allow as well, except the account root. A statement naming the user or role itself, or `*`, grants
//! directly.

use std::collections::BTreeMap;
use std::net::IpAddr;

use chrono::{DateTime, SecondsFormat, Utc};

use crate::Action;
use crate::arn::{self, PrincipalName};
use crate::document::{Effect, Policy, Statement};
use crate::keys::{self, Key};
use crate::pattern::wildcard_match;

/// Who is asking.
#[derive(Clone, Copy, Debug)]
pub struct Caller<'a> {
    /// The caller's account id.
    pub account_id: &'a str,
    /// `acs:ram::<acct>:root|user/<n>|role/<n>` or the `arn:aws:iam::` form; for an assumed-role session, the
    /// role's ARN.
    pub arn: &'a str,
    /// Whether the caller is the account's root (it then holds every permission on its own account).
    pub is_account_root: bool,
}

/// Request facts that conditions test.
#[derive(Clone, Debug)]
pub struct Context {
    /// `aws:SourceIp`.
    pub source_ip: Option<IpAddr>,
    /// `aws:SecureTransport`.
    pub secure_transport: bool,
    /// `aws:CurrentTime` / `aws:EpochTime`.
    pub current_time: DateTime<Utc>,
    /// `s3tables:namespace`: the namespace of the table acted on, or the one a bucket-level operation names.
    pub namespace: Option<String>,
    /// `s3tables:tableName`: the name of the table acted on (or created).
    pub table_name: Option<String>,
    /// `aws:ResourceTag/<key>`: the tags of the resource acted on (the table's for a table).
    pub resource_tags: BTreeMap<String, String>,
    /// `s3tables:TableBucketTag/<key>`: the tags of the table bucket the resource is or lies in.
    pub bucket_tags: BTreeMap<String, String>,
    /// Values of keys Tablebay does not know, looked up case-insensitively. Policies naming such keys are refused
    /// when parsed, so this serves only tests of the condition operators.
    pub extra: BTreeMap<String, Vec<String>>,
}

impl Context {
    /// A context with only the current time set (no source address, not TLS, no resource facts).
    pub fn new(current_time: DateTime<Utc>) -> Context {
        Context {
            source_ip: None,
            secure_transport: false,
            current_time,
            namespace: None,
            table_name: None,
            resource_tags: BTreeMap::new(),
            bucket_tags: BTreeMap::new(),
            extra: BTreeMap::new(),
        }
    }
}

/// One authorization question.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// Who asks.
    pub caller: Caller<'a>,
    /// What for.
    pub action: Action,
    /// On what: the bucket or table ARN (either flavor).
    pub resource_arn: &'a str,
    /// The account that owns the resource.
    pub resource_account: &'a str,
    /// Facts for conditions.
    pub context: &'a Context,
}

/// The policies that bear on a request.
#[derive(Clone, Copy, Debug)]
pub struct Policies<'a> {
    /// The caller's identity policies (user's or role's).
    pub identity: &'a [Policy],
    /// The resource policies: the bucket policy and, for table resources, the table policy.
    pub resource: &'a [&'a Policy],
    /// The session policies of temporary credentials: an assumed role's `Policy`, and for vended credentials the
    /// table scope plus the caller's own session policy. Each one narrows: all must allow.
    pub sessions: &'a [Policy],
}

/// The outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Allowed.
    Allow,
    /// Refused by a `Deny` statement (its `Sid`, if it had one, for the audit log).
    ExplicitDeny {
        /// The deciding statement's `Sid`.
        sid: Option<String>,
    },
    /// Refused because nothing allowed it.
    ImplicitDeny,
}

impl Decision {
    /// Whether the request may proceed.
    pub fn is_allowed(&self) -> bool {
        matches!(self, Decision::Allow)
    }
}

/// How a resource-policy statement's principal relates to the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum PrincipalMatch {
    No,
    /// Names the caller's account: a delegation to the account's own policies.
    Account,
    /// Names the caller (or `*`, or the account when the caller is its root).
    Direct,
}

/// Decides the request.
pub fn evaluate(request: &Request, policies: &Policies) -> Decision {
    let lookup = |key: &str| context_value(request, key);
    let applies = |s: &Statement| statement_applies(s, request, &lookup);
    let caller = PrincipalName::parse(request.caller.arn);

    // 1. Explicit deny anywhere.
    let identity_statements = || policies.identity.iter().flat_map(|p| p.statements.iter());
    let session_statements = || policies.sessions.iter().flat_map(|p| p.statements.iter());
    let resource_statements = || policies.resource.iter().flat_map(|p| p.statements.iter());
    let denied = identity_statements()
        .chain(session_statements())
        .find(|s| s.effect == Effect::Deny && applies(s))
        .or_else(|| {
            resource_statements().find(|s| {
                s.effect == Effect::Deny
                    && principal_match(s, request, caller.as_ref()) != PrincipalMatch::No
                    && applies(s)
            })
        });
    if let Some(statement) = denied {
        return Decision::ExplicitDeny {
            sid: statement.sid.clone(),
        };
    }

    // 2./3. Allows.
    let same_account = request.caller.account_id == request.resource_account;
    // An account root's implicit allow is its side of either case: its own resources, and its half of a
    // cross-account grant.
    let identity_allows = request.caller.is_account_root
        || identity_statements().any(|s| s.effect == Effect::Allow && applies(s));
    let resource_grant = resource_statements()
        .filter(|s| s.effect == Effect::Allow && applies(s))
        .map(|s| principal_match(s, request, caller.as_ref()))
        .max()
        .unwrap_or(PrincipalMatch::No);
    let allowed = if same_account {
        identity_allows || resource_grant == PrincipalMatch::Direct
    } else {
        request.action.cross_account() && resource_grant != PrincipalMatch::No && identity_allows
    };

    // 4. A session policy narrows whatever was allowed.
    if allowed && sessions_allow(policies.sessions, &applies) {
        Decision::Allow
    } else {
        Decision::ImplicitDeny
    }
}

/// Whether every session policy has an `Allow` that applies (true when there are none).
fn sessions_allow(sessions: &[Policy], applies: &dyn Fn(&Statement) -> bool) -> bool {
    sessions.iter().all(|p| {
        p.statements
            .iter()
            .any(|s| s.effect == Effect::Allow && applies(s))
    })
}

/// Decides `sts:AssumeRole` on a role (`request.resource_arn` is the role's ARN, `request.action` is
/// [`Action::AssumeRole`]).
///
/// Stricter than a resource policy: the role's trust policy must allow the caller (naming it, its account or
/// `"*"`) **and** the caller's identity policy must allow `sts:AssumeRole` on the role, within an account as
/// across accounts (an account root, which has no identity policies, holds that side implicitly). The caller's
/// session policies narrow, and a `Deny` in any of them (or in the trust policy, for a principal it names) wins.
/// AWS lets a same-account principal that the trust policy names by ARN in without an identity allow; Tablebay
/// asks for both, so that no role can be assumed by someone whose own policies do not say so.
pub fn evaluate_assume_role(request: &Request, trust: &Policy, policies: &Policies) -> Decision {
    let lookup = |key: &str| context_value(request, key);
    let applies = |s: &Statement| statement_applies(s, request, &lookup);
    let caller = PrincipalName::parse(request.caller.arn);
    let names_caller =
        |s: &Statement| principal_match(s, request, caller.as_ref()) != PrincipalMatch::No;
    let own = || {
        policies
            .identity
            .iter()
            .chain(policies.sessions)
            .flat_map(|p| p.statements.iter())
    };
    let denied = own()
        .find(|s| s.effect == Effect::Deny && applies(s))
        .or_else(|| {
            trust
                .statements
                .iter()
                .find(|s| s.effect == Effect::Deny && names_caller(s) && applies(s))
        });
    if let Some(statement) = denied {
        return Decision::ExplicitDeny {
            sid: statement.sid.clone(),
        };
    }
    let trusted = trust
        .statements
        .iter()
        .any(|s| s.effect == Effect::Allow && names_caller(s) && applies(s));
    let identity_allows = request.caller.is_account_root
        || policies
            .identity
            .iter()
            .flat_map(|p| p.statements.iter())
            .any(|s| s.effect == Effect::Allow && applies(s));
    if trusted && identity_allows && sessions_allow(policies.sessions, &applies) {
        Decision::Allow
    } else {
        Decision::ImplicitDeny
    }
}

/// Whether a statement's action, resource and condition cover the request (principals are checked apart).
fn statement_applies(
    s: &Statement,
    request: &Request,
    lookup: &dyn Fn(&str) -> Option<Vec<String>>,
) -> bool {
    let action_hit = s.action.items.iter().any(|p| p.matches(request.action));
    if action_hit == s.action.negated {
        return false;
    }
    if let Some(resource) = &s.resource {
        let forms = arn::renderings(request.resource_arn);
        let hit = resource.items.iter().any(|pattern| {
            let pattern = substitute_variables(pattern, lookup);
            pattern.is_some_and(|p| forms.iter().any(|f| wildcard_match(&p, f, false)))
        });
        if hit == resource.negated {
            return false;
        }
    }
    s.condition.holds(lookup)
}

/// How a resource-policy statement's `Principal` / `NotPrincipal` relates to the caller.
fn principal_match(
    s: &Statement,
    request: &Request,
    caller: Option<&PrincipalName>,
) -> PrincipalMatch {
    let Some(principal) = &s.principal else {
        return PrincipalMatch::No;
    };
    let best = principal
        .items
        .iter()
        .map(|named| match named {
            PrincipalName::Anyone => PrincipalMatch::Direct,
            PrincipalName::Account(account) if account == request.caller.account_id => {
                if request.caller.is_account_root {
                    PrincipalMatch::Direct
                } else {
                    PrincipalMatch::Account
                }
            }
            PrincipalName::Account(_) => PrincipalMatch::No,
            identity @ PrincipalName::Identity { .. } if Some(identity) == caller => {
                PrincipalMatch::Direct
            }
            PrincipalName::Identity { .. } => PrincipalMatch::No,
        })
        .max()
        .unwrap_or(PrincipalMatch::No);
    if principal.negated {
        // NotPrincipal: everyone but those named, granted directly.
        if best == PrincipalMatch::No {
            PrincipalMatch::Direct
        } else {
            PrincipalMatch::No
        }
    } else {
        best
    }
}

/// Replaces `${key}` policy variables (IAM's `${aws:username}`, …) with the context's single value; `${*}`, `${?}`
/// and `${$}` stand for the literal characters. `None` when a variable has no value: IAM then treats the entry
/// as not matching.
fn substitute_variables(
    pattern: &str,
    lookup: &dyn Fn(&str) -> Option<Vec<String>>,
) -> Option<String> {
    if !pattern.contains("${") {
        return Some(pattern.to_string());
    }
    let mut out = String::with_capacity(pattern.len());
    let mut rest = pattern;
    while let Some(start) = rest.find("${") {
        let (head, tail) = rest.split_at(start);
        out.push_str(head);
        let Some(end) = tail.find('}') else {
            out.push_str(tail);
            return Some(out);
        };
        let name = tail.get(2..end).unwrap_or_default();
        match name {
            // Literal characters; a substituted value is matched literally in IAM too, but values with `*`/`?`
            // are rare enough in user and account names that we do not escape them.
            "*" | "?" | "$" => out.push_str(name),
            _ => {
                let values = lookup(&name.to_ascii_lowercase())?;
                match values.as_slice() {
                    [one] => out.push_str(one),
                    _ => return None,
                }
            }
        }
        rest = tail.get(end + 1..).unwrap_or_default();
    }
    out.push_str(rest);
    Some(out)
}

/// The values of a condition key (lower-cased) for this request.
fn context_value(request: &Request, key: &str) -> Option<Vec<String>> {
    let caller = &request.caller;
    let context = request.context;
    let one = |s: String| Some(vec![s]);
    let tag = |tags: &BTreeMap<String, String>, name: &str| {
        // Key names are case-insensitive in conditions, tag keys included.
        tags.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| vec![v.clone()])
    };
    let Ok(known) = keys::parse(key) else {
        return context
            .extra
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v.clone());
    };
    match known {
        Key::SecureTransport => one(context.secure_transport.to_string()),
        Key::SourceIp => context.source_ip.map(|ip| vec![ip.to_string()]),
        Key::CurrentTime => one(context
            .current_time
            .to_rfc3339_opts(SecondsFormat::Secs, true)),
        Key::EpochTime => one(context.current_time.timestamp().to_string()),
        Key::PrincipalAccount => one(caller.account_id.to_string()),
        Key::PrincipalArn => one(caller.arn.to_string()),
        Key::ResourceAccount => one(request.resource_account.to_string()),
        Key::PrincipalType => one(principal_type(caller).to_string()),
        Key::Username => user_name(caller.arn).map(|n| vec![n.to_string()]),
        Key::ResourceTag(name) => tag(&context.resource_tags, name),
        Key::TableBucketTag(name) => tag(&context.bucket_tags, name),
        Key::Namespace => context.namespace.clone().map(|n| vec![n]),
        Key::TableName => context.table_name.clone().map(|n| vec![n]),
    }
}

fn principal_type(caller: &Caller) -> &'static str {
    if caller.is_account_root {
        "Account"
    } else if caller.arn.contains(":role/") || caller.arn.contains(":assumed-role/") {
        "AssumedRole"
    } else {
        "User"
    }
}

/// `aws:username` exists only for users (IAM leaves it unset for roles and roots).
fn user_name(arn: &str) -> Option<&str> {
    let (_, resource) = arn.rsplit_once(':')?;
    let name = resource.strip_prefix("user/")?;
    Some(name.rsplit('/').next().unwrap_or(name))
}

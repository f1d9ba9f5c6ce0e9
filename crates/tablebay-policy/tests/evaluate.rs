//! Table-driven tests of `evaluate`: every action under every rule (identity allow, no policy, explicit deny in a
//! bucket policy, cross-account grants, account roots, sessions), then IAM's documented edge cases.
// Helpers outside #[test] functions build fixtures; a bad fixture should fail the test loudly.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use chrono::{TimeZone, Utc};
use tablebay_policy::*;

const OWNER: &str = "111122223333";
const OTHER: &str = "444455556666";
const BUCKET: &str = "acs:osstables:cn-hangzhou:111122223333:bucket/sales";
const TABLE: &str = "acs:osstables:cn-hangzhou:111122223333:bucket/sales/table/01900000-0000-7000-8000-000000000001";
const ANA: &str = "acs:ram::111122223333:user/ana";
const BOB: &str = "arn:aws:iam::444455556666:user/bob";
const ROLE: &str = "acs:ram::111122223333:role/etl";

/// Actions on a table resource; the rest act on the bucket.
fn resource_of(action: Action) -> &'static str {
    let bucket_level = [
        Action::CreateTableBucket,
        Action::GetTableBucket,
        Action::ListTableBuckets,
        Action::CreateNamespace,
        Action::GetNamespace,
        Action::ListNamespaces,
        Action::DeleteNamespace,
        Action::DeleteTableBucket,
        Action::PutTableBucketPolicy,
        Action::GetTableBucketPolicy,
        Action::DeleteTableBucketPolicy,
        Action::GetTableBucketMaintenanceConfiguration,
        Action::PutTableBucketMaintenanceConfiguration,
        Action::PutTableBucketEncryption,
        Action::GetTableBucketEncryption,
        Action::DeleteTableBucketEncryption,
        Action::CreateTable,
        Action::ListTables,
    ];
    if bucket_level.contains(&action) {
        BUCKET
    } else {
        TABLE
    }
}

fn identity(json: &str) -> Policy {
    Policy::parse(json, PolicyKind::Identity).unwrap_or_else(|e| panic!("{json}: {e}"))
}

fn resource(json: &str) -> Policy {
    Policy::parse(json, PolicyKind::Resource).unwrap_or_else(|e| panic!("{json}: {e}"))
}

fn allow(action: &str, resource: &str) -> String {
    format!(
        r#"{{"Version":"2012-10-17","Statement":[{{"Effect":"Allow","Action":"{action}","Resource":"{resource}"}}]}}"#
    )
}

fn grant(effect: &str, principal: &str, action: &str, resource: &str) -> String {
    format!(
        r#"{{"Version":"2012-10-17","Statement":[{{"Sid":"s-{effect}","Effect":"{effect}","Principal":{{"AWS":"{principal}"}},"Action":"{action}","Resource":"{resource}"}}]}}"#
    )
}

fn ctx() -> Context {
    Context::new(Utc.with_ymd_and_hms(2026, 6, 1, 12, 0, 0).unwrap())
}

struct Case<'a> {
    caller: Caller<'a>,
    action: Action,
    resource: &'a str,
    identity: Vec<Policy>,
    resource_policies: Vec<Policy>,
    session: Option<Policy>,
    context: Context,
}

impl<'a> Case<'a> {
    fn new(caller: Caller<'a>, action: Action) -> Self {
        Case {
            caller,
            action,
            resource: resource_of(action),
            identity: vec![],
            resource_policies: vec![],
            session: None,
            context: ctx(),
        }
    }

    fn decide(&self) -> Decision {
        let resource: Vec<&Policy> = self.resource_policies.iter().collect();
        let request = Request {
            caller: self.caller,
            action: self.action,
            resource_arn: self.resource,
            resource_account: OWNER,
            context: &self.context,
        };
        evaluate(
            &request,
            &Policies {
                identity: &self.identity,
                resource: &resource,
                sessions: self.session.as_slice(),
            },
        )
    }
}

fn user(arn: &str) -> Caller<'_> {
    let account = if arn.contains(OWNER) { OWNER } else { OTHER };
    Caller {
        account_id: account,
        arn,
        is_account_root: false,
    }
}

fn root(account: &'static str) -> Caller<'static> {
    let arn = if account == OWNER {
        "acs:ram::111122223333:root"
    } else {
        "arn:aws:iam::444455556666:root"
    };
    Caller {
        account_id: account,
        arn,
        is_account_root: true,
    }
}

#[test]
fn every_action_under_every_rule() {
    for &action in Action::all() {
        let name = action.name();
        let res = resource_of(action);
        let exact = |prefix: &str| format!("{prefix}:{name}");

        // Same account, identity policy allows (each spelling of the service).
        for prefix in ["oss", "s3tables", "osstables"] {
            let mut case = Case::new(user(ANA), action);
            case.identity = vec![identity(&allow(&exact(prefix), res))];
            assert_eq!(
                case.decide(),
                Decision::Allow,
                "{name}: identity allow ({prefix})"
            );
        }

        // Same account, no policy: implicit deny.
        assert_eq!(
            Case::new(user(ANA), action).decide(),
            Decision::ImplicitDeny,
            "{name}: no policy"
        );

        // An identity allow for another action does not leak.
        let mut case = Case::new(user(ANA), action);
        let other = Action::all().iter().find(|a| **a != action).unwrap();
        case.identity = vec![identity(&allow(&other.to_string(), "*"))];
        assert_eq!(
            case.decide(),
            Decision::ImplicitDeny,
            "{name}: allow of {other}"
        );

        // Explicit Deny in the bucket policy despite an identity allow (and despite a resource allow).
        let mut case = Case::new(user(ANA), action);
        case.identity = vec![identity(&allow("oss:*", "*"))];
        case.resource_policies = vec![
            resource(&grant("Allow", ANA, &exact("oss"), "*")),
            resource(&grant("Deny", "*", &exact("oss"), "*")),
        ];
        assert_eq!(
            case.decide(),
            Decision::ExplicitDeny {
                sid: Some("s-Deny".into())
            },
            "{name}: bucket deny"
        );

        // A Deny naming the owner account in a resource policy reaches its users too.
        let mut case = Case::new(user(ANA), action);
        case.identity = vec![identity(&allow("oss:*", "*"))];
        case.resource_policies = vec![resource(&grant("Deny", OWNER, &exact("s3tables"), res))];
        assert!(
            matches!(case.decide(), Decision::ExplicitDeny { .. }),
            "{name}: deny to account"
        );

        // Same account, a resource policy naming the user suffices without an identity policy.
        let mut case = Case::new(user(ANA), action);
        case.resource_policies = vec![resource(&grant("Allow", ANA, &exact("oss"), res))];
        assert_eq!(
            case.decide(),
            Decision::Allow,
            "{name}: resource policy names the user"
        );

        // Same account, a resource policy naming only the account delegates: the user still needs an identity allow.
        let mut case = Case::new(user(ANA), action);
        case.resource_policies = vec![resource(&grant("Allow", OWNER, &exact("oss"), res))];
        assert_eq!(
            case.decide(),
            Decision::ImplicitDeny,
            "{name}: resource policy names the account only"
        );

        // The account root holds every permission on its own resources.
        assert_eq!(
            Case::new(root(OWNER), action).decide(),
            Decision::Allow,
            "{name}: owner root"
        );
        // ...but not against an explicit Deny.
        let mut case = Case::new(root(OWNER), action);
        case.resource_policies = vec![resource(&grant("Deny", "*", "oss:*", "*"))];
        assert!(
            matches!(case.decide(), Decision::ExplicitDeny { .. }),
            "{name}: owner root denied"
        );

        // Across accounts: resource policy (naming the account, or the user) + identity policy, only when the
        // action is cross-account.
        let want_cross = if action.cross_account() {
            Decision::Allow
        } else {
            Decision::ImplicitDeny
        };
        for named in [
            OTHER,
            "acs:ram::444455556666:root",
            BOB,
            "acs:ram::444455556666:user/bob",
            "*",
        ] {
            let mut case = Case::new(user(BOB), action);
            case.identity = vec![identity(&allow(&exact("s3tables"), res))];
            case.resource_policies = vec![resource(&grant("Allow", named, &exact("oss"), res))];
            assert_eq!(
                case.decide(),
                want_cross,
                "{name}: cross-account, bucket policy names {named}"
            );
        }
        // Across accounts, one side alone never suffices.
        let mut case = Case::new(user(BOB), action);
        case.identity = vec![identity(&allow(&exact("oss"), "*"))];
        assert_eq!(
            case.decide(),
            Decision::ImplicitDeny,
            "{name}: cross-account, identity only"
        );
        let mut case = Case::new(user(BOB), action);
        case.resource_policies = vec![resource(&grant("Allow", BOB, &exact("oss"), res))];
        assert_eq!(
            case.decide(),
            Decision::ImplicitDeny,
            "{name}: cross-account, resource only"
        );
        // A resource policy naming a third account does not help.
        let mut case = Case::new(user(BOB), action);
        case.identity = vec![identity(&allow(&exact("oss"), "*"))];
        case.resource_policies = vec![resource(&grant(
            "Allow",
            "777788889999",
            &exact("oss"),
            res,
        ))];
        assert_eq!(
            case.decide(),
            Decision::ImplicitDeny,
            "{name}: third account named"
        );
        // The other account's root needs only the resource policy.
        let mut case = Case::new(root(OTHER), action);
        case.resource_policies = vec![resource(&grant("Allow", OTHER, &exact("oss"), res))];
        assert_eq!(case.decide(), want_cross, "{name}: other root");
        assert_eq!(
            Case::new(root(OTHER), action).decide(),
            Decision::ImplicitDeny,
            "{name}: other root, no policy"
        );

        // A session policy narrows: identity allows everything, the session only this action.
        let role = Caller {
            account_id: OWNER,
            arn: ROLE,
            is_account_root: false,
        };
        let mut case = Case::new(role, action);
        case.identity = vec![identity(&allow("oss:*", "*"))];
        case.session =
            Some(Policy::parse(&allow(&exact("oss"), "*"), PolicyKind::Session).unwrap());
        assert_eq!(case.decide(), Decision::Allow, "{name}: session allows");
        case.session =
            Some(Policy::parse(&allow(&other.to_string(), "*"), PolicyKind::Session).unwrap());
        assert_eq!(
            case.decide(),
            Decision::ImplicitDeny,
            "{name}: session narrows"
        );
        // ...and cannot widen.
        case.identity = vec![];
        case.session = Some(Policy::parse(&allow("oss:*", "*"), PolicyKind::Session).unwrap());
        assert_eq!(
            case.decide(),
            Decision::ImplicitDeny,
            "{name}: session cannot widen"
        );
    }
}

#[test]
fn table_policy_deny_beats_bucket_policy_allow() {
    let mut case = Case::new(user(ANA), Action::GetTableData);
    case.resource_policies = vec![
        resource(&grant("Allow", ANA, "oss:*", "*")),
        resource(&grant("Deny", ANA, "oss:GetTableData", TABLE)),
    ];
    assert!(matches!(case.decide(), Decision::ExplicitDeny { .. }));
    case.action = Action::GetTable;
    assert_eq!(case.decide(), Decision::Allow);
}

/// One identity policy on ana, then (action, resource, context tweak, expected allowed).
#[allow(clippy::type_complexity)]
fn edge(policy: &str, checks: &[(Action, &str, &dyn Fn(&mut Context), bool)]) {
    let policy = identity(policy);
    for (action, res, tweak, want) in checks {
        let mut case = Case::new(user(ANA), *action);
        case.resource = res;
        case.identity = vec![policy.clone()];
        tweak(&mut case.context);
        assert_eq!(
            case.decide().is_allowed(),
            *want,
            "{} on {res} under {}",
            action,
            policy.source()
        );
    }
}

fn same(_: &mut Context) {}

#[test]
fn not_action_with_allow_allows_everything_else() {
    edge(
        r#"{"Version":"2012-10-17","Statement":{"Effect":"Allow","NotAction":["oss:Delete*","oss:Put*Policy"],"Resource":"*"}}"#,
        &[
            (Action::GetTable, TABLE, &same, true),
            (Action::CreateNamespace, BUCKET, &same, true),
            (Action::DeleteTable, TABLE, &same, false),
            (Action::DeleteTableBucketPolicy, BUCKET, &same, false),
            (Action::PutTablePolicy, TABLE, &same, false),
            (Action::PutTableData, TABLE, &same, true),
        ],
    );
}

#[test]
fn not_resource() {
    edge(
        &format!(
            r#"{{"Version":"2012-10-17","Statement":{{"Effect":"Allow","Action":"oss:*","NotResource":"{BUCKET}/table/*"}}}}"#
        ),
        &[
            (Action::GetTableBucket, BUCKET, &same, true),
            (Action::GetTable, TABLE, &same, false),
        ],
    );
}

#[test]
fn wildcards_in_the_middle_and_case_rules() {
    edge(
        r#"{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"OSS:get*DATA","Resource":"acs:osstables:*:111122223333:bucket/s?les/table/*"}}"#,
        &[
            (Action::GetTableData, TABLE, &same, true),
            (Action::GetTable, TABLE, &same, false),
            (
                Action::GetTableData,
                "acs:osstables:cn-hangzhou:111122223333:bucket/sales/table/x",
                &same,
                true,
            ),
            // ARNs are case-sensitive.
            (
                Action::GetTableData,
                "acs:osstables:cn-hangzhou:111122223333:bucket/Sales/table/x",
                &same,
                false,
            ),
            (
                Action::GetTableData,
                "acs:osstables:cn-hangzhou:111122223333:bucket/sa/les/table/x",
                &same,
                false,
            ),
            // The AWS flavor of the same table.
            (
                Action::GetTableData,
                "arn:aws:s3tables:cn-hangzhou:111122223333:bucket/sales/table/x",
                &same,
                true,
            ),
        ],
    );
    // A policy in the AWS flavor matches a resource named in the OSS flavor.
    edge(
        r#"{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"s3tables:GetTableBucket","Resource":"arn:aws:s3tables:*:*:bucket/sales"}}"#,
        &[
            (Action::GetTableBucket, BUCKET, &same, true),
            (Action::GetTableBucket, TABLE, &same, false),
        ],
    );
}

#[test]
fn conditions_on_request_facts() {
    let tls = |c: &mut Context| c.secure_transport = true;
    let v4 = |c: &mut Context| c.source_ip = Some("203.0.113.9".parse().unwrap());
    let v6 = |c: &mut Context| c.source_ip = Some("2001:db8::9".parse().unwrap());
    let later =
        |c: &mut Context| c.current_time = Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap();
    let sales = |c: &mut Context| c.namespace = Some("sales".to_string());
    let orders = |c: &mut Context| {
        c.namespace = Some("sales".to_string());
        c.table_name = Some("orders".to_string());
    };
    let tagged = |c: &mut Context| {
        c.resource_tags = BTreeMap::from([("Env".to_string(), "prod".to_string())]);
        c.bucket_tags = BTreeMap::from([("team".to_string(), "data".to_string())]);
    };
    let cond = |c: &str| {
        format!(
            r#"{{"Version":"2012-10-17","Statement":{{"Effect":"Allow","Action":"oss:*","Resource":"*","Condition":{c}}}}}"#
        )
    };
    let g = Action::GetTable;
    edge(
        &cond(r#"{"Bool":{"aws:SecureTransport":"true"}}"#),
        &[(g, TABLE, &same, false), (g, TABLE, &tls, true)],
    );
    edge(
        &cond(r#"{"IpAddress":{"aws:SourceIp":["203.0.113.0/24","2001:db8::/48"]}}"#),
        &[
            (g, TABLE, &same, false),
            (g, TABLE, &v4, true),
            (g, TABLE, &v6, true),
        ],
    );
    edge(
        &cond(r#"{"NotIpAddress":{"aws:SourceIp":"203.0.113.0/24"}}"#),
        &[(g, TABLE, &v4, false), (g, TABLE, &v6, true)],
    );
    edge(
        &cond(r#"{"DateLessThan":{"aws:CurrentTime":"2026-12-31T23:59:59Z"}}"#),
        &[(g, TABLE, &same, true), (g, TABLE, &later, false)],
    );
    edge(
        &cond(r#"{"StringEqualsIfExists":{"s3tables:namespace":"sales"}}"#),
        &[(g, TABLE, &same, true), (g, TABLE, &sales, true)],
    );
    edge(
        &cond(r#"{"StringEquals":{"S3TABLES:NAMESPACE":"sales"}}"#),
        &[(g, TABLE, &same, false), (g, TABLE, &sales, true)],
    );
    edge(
        &cond(r#"{"ForAllValues:StringEquals":{"s3tables:namespace":["hr"]}}"#),
        &[(g, TABLE, &same, true), (g, TABLE, &sales, false)],
    );
    // The table service's keys under each of its prefixes.
    edge(
        &cond(r#"{"StringEquals":{"oss:namespace":"sales","osstables:tableName":"orders"}}"#),
        &[(g, TABLE, &sales, false), (g, TABLE, &orders, true)],
    );
    edge(
        &cond(r#"{"StringLike":{"s3tables:tablename":"ord*"}}"#),
        &[(g, TABLE, &same, false), (g, TABLE, &orders, true)],
    );
    // Tags: the resource's and its bucket's; tag keys compare case-insensitively, values exactly.
    edge(
        &cond(
            r#"{"StringEquals":{"aws:ResourceTag/env":"prod","s3tables:TableBucketTag/Team":"data"}}"#,
        ),
        &[(g, TABLE, &same, false), (g, TABLE, &tagged, true)],
    );
    edge(
        &cond(r#"{"StringEquals":{"aws:ResourceTag/env":"Prod"}}"#),
        &[(g, TABLE, &tagged, false)],
    );
    // RAM's spellings of the global keys.
    edge(
        &cond(
            r#"{"IpAddress":{"acs:SourceIp":"203.0.113.0/24"},"Bool":{"acs:SecureTransport":"false"}}"#,
        ),
        &[(g, TABLE, &same, false), (g, TABLE, &v4, true)],
    );
    // A policy variable naming a table-service key.
    edge(
        r#"{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"oss:*","Resource":"acs:osstables:*:*:bucket/${s3tables:namespace}/*"}}"#,
        &[
            (
                g,
                "acs:osstables:r:111122223333:bucket/sales/table/1",
                &sales,
                true,
            ),
            (
                g,
                "acs:osstables:r:111122223333:bucket/hr/table/1",
                &sales,
                false,
            ),
            (
                g,
                "acs:osstables:r:111122223333:bucket/sales/table/1",
                &same,
                false,
            ),
        ],
    );
    edge(
        &cond(r#"{"StringEquals":{"aws:PrincipalAccount":"111122223333","aws:username":"ana"}}"#),
        &[(g, TABLE, &same, true)],
    );
    edge(
        &cond(r#"{"ArnLike":{"aws:PrincipalArn":"arn:aws:iam::*:user/a*"}}"#),
        &[(g, TABLE, &same, true)],
    );
    // A Deny whose condition does not hold does not deny.
    let deny_plain = identity(
        r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"oss:*","Resource":"*"},
            {"Sid":"tls-only","Effect":"Deny","Action":"oss:*","Resource":"*","Condition":{"Bool":{"aws:SecureTransport":"false"}}}]}"#,
    );
    let mut case = Case::new(user(ANA), g);
    case.identity = vec![deny_plain];
    assert_eq!(
        case.decide(),
        Decision::ExplicitDeny {
            sid: Some("tls-only".into())
        }
    );
    case.context.secure_transport = true;
    assert_eq!(case.decide(), Decision::Allow);
}

#[test]
fn policy_variables() {
    let policy = r#"{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"oss:*","Resource":"acs:osstables:*:*:bucket/home-${aws:username}/*"}}"#;
    edge(
        policy,
        &[
            (
                Action::GetTable,
                "acs:osstables:r:111122223333:bucket/home-ana/table/1",
                &same,
                true,
            ),
            (
                Action::GetTable,
                "acs:osstables:r:111122223333:bucket/home-bob/table/1",
                &same,
                false,
            ),
        ],
    );
    // A role has no aws:username: the entry matches nothing.
    let mut case = Case::new(
        Caller {
            account_id: OWNER,
            arn: ROLE,
            is_account_root: false,
        },
        Action::GetTable,
    );
    case.resource = "acs:osstables:r:111122223333:bucket/home-/table/1";
    case.identity = vec![identity(policy)];
    assert_eq!(case.decide(), Decision::ImplicitDeny);
}

#[test]
fn not_principal_in_a_resource_policy() {
    let deny_all_but_ana = resource(&format!(
        r#"{{"Version":"2012-10-17","Statement":{{"Effect":"Deny","NotPrincipal":{{"RAM":"{ANA}"}},"Action":"oss:*","Resource":"*"}}}}"#
    ));
    let everything = identity(&allow("oss:*", "*"));
    let mut case = Case::new(user(ANA), Action::GetTable);
    case.identity = vec![everything.clone()];
    case.resource_policies = vec![deny_all_but_ana.clone()];
    assert_eq!(case.decide(), Decision::Allow);
    let mut case = Case::new(
        Caller {
            account_id: OWNER,
            arn: ROLE,
            is_account_root: false,
        },
        Action::GetTable,
    );
    case.identity = vec![everything];
    case.resource_policies = vec![deny_all_but_ana];
    assert!(matches!(case.decide(), Decision::ExplicitDeny { .. }));
}

#[test]
fn trust_policies_name_who_may_assume() {
    let trust_ana = Policy::parse(
        r#"{"Version":"2012-10-17","Statement":{"Effect":"Allow","Principal":{"AWS":"acs:ram::111122223333:user/ana"},"Action":"sts:AssumeRole"}}"#,
        PolicyKind::Trust,
    )
    .unwrap();
    let trust_account = Policy::parse(
        r#"{"Version":"2012-10-17","Statement":{"Effect":"Allow","Principal":{"AWS":"111122223333"},"Action":"sts:AssumeRole"}}"#,
        PolicyKind::Trust,
    )
    .unwrap();
    let trust_bob = Policy::parse(
        &format!(r#"{{"Statement":{{"Effect":"Allow","Principal":{{"AWS":"{BOB}"}},"Action":"sts:AssumeRole"}}}}"#),
        PolicyKind::Trust,
    )
    .unwrap();
    let trust_deny_eve = Policy::parse(
        r#"{"Statement":[{"Effect":"Allow","Principal":{"AWS":"111122223333"},"Action":"sts:AssumeRole"},
            {"Sid":"no-eve","Effect":"Deny","Principal":{"AWS":"acs:ram::111122223333:user/eve"},"Action":"sts:AssumeRole"}]}"#,
        PolicyKind::Trust,
    )
    .unwrap();
    let ctx = ctx();
    let decide = |caller: Caller, trust: &Policy, identity: &[Policy], sessions: &[Policy]| {
        evaluate_assume_role(
            &Request {
                caller,
                action: Action::AssumeRole,
                resource_arn: ROLE,
                resource_account: OWNER,
                context: &ctx,
            },
            trust,
            &Policies {
                identity,
                resource: &[],
                sessions,
            },
        )
    };
    let eve = Caller {
        account_id: OWNER,
        arn: "acs:ram::111122223333:user/eve",
        is_account_root: false,
    };
    let may_assume_any = identity(&allow("sts:AssumeRole", "*"));
    let may_assume_role = identity(&allow(
        "sts:AssumeRole",
        "arn:aws:iam::111122223333:role/etl",
    ));
    let may_assume_other = identity(&allow("sts:AssumeRole", "acs:ram::111122223333:role/other"));
    let deny_assume = identity(
        r#"{"Statement":{"Sid":"never","Effect":"Deny","Action":"sts:AssumeRole","Resource":"*"}}"#,
    );
    let session_other = Policy::parse(&allow("oss:GetTable", "*"), PolicyKind::Session).unwrap();
    let session_assume = Policy::parse(&allow("sts:*", "*"), PolicyKind::Session).unwrap();
    let no = Decision::ImplicitDeny;
    for (what, caller, trust, ids, sessions, want) in [
        // The finding: a same-account user allowed sts:AssumeRole on * whom the trust policy does not name.
        (
            "unnamed, identity allows",
            eve,
            &trust_ana,
            vec![may_assume_any.clone()],
            vec![],
            no.clone(),
        ),
        // Named, and its own policy allows: yes (either flavor of the role ARN).
        (
            "named, identity allows",
            user(ANA),
            &trust_ana,
            vec![may_assume_any.clone()],
            vec![],
            Decision::Allow,
        ),
        (
            "named, identity allows the role",
            user(ANA),
            &trust_ana,
            vec![may_assume_role.clone()],
            vec![],
            Decision::Allow,
        ),
        // Named but its own policy says nothing (or names another role): both sides must allow.
        (
            "named, no identity allow",
            user(ANA),
            &trust_ana,
            vec![],
            vec![],
            no.clone(),
        ),
        (
            "named, identity names another role",
            user(ANA),
            &trust_ana,
            vec![may_assume_other],
            vec![],
            no.clone(),
        ),
        // A trust policy naming the account delegates to the account's identity policies.
        (
            "account trusted, identity allows",
            eve,
            &trust_account,
            vec![may_assume_any.clone()],
            vec![],
            Decision::Allow,
        ),
        (
            "account trusted, no identity allow",
            eve,
            &trust_account,
            vec![],
            vec![],
            no.clone(),
        ),
        // The account root has no identity policies: the trust policy alone decides for it.
        (
            "root, account trusted",
            root(OWNER),
            &trust_account,
            vec![],
            vec![],
            Decision::Allow,
        ),
        (
            "root, only ana trusted",
            root(OWNER),
            &trust_ana,
            vec![],
            vec![],
            no.clone(),
        ),
        // Denies win, in the identity policy or in the trust policy.
        (
            "identity deny",
            eve,
            &trust_account,
            vec![may_assume_any.clone(), deny_assume],
            vec![],
            Decision::ExplicitDeny {
                sid: Some("never".into()),
            },
        ),
        (
            "trust deny",
            eve,
            &trust_deny_eve,
            vec![may_assume_any.clone()],
            vec![],
            Decision::ExplicitDeny {
                sid: Some("no-eve".into()),
            },
        ),
        (
            "trust deny for another",
            user(ANA),
            &trust_deny_eve,
            vec![may_assume_any.clone()],
            vec![],
            Decision::Allow,
        ),
        // A caller's session policy narrows.
        (
            "session without sts",
            user(ANA),
            &trust_ana,
            vec![may_assume_any.clone()],
            vec![session_other],
            no.clone(),
        ),
        (
            "session with sts",
            user(ANA),
            &trust_ana,
            vec![may_assume_any.clone()],
            vec![session_assume],
            Decision::Allow,
        ),
        // Across accounts: named, plus his own identity allow.
        (
            "other account, no identity allow",
            user(BOB),
            &trust_bob,
            vec![],
            vec![],
            no.clone(),
        ),
        (
            "other account, identity allows",
            user(BOB),
            &trust_bob,
            vec![may_assume_any.clone()],
            vec![],
            Decision::Allow,
        ),
        (
            "other account root, user trusted",
            root(OTHER),
            &trust_bob,
            vec![],
            vec![],
            no.clone(),
        ),
    ] {
        assert_eq!(decide(caller, trust, &ids, &sessions), want, "{what}");
    }
}

#[test]
fn iceberg_operation_map_drives_requests() {
    // A user holding exactly an operation's actions may perform every one of them; without one, that one fails.
    for &op in IcebergOperation::all() {
        let needed = iceberg_operation_actions(op);
        let list: Vec<String> = needed.iter().map(|a| format!("\"{a}\"")).collect();
        let policy = identity(&format!(
            r#"{{"Version":"2012-10-17","Statement":{{"Effect":"Allow","Action":[{}],"Resource":"*"}}}}"#,
            list.join(",")
        ));
        for &action in needed {
            let mut case = Case::new(user(ANA), action);
            case.identity = vec![policy.clone()];
            assert_eq!(case.decide(), Decision::Allow, "{op:?} {action}");
        }
    }
}

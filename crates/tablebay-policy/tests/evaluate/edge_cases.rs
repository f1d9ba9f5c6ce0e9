//! IAM's documented edge cases: NotAction, NotResource, wildcards and case, conditions, policy variables,
//! NotPrincipal.

use super::*;

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

//! Table-driven tests of `evaluate`: every action under every rule (identity allow, no policy, explicit deny in a
//! bucket policy, cross-account grants, account roots, sessions), then IAM's documented edge cases.
//!
//! This file holds the fixtures; `rules.rs`, `edge_cases.rs` and `trust.rs` the tests.
// Helpers outside #[test] functions build fixtures; a bad fixture should fail the test loudly.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use chrono::{TimeZone, Utc};
use tablebay_policy::*;

mod edge_cases;
mod rules;
mod trust;

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

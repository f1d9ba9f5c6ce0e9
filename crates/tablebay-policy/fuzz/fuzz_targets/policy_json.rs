//! Fuzzes `Policy::parse` for every policy kind and, when a document parses, `evaluate` with it as identity,
//! resource and session policy at once (and `evaluate_assume_role` with it as the trust policy too). The first input
//! byte picks the request; the rest is the document.
#![no_main]

use chrono::{TimeZone, Utc};
use libfuzzer_sys::fuzz_target;
use tablebay_policy::{
    Action, Caller, Context, Policies, Policy, PolicyKind, Request, evaluate, evaluate_assume_role,
};

const CALLERS: &[(&str, &str, bool)] = &[
    ("111122223333", "acs:ram::111122223333:user/ana", false),
    ("111122223333", "arn:aws:iam::111122223333:root", true),
    ("444455556666", "acs:ram::444455556666:role/etl", false),
];
const RESOURCES: &[&str] = &[
    "acs:osstables:cn-hangzhou:111122223333:bucket/sales/table/0190",
    "arn:aws:s3tables:us-east-1:111122223333:bucket/sales",
    "acs:ram::111122223333:role/etl",
];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let Ok(document) = std::str::from_utf8(rest) else {
        return;
    };
    let (account_id, arn, is_account_root) = CALLERS[usize::from(selector) % CALLERS.len()];
    let actions = Action::every();
    let action = actions[usize::from(selector / 3) % actions.len()];
    let mut context = Context::new(Utc.timestamp_opt(1_780_000_000, 0).unwrap());
    context.secure_transport = selector & 0x80 != 0;
    context.source_ip = Some(if selector & 0x40 != 0 {
        "10.1.2.3".parse().unwrap()
    } else {
        "2001:db8::7".parse().unwrap()
    });
    context.namespace = Some("a".into());
    context.table_name = Some("t".into());
    context.resource_tags.insert("env".into(), "prod".into());
    for kind in [
        PolicyKind::Identity,
        PolicyKind::Resource,
        PolicyKind::Session,
        PolicyKind::Trust,
    ] {
        let Ok(policy) = Policy::parse(document, kind) else {
            continue;
        };
        assert_eq!(policy.source(), document);
        for resource_arn in RESOURCES {
            let request = Request {
                caller: Caller {
                    account_id,
                    arn,
                    is_account_root,
                },
                action,
                resource_arn,
                resource_account: "111122223333",
                context: &context,
            };
            let policies = Policies {
                identity: std::slice::from_ref(&policy),
                resource: &[&policy],
                sessions: std::slice::from_ref(&policy),
            };
            let _ = evaluate(&request, &policies);
            let _ = evaluate_assume_role(&request, &policy, &policies);
            let _ = policy.resource_facts();
        }
    }
});

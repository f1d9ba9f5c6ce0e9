//! A deterministic randomized test, so that CI on stable exercises what the cargo-fuzz target (`fuzz/`) does:
//! mutated and generated documents never make `Policy::parse` or `evaluate` panic, and a parsed policy keeps its
//! source. The seed is fixed; a failure prints the document to add as a regression case.
#![allow(
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing
)]

use std::collections::BTreeMap;

use chrono::{TimeZone, Utc};
use tablebay_policy::*;

/// xorshift64*: tiny, seeded, and good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const SEEDS: &[&str] = &[
    r#"{"Version":"2012-10-17","Statement":[{"Sid":"a","Effect":"Allow","Action":["oss:GetTable","s3tables:Get*"],"Resource":"acs:osstables:*:111122223333:bucket/b/*"}]}"#,
    r#"{"Version":"1","Statement":{"Effect":"Deny","NotAction":"oss:Delete*","NotResource":["arn:aws:s3tables:us-east-1:111122223333:bucket/x"],"Condition":{"Bool":{"aws:SecureTransport":"false"}}}}"#,
    r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":["111122223333","arn:aws:iam::444455556666:user/bob"]},"Action":"*","Resource":"*","Condition":{"IpAddress":{"aws:SourceIp":["10.0.0.0/8","2001:db8::/32"]},"DateLessThan":{"aws:CurrentTime":"2027-01-01T00:00:00Z"}}}]}"#,
    r#"{"Statement":[{"Effect":"Allow","NotPrincipal":{"RAM":"acs:ram::111122223333:root"},"Action":"sts:AssumeRole","Condition":{"ForAllValues:StringLike":{"s3tables:namespace":["a*"]},"NumericLessThanEquals":{"aws:EpochTime":1780000000},"Null":{"aws:username":"true"}}}]}"#,
    r#"{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"oss:*","Resource":"acs:osstables:*:*:bucket/home-${aws:username}/*","Condition":{"StringEqualsIfExists":{"s3tables:namespace":["a","b"]},"ArnLike":{"aws:PrincipalArn":"acs:ram::*:user/*"}}}}"#,
];

/// Fragments that steer mutations toward the grammar's corners.
const FRAGMENTS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "*",
    "?",
    "${",
    "${aws:username}",
    "\\u0000",
    "\\ud800",
    "null",
    "true",
    "1e999",
    "-0",
    "\"Allow\"",
    "\"Deny\"",
    "\"Principal\":\"*\",",
    "\"NotAction\":\"oss:*\",",
    "\"Resource\":[],",
    "\"Condition\":{},",
    "\"ForAnyValue:StringLike\":{\"k:k\":[]}",
    "\"IpAddress\":{\"aws:SourceIp\":\"::/0\"}",
    "\"DateEquals\":{\"aws:CurrentTime\":\"9999-12-31\"}",
    "acs:osstables:",
    "arn:aws:s3tables:",
    "acs:ram::",
    ":root",
    "/table/",
    "é",
    "\u{10FFFF}",
    "🦀",
    "\"Statement\":",
    "\"Version\":\"1\",",
];

fn mutate(rng: &mut Rng, doc: &str) -> String {
    let mut chars: Vec<char> = doc.chars().collect();
    for _ in 0..=rng.below(4) {
        let at = rng.below(chars.len() + 1);
        match rng.below(6) {
            0 if !chars.is_empty() => {
                let end = (at + rng.below(8)).min(chars.len());
                chars.drain(at.min(end)..end);
            }
            1 => {
                let fragment = rng.pick(FRAGMENTS);
                chars.splice(at..at, fragment.chars());
            }
            2 if !chars.is_empty() => {
                let i = at.min(chars.len() - 1);
                chars[i] = char::from_u32(rng.below(0x80) as u32).unwrap_or('x');
            }
            3 => chars.truncate(at),
            4 if !chars.is_empty() => {
                let start = at.min(chars.len() - 1);
                let end = (start + rng.below(40)).min(chars.len());
                let copy: Vec<char> = chars[start..end].to_vec();
                let to = rng.below(chars.len() + 1);
                chars.splice(to..to, copy);
            }
            _ => {
                let fragment = rng.pick(FRAGMENTS);
                chars.extend(fragment.chars());
            }
        }
    }
    chars.into_iter().collect()
}

/// Runs one document through every kind and, when it parses, through `evaluate` with a varied request.
fn exercise(rng: &mut Rng, doc: &str) -> usize {
    let mut parsed = 0;
    let kinds = [
        PolicyKind::Identity,
        PolicyKind::Resource,
        PolicyKind::Session,
        PolicyKind::Trust,
    ];
    let mut context = Context::new(
        Utc.timestamp_opt(1_780_000_000 + rng.below(1 << 30) as i64, 0)
            .unwrap(),
    );
    context.source_ip = [
        None,
        Some("10.1.2.3".parse().unwrap()),
        Some("2001:db8::1".parse().unwrap()),
    ][rng.below(3)];
    context.secure_transport = rng.below(2) == 0;
    context.namespace = [None, Some("a".to_string()), Some("ab".to_string())][rng.below(3)].clone();
    context.table_name = [None, Some("t".to_string())][rng.below(2)].clone();
    context.resource_tags = BTreeMap::from([("env".to_string(), "prod".to_string())]);
    for kind in kinds {
        let result = Policy::parse(doc, kind);
        if let Ok(policy) = &result {
            parsed += 1;
            assert_eq!(policy.source(), doc);
            let (account_id, arn, is_account_root) = [
                ("111122223333", "acs:ram::111122223333:user/ana", false),
                ("444455556666", "arn:aws:iam::444455556666:root", true),
                ("111122223333", "acs:ram::111122223333:role/r", false),
            ][rng.below(3)];
            let request = Request {
                caller: Caller {
                    account_id,
                    arn,
                    is_account_root,
                },
                action: Action::every()[rng.below(Action::every().len())],
                resource_arn: rng.pick(&[
                    "acs:osstables:cn-hangzhou:111122223333:bucket/b/table/t",
                    "arn:aws:s3tables:us-east-1:111122223333:bucket/x",
                    "acs:ram::111122223333:role/r",
                ]),
                resource_account: "111122223333",
                context: &context,
            };
            let one = std::slice::from_ref(policy);
            let _ = evaluate(
                &request,
                &Policies {
                    identity: one,
                    resource: &[policy],
                    sessions: one,
                },
            );
        } else if let Err(e) = &result {
            assert!(!e.to_string().is_empty());
        }
    }
    parsed
}

#[test]
fn mutated_documents_never_panic() {
    let mut rng = Rng(0x7AB1_EBA7_5EED_0007);
    let (mut runs, mut accepted) = (0usize, 0usize);
    for seed in SEEDS {
        assert!(exercise(&mut rng, seed) > 0, "seed must parse: {seed}");
    }
    for _ in 0..20_000 {
        let base = SEEDS[rng.below(SEEDS.len())];
        let mut doc = mutate(&mut rng, base);
        // Now and then mutate a mutant, to reach deeper.
        if rng.below(4) == 0 {
            doc = mutate(&mut rng, &doc);
        }
        runs += 1;
        accepted += exercise(&mut rng, &doc);
    }
    // Some mutants must still be valid, or the test only ever exercises the JSON parser.
    assert!(accepted > 500, "only {accepted} of {runs} mutants parsed");
}

#[test]
fn oversized_and_deeply_nested_documents_are_refused_cleanly() {
    let deep = "[".repeat(10_000);
    assert!(Policy::parse(&deep, PolicyKind::Identity).is_err());
    let big = format!(r#"{{"Statement":[],"Id":"{}"}}"#, "x".repeat(30_000));
    assert!(
        Policy::parse(&big, PolicyKind::Identity)
            .unwrap_err()
            .to_string()
            .contains("limit")
    );
    // Just under the limit: a long but valid action list parses.
    let actions: Vec<String> = (0..700).map(|_| "\"oss:GetTable\"".to_string()).collect();
    let doc = format!(
        r#"{{"Statement":{{"Effect":"Allow","Action":[{}],"Resource":"*"}}}}"#,
        actions.join(",")
    );
    assert!(doc.len() < MAX_POLICY_BYTES);
    assert!(Policy::parse(&doc, PolicyKind::Identity).is_ok());
    // A wildcard-heavy resource against a long ARN stays quick (no exponential matching).
    let pattern = "*a".repeat(2_000);
    let doc = format!(
        r#"{{"Statement":{{"Effect":"Allow","Action":"*","Resource":"acs:osstables:{pattern}:x:b"}}}}"#
    );
    let policy = Policy::parse(&doc, PolicyKind::Identity).unwrap();
    let context = Context::new(Utc::now());
    let long = format!("acs:osstables:{}:x:c", "a".repeat(4_000));
    let request = Request {
        caller: Caller {
            account_id: "111122223333",
            arn: "acs:ram::111122223333:user/ana",
            is_account_root: false,
        },
        action: Action::GetTable,
        resource_arn: &long,
        resource_account: "111122223333",
        context: &context,
    };
    let policies = Policies {
        identity: std::slice::from_ref(&policy),
        resource: &[],
        sessions: &[],
    };
    assert_eq!(evaluate(&request, &policies), Decision::ImplicitDeny);
}

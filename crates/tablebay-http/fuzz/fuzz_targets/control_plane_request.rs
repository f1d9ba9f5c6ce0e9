//! Fuzzes the control-plane router (`control_plane::router::route`, through
//! `tablebay_http::fuzzing::control_plane_route`): the one parse of a request into the typed endpoint that
//! authorization and the handler both read.
//!
//! Input: `METHOD /path[?query]`, a newline, the body (`common.rs`). Properties:
//! - nothing panics;
//! - an endpoint that reads a body has one that is blank (botocore omits empty bodies; read as `{}`) or strict
//!   UTF-8 JSON: a body that is not UTF-8, even only in a member the typed request skips, never parses;
//! - what the body adds to authorization is what an independent strict reading of the same bytes finds
//!   (`from_utf8` + `serde_json::Value` when it can read the body, and an RFC 8259 reader that keeps repeated
//!   members, taken first and last, which must read every body that routes): the name
//!   of the bucket a CreateTableBucket creates (its resource), and whether a CreateTable carries `metadata`
//!   (`PutTableData` too) or either carries an `encryptionConfiguration` (the encryption action too). A member
//!   repeated there must not let two readers disagree: the typed parse may accept such a body only if every
//!   reading agrees (serde's derived structs refuse a repeated field). `null` reads as absent, as serde reads an
//!   `Option`.
#![no_main]

mod common;

use common::{Json, Pick, read_value, request};
use libfuzzer_sys::fuzz_target;
use tablebay_http::fuzzing::{ControlPlaneNames, control_plane_route};

/// (new bucket name, with metadata, with encryption) as the S3 Tables model reads the body of the operation.
fn body_needs(operation: &str, body: &Json, pick: Pick) -> Option<(Option<String>, bool, bool)> {
    let encryption = body.present("encryptionConfiguration", pick).is_some();
    match operation {
        "CreateTableBucket" => Some((
            Some(body.member("name", pick)?.str()?.to_owned()),
            false,
            encryption,
        )),
        "CreateTable" => Some((None, body.present("metadata", pick).is_some(), encryption)),
        _ => Some((None, false, false)),
    }
}

fn check(names: &ControlPlaneNames, body: &[u8]) {
    if !names.reads_body {
        return;
    }
    let blank = body.iter().all(u8::is_ascii_whitespace);
    let body: &[u8] = if blank { b"{}" } else { body };
    assert!(
        std::str::from_utf8(body).is_ok(),
        "{} parsed a body that is not UTF-8",
        names.operation
    );
    let typed = (names.new_bucket.clone(), names.with_metadata, names.with_encryption);
    let grammar = Json::read(body)
        .unwrap_or_else(|| panic!("{} parsed a body that is not RFC 8259 JSON", names.operation));
    // `serde_json::Value` cannot read some valid documents (see `common::Parser`); it is compared when it can.
    let readings = [
        ("serde_json::Value", read_value(body), Pick::Last),
        ("first member wins", Some(grammar.clone()), Pick::First),
        ("last member wins", Some(grammar), Pick::Last),
    ];
    for (reader, json, pick) in readings {
        let Some(json) = json else {
            continue;
        };
        assert_eq!(
            body_needs(names.operation, &json, pick).as_ref(),
            Some(&typed),
            "{}: the typed request and the {reader} reading ask for different things",
            names.operation
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let Some(request) = request(data) else {
        return;
    };
    if let Ok(names) = control_plane_route(&request.method, request.path, request.query, request.body) {
        check(&names, request.body);
    }
});

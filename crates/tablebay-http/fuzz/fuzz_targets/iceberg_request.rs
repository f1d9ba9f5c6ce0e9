//! Fuzzes the Iceberg REST router (`iceberg::router::route`, through `tablebay_http::fuzzing::iceberg_route`): the
//! one parse of a request into the typed endpoint that authorization and the handler both read (issue 14
//! finding 1: a body that authorized nothing and was then applied from another reading).
//!
//! Input: `METHOD /iceberg/v1/…[?query]`, a newline, the body (`common.rs`). Properties:
//! - nothing panics;
//! - a routed `POST` (every endpoint that reads a body) has a body that is strict UTF-8 JSON: a body that is not
//!   UTF-8, even only in a member the typed request skips, never parses;
//! - the identifiers the typed endpoint names in the body (a commit's `identifier`, each transaction change's
//!   `identifier`, a rename's `source` and `destination`) are exactly those an independent strict reading of the
//!   same bytes finds: `from_utf8` + `serde_json::Value` (when it can read the body: it refuses some valid JSON
//!   that a typed parse only skips, such as `1e400`), and an RFC 8259 reader that keeps repeated members, taken
//!   first and last, which must read every body that routes. A member repeated on the way to an identifier (`table-changes`, `identifier`, `namespace`,
//!   `name`, `source`) would let two readers see different tables, so what must hold is: the typed parse accepts
//!   such a body only if every reading names the same tables (serde's derived structs refuse a repeated field,
//!   so in practice it is a 400). Repeated members elsewhere (a property map) do not change what is authorized;
//!   the handler acts on the typed value, which is the one authorized;
//! - the tables authorization looks up are the ones the body names (each transaction change, a rename's source),
//!   each with exactly one namespace level.
#![no_main]

mod common;

use common::{Json, Pick, read_value, request};
use libfuzzer_sys::fuzz_target;
use tablebay_http::fuzzing::{BodyIdentifier, IcebergNames, iceberg_route};

/// A `{"namespace": [..], "name": ".."}` identifier.
fn identifier(json: &Json, pick: Pick) -> Option<BodyIdentifier> {
    if !json.is_object() {
        return None;
    }
    let levels = json
        .member("namespace", pick)?
        .items()?
        .iter()
        .map(|level| level.str().map(str::to_owned))
        .collect::<Option<Vec<_>>>()?;
    let name = json.member("name", pick)?.str()?.to_owned();
    Some((levels, name))
}

/// The identifiers the Iceberg REST spec says this operation's body names; `None` where the body does not have
/// the shape the spec requires.
fn body_identifiers(operation: &str, body: &Json, pick: Pick) -> Option<Vec<BodyIdentifier>> {
    match operation {
        "commitTransaction" => body
            .member("table-changes", pick)?
            .items()?
            .iter()
            .map(|change| identifier(change.member("identifier", pick)?, pick))
            .collect(),
        "renameTable" | "renameView" => Some(vec![
            identifier(body.member("source", pick)?, pick)?,
            identifier(body.member("destination", pick)?, pick)?,
        ]),
        // `identifier` is optional on a single-table commit (Java omits it); `null` reads as absent.
        "updateTable" => match body.present("identifier", pick) {
            None => Some(vec![]),
            Some(id) => Some(vec![identifier(id, pick)?]),
        },
        _ => Some(vec![]),
    }
}

fn check(names: &IcebergNames, body: &[u8]) {
    if !names.reads_body {
        return;
    }
    assert!(
        std::str::from_utf8(body).is_ok(),
        "{} parsed a body that is not UTF-8",
        names.operation
    );
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
        let independent = body_identifiers(names.operation, &json, pick);
        assert_eq!(
            independent.as_ref(),
            Some(&names.body_identifiers),
            "{}: the typed request and the {reader} reading name different identifiers",
            names.operation
        );
    }
    // What authorization looks up is what the body names, one namespace level each.
    let authorized: Vec<BodyIdentifier> = names
        .tables
        .iter()
        .map(|(namespace, name)| (vec![namespace.clone()], name.clone()))
        .collect();
    match names.operation {
        "commitTransaction" => assert_eq!(authorized, names.body_identifiers),
        "renameTable" => assert_eq!(authorized.first(), names.body_identifiers.first()),
        _ => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let Some(request) = request(data) else {
        return;
    };
    if let Ok(names) = iceberg_route(&request.method, request.path, request.query, request.body) {
        check(&names, request.body);
    }
});

//! input.*: whatever a client sends, the server answers without a 5xx, and
//! a rejection comes in the documented shape.

use proptest::prelude::*;
use serde_json::Value;

use super::{Check, Failure, Level, Outcome, Rule};
use crate::http::{Exchange, Request, encode};

pub fn rules() -> Vec<Rule> {
    vec![Rule {
        id: "input.arbitrary",
        level: Level::Required,
        source: "API.md Errors (400 error.bad_request bare, 404 error.not_found bare, 500 only for an internal failure); every operation's query and path parameters",
        summary: "generated values (non-ASCII, long, empty, boundary numbers, garbage) for every query parameter and path id never get a 5xx; a 400 or 404 comes in the bare form with its code",
        faults: &["unicode-query-500", "text-errors", "bad-request-envelope"],
        check: arbitrary,
        observe: None,
    }]
}

/// Every read operation and the parameters it takes (the writes are left
/// alone: a generated id must never rotate a real key).
const OPERATIONS: &[(&str, &[&str])] = &[
    ("/keys", &["limit", "offset", "names", "is_active"]),
    (
        "/merchants",
        &[
            "limit",
            "offset",
            "enabled",
            "merchant_identifiers",
            "names",
        ],
    ),
    ("/rail-merchants", &["limit", "offset", "status", "name"]),
    (
        "/qrs",
        &["aggregator_merchant_id", "type", "limit", "offset"],
    ),
    (
        "/refunds",
        &[
            "limit",
            "offset",
            "payment_id",
            "status",
            "trace_reference",
            "msg_id",
            "return_id",
            "request_id",
            "refund_id",
            "start_date",
            "end_date",
            "direction",
        ],
    ),
    (
        "/settlements/batches",
        &["cursor", "limit", "direction", "batch_id", "status"],
    ),
    (
        "/settlements/batches/{batch}/transactions",
        &["cursor", "limit", "direction", "only_settlement_txns"],
    ),
    (
        "/account-info",
        &["iban", "with_title_fetch", "alias_type", "alias_value"],
    ),
    (
        "/title-fetch/alias",
        &["alias_type", "alias_value", "with_title_fetch"],
    ),
    ("/webhooks", &["limit", "offset"]),
    ("/rail-merchants/{id}", &[]),
    ("/alias/{id}", &[]),
    ("/payments/{id}/charges", &[]),
    ("/settlements/batches/{id}/transactions", &[]),
];

/// Values a server must survive.
fn values() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        prop::sample::select(vec![
            "0",
            "-0",
            "-1",
            "1e3",
            "1.5",
            " 1",
            "+1",
            "0x10",
            "NaN",
            "true",
            "TRUE",
            "null",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775809",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999999999",
            "sb_",
            "sb_00000000-0000-0000-0000-000000000000",
            "ASC",
            "asc",
            "%",
            "%zz",
            "..",
            "../../etc",
            "a,b,,c",
            ",",
            "\"",
            "'",
            "<script>",
            "{}",
            "[]",
            "\\u0000",
        ])
        .prop_map(str::to_owned),
        "\\PC{1,40}",
        "[ -~]{1,60}",
        "[a-z0-9]{1000,3000}",
        "[\\u{80}-\\u{10ffff}]{1,20}",
    ]
}

fn arbitrary(c: &Check<'_>) -> Outcome {
    let batch = c
        .ctx
        .found
        .batches
        .first()
        .cloned()
        .unwrap_or_else(|| format!("sb_{}", "0".repeat(36)));
    let strategy = (
        0..OPERATIONS.len(),
        any::<prop::sample::Index>(),
        values(),
        0..3u8,
    );
    c.property(strategy, |(op, param, value, extra)| {
        let (template, params) = OPERATIONS[*op];
        let request = if template.contains("{id}") {
            // The generated value is the path id.
            Request::get(template.replace("{id}", &encode(value)))
        } else {
            let path = template.replace("{batch}", &encode(&batch));
            let mut r = Request::get(path);
            if !params.is_empty() {
                let name = params[param.index(params.len())];
                r = r.q(name, value);
                // Sometimes the same parameter twice, or another beside it.
                match extra {
                    1 => r = r.q(name, value),
                    2 => {
                        r = r.q(
                            params[(param.index(params.len()) + 1) % params.len()],
                            value,
                        )
                    }
                    _ => {}
                }
            }
            r
        };
        let e = c.send(request);
        judge(c, &e)
    })
}

/// Never a 5xx or no answer; 400 and 404 in the bare form; 401 (a server
/// may refuse odd input as unauthenticated) in the envelope form.
fn judge(c: &Check<'_>, e: &Exchange) -> Result<(), Failure> {
    let why = match e.status() {
        None => Some("no answer".to_owned()),
        Some(s) if s >= 500 => Some(format!("answered {s}")),
        Some(400) => super::errors::bare(e, 400, "error.bad_request"),
        Some(404) => super::errors::bare(e, 404, "error.not_found"),
        Some(401) => (!e.json.as_ref().is_some_and(|v| {
            v.pointer("/error/code") == Some(&Value::from("error.unauthorized_access"))
        }))
        .then(|| "a 401 not in the envelope form".to_owned()),
        Some(_) => None,
    };
    match why {
        None => Ok(()),
        Some(why) => Err(c.fail(e, why)),
    }
}

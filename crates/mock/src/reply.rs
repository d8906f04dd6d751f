//! Responses in API.md's shapes.

use serde::Serialize;
use serde_json::Value;

use crate::fault::Faults;
use crate::legal::{Choices, Legal};
use crate::wire::{Envelope, ErrorBody, ErrorEnvelope};

/// A response about to be written: status and JSON body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) body: Vec<u8>,
    pub(crate) allow: Option<&'static str>,
    pub(crate) content_type: &'static str,
}

const JSON: &str = "application/json";

fn json(status: u16, value: &impl Serialize) -> Reply {
    match serde_json::to_vec(value) {
        Ok(body) => Reply {
            status,
            body,
            allow: None,
            content_type: JSON,
        },
        Err(err) => internal(&format!("serialize response: {err}")),
    }
}

fn bare(status: u16, code: &str, message: impl Into<String>) -> Reply {
    json(
        status,
        &ErrorBody {
            code,
            message: &message.into(),
        },
    )
}

fn envelope(status: u16, code: &str, message: impl Into<String>) -> Reply {
    json(
        status,
        &ErrorEnvelope {
            api_version: "v1",
            error: ErrorBody {
                code,
                message: &message.into(),
            },
        },
    )
}

/// 200 with `{"api_version": "v1", "data": …}`.
pub(crate) fn ok(data: &impl Serialize) -> Reply {
    json(200, &Envelope::v1(data))
}

/// 200 with a plain JSON object (the mock's own control endpoints).
pub(crate) fn ok_raw(value: &impl Serialize) -> Reply {
    json(200, value)
}

/// 400 bare: the message starts as WIRE.md's and adds the detail.
pub(crate) fn bad_request(detail: impl std::fmt::Display) -> Reply {
    bare(
        400,
        "error.bad_request",
        format!("invalid request parameters: {detail}"),
    )
}

/// 404 bare.
pub(crate) fn not_found() -> Reply {
    not_found_saying("requested resource not found")
}

/// 404 bare, with another message than API.md's (a fault's).
pub(crate) fn not_found_saying(message: &str) -> Reply {
    bare(404, "error.not_found", message)
}

/// 405 bare, with the methods the path takes.
pub(crate) fn method_not_allowed(allow: &'static str) -> Reply {
    let mut reply = bare(
        405,
        "error.bad_request",
        format!("invalid request parameters: method not allowed, use {allow}"),
    );
    reply.allow = Some(allow);
    reply
}

/// 505 bare: the request's HTTP version is refused (`http10-refused`).
pub(crate) fn version_not_supported() -> Reply {
    bare(
        505,
        "error.http_version_not_supported",
        "HTTP/1.0 is not supported: send the request in HTTP/1.1",
    )
}

/// 401 envelope.
pub(crate) fn unauthorized() -> Reply {
    envelope(
        401,
        "error.unauthorized_access",
        "partner access key is required in request header",
    )
}

/// 500 envelope.
pub(crate) fn internal(detail: &str) -> Reply {
    envelope(500, "error.internal_server_error", detail)
}

/// A chaos server error: 500 and 503 in the envelope form, 502 and 504 as
/// the HTML page a gateway sends.
pub(crate) fn chaos_status(status: u16) -> Reply {
    match status {
        502 | 504 => {
            let title = if status == 502 {
                "502 Bad Gateway"
            } else {
                "504 Gateway Timeout"
            };
            Reply {
                status,
                body: format!("<html><head><title>{title}</title></head><body><h1>{title}</h1></body></html>\n")
                    .into_bytes(),
                allow: None,
                content_type: "text/html",
            }
        }
        _ => {
            let mut reply = internal("chaos: the service is unavailable, retry later");
            reply.status = status;
            reply
        }
    }
}

/// A chaos 429: the bare form (API.md shows none for 429).
pub(crate) fn too_many_requests() -> Reply {
    bare(
        429,
        "error.too_many_requests",
        "chaos: too many requests, retry later",
    )
}

/// Applies the faults that edit a finished reply's JSON: its body or its
/// error form. (Wire faults are applied when the response is written.)
/// `later_page` tells a page after the first (a cursor or an offset
/// given), which some faults treat apart.
/// The legal choices that reshape a body: a changing field API.md does
/// not define in every record of a success (`extra-fields`) and in every
/// error (`error-extra-fields`), six fraction digits or `+00:00` on every
/// timestamp (`timestamp-micros`, `timestamp-offset-zero`), values API.md
/// does not list (`unlisted-values`), indentation (`pretty-json`), fields
/// in reverse order (`field-order-reversed`), UUIDs for the ids API.md
/// does not call numeric (`uuid-ids`). `served` numbers the answer.
pub(crate) fn with_legal(mut reply: Reply, legal: &Choices, served: u64) -> Reply {
    let success = (200..300).contains(&reply.status);
    let extra = legal.has(Legal::ExtraFields) && success;
    let error_extra = legal.has(Legal::ErrorExtraFields) && reply.status >= 400;
    let micros = legal.has(Legal::TimestampMicros);
    let offset_zero = legal.has(Legal::TimestampOffsetZero);
    let unlisted = legal.has(Legal::UnlistedValues) && success;
    let pretty = legal.has(Legal::PrettyJson);
    let reversed = legal.has(Legal::ReversedFieldOrder);
    let words = legal.has(Legal::OtherErrorWords) && matches!(reply.status, 400 | 401);
    let payouts = legal.has(Legal::PayoutShape) && success;
    let uuids = legal.has(Legal::UuidIds) && success;
    if !(extra
        || uuids
        || error_extra
        || micros
        || offset_zero
        || unlisted
        || pretty
        || reversed
        || words
        || payouts)
    {
        return reply;
    }
    let Ok(mut value) = serde_json::from_slice::<Value>(&reply.body) else {
        return reply;
    };
    if extra && let Some(data) = value.get_mut("data") {
        add_extra_field(data, served);
    }
    if error_extra {
        let error = match value.get_mut("error") {
            Some(error @ Value::Object(_)) => error,
            _ => &mut value,
        };
        if let Value::Object(map) = error {
            map.insert(
                "request_id".to_owned(),
                Value::from(format!("req_{served:08}")),
            );
        }
    }
    if micros || offset_zero {
        edit_timestamps(&mut value, &|s| {
            let s = if micros { micro(s)? } else { s.to_owned() };
            Some(match (offset_zero, s.strip_suffix('Z')) {
                (true, Some(head)) => format!("{head}+00:00"),
                _ => s,
            })
        });
    }
    if unlisted && let Some(data) = value.get_mut("data") {
        unlisted_values(data);
    }
    if uuids && let Some(data) = value.get_mut("data") {
        uuid_ids(data);
    }
    if payouts && let Some(Value::Array(rows)) = value.pointer_mut("/data/settlement_transactions")
    {
        rows.iter_mut().for_each(other_payout_shape);
    }
    if words {
        reword(&mut value, reply.status);
    }
    let body = if reversed {
        let mut out = String::new();
        write_reversed(&value, &mut out);
        Ok(out.into_bytes())
    } else if pretty {
        serde_json::to_vec_pretty(&value)
    } else {
        serde_json::to_vec(&value)
    };
    if let Ok(body) = body {
        reply.body = body;
    }
    reply
}

/// The token prefixes of the records whose `id` API.md does not call
/// numeric (`uuid-ids`).
const ID_NOT_NUMERIC: &[&str] = &["mer_", "qr_", "als_", "agg_", "acc_", "acct_"];

/// Under `uuid-ids`, every record of `value` whose token has one of
/// [`ID_NOT_NUMERIC`]'s prefixes gets a UUID for its id, drawn from its
/// token: one record, one id, in every answer.
fn uuid_ids(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let token = map
                .get("token")
                .and_then(Value::as_str)
                .filter(|t| ID_NOT_NUMERIC.iter().any(|p| t.starts_with(p)))
                .map(str::to_owned);
            if let (Some(token), Some(id @ Value::String(_))) = (token, map.get_mut("id")) {
                *id = Value::from(uuid_of(&token));
            }
            map.values_mut().for_each(uuid_ids);
        }
        Value::Array(items) => items.iter_mut().for_each(uuid_ids),
        _ => {}
    }
}

/// A UUID (version 4's layout) drawn from `token`.
fn uuid_of(token: &str) -> String {
    use aggpay_internal::mix::{fnv1a, splitmix64};
    let hi = splitmix64(fnv1a(1, token.as_bytes()));
    let lo = splitmix64(fnv1a(2, token.as_bytes()));
    let hex = format!("{hi:016x}{lo:016x}");
    format!(
        "{}-{}-4{}-a{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[13..16],
        &hex[17..20],
        &hex[20..32]
    )
}

/// `value` as compact JSON with every object's fields in reverse order
/// (`serde_json`'s map keeps its keys sorted, so the order is written by
/// hand; strings and numbers are still serde_json's).
fn write_reversed(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().rev().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::from(k.as_str()).to_string());
                out.push(':');
                write_reversed(v, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_reversed(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Transactions and account lookups with values API.md does not list:
/// every other transaction (by its numeric id, so a record reads the same
/// on every request) is scheduled from a static QR; account lookups have
/// a current account type.
fn unlisted_values(data: &mut Value) {
    if let Some(Value::Array(rows)) = data.get_mut("transactions") {
        for row in rows {
            let odd = row["id"]
                .as_str()
                .and_then(|id| id.parse::<u64>().ok())
                .is_some_and(|id| id % 2 == 1);
            if odd {
                row["status"] = Value::from("TXN_SETTLEMENT_SCHEDULED");
                row["payment_type"] = Value::from("STATIC_QR");
            }
        }
    }
    if data.get("iban").is_some() && data.get("servicer_member_id").is_some() {
        data["type"] = Value::from("CAS_CONST_CURRENT");
    }
}

/// A payout in another shape than the reference's (API.md does not show
/// it): the id the list is ordered on, a `po_` token, the batch, the
/// merchant, one `amount` (the net paid out), a lowercase `state` and the
/// creation time; no aggregator, no ledger accounts, no other amounts.
fn other_payout_shape(row: &mut Value) {
    let member = |name: &str| row.get(name).cloned().unwrap_or(Value::Null);
    let token = row["token"]
        .as_str()
        .map(|t| format!("po_{}", t.strip_prefix("stxn_").unwrap_or(t)));
    let state = row["status"]
        .as_str()
        .map(|s| s.trim_start_matches("SETTLEMENT_TXN_").to_lowercase());
    *row = serde_json::json!({
        "id": member("id"),
        "token": token,
        "batch": member("settlement_batch_id"),
        "merchant": member("aggregator_merchant_id"),
        "amount": member("net_amount"),
        "state": state,
        "created_at": member("created_at"),
    });
}

/// A 401's and a 400's message in other words that say the same.
fn reword(value: &mut Value, status: u16) {
    match status {
        401 => {
            if let Some(m) = value.pointer_mut("/error/message") {
                *m = Value::from(
                    "A partner access key is required in the X-PAY-AGGREGATOR-SECRET-KEY request header.",
                );
            }
        }
        _ => {
            if let Some(Value::String(m)) = value.get_mut("message") {
                let detail = m.strip_prefix("invalid request parameters: ").unwrap_or(m);
                *m = format!("Invalid request parameters ({detail})");
            }
        }
    }
}

/// Every record (an object with an `id`, a `token` or a `created_at`)
/// gets `x_served_seq`, the answer's number.
fn add_extra_field(value: &mut Value, served: u64) {
    match value {
        Value::Object(map) => {
            for v in map.values_mut() {
                add_extra_field(v, served);
            }
            if ["id", "token", "created_at"]
                .iter()
                .any(|k| map.contains_key(*k))
            {
                map.insert("x_served_seq".to_owned(), Value::from(served));
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| add_extra_field(v, served)),
        _ => {}
    }
}

/// Every RFC 3339 UTC timestamp string (`micro` reads it) rewritten by
/// `edit`.
fn edit_timestamps(value: &mut Value, edit: &dyn Fn(&str) -> Option<String>) {
    match value {
        Value::String(s) => {
            if micro(s).is_some()
                && let Some(t) = edit(s)
            {
                *s = t;
            }
        }
        Value::Object(map) => map.values_mut().for_each(|v| edit_timestamps(v, edit)),
        Value::Array(items) => items.iter_mut().for_each(|v| edit_timestamps(v, edit)),
        _ => {}
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.f]Z` with six fraction digits; `None` for any
/// other text.
fn micro(s: &str) -> Option<String> {
    let seconds = s.get(..19)?;
    let rest = s.get(19..)?.strip_suffix('Z')?;
    let shape = seconds.bytes().enumerate().all(|(i, b)| match i {
        4 | 7 => b == b'-',
        10 => b == b'T',
        13 | 16 => b == b':',
        _ => b.is_ascii_digit(),
    });
    let fraction = match rest.strip_prefix('.') {
        Some(f) if !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) => f,
        None if rest.is_empty() => "",
        _ => return None,
    };
    shape.then(|| format!("{seconds}.{:0<6}Z", &fraction[..fraction.len().min(6)]))
}

pub(crate) fn with_faults(mut reply: Reply, faults: &Faults, later_page: bool) -> Reply {
    let success = reply.status == 200;
    if let Ok(mut value) = serde_json::from_slice::<Value>(&reply.body) {
        let changed = if success {
            crate::corrupt::corrupt(faults, &mut value, later_page);
            true
        } else {
            crate::corrupt::corrupt_error(faults, reply.status, &mut value)
        };
        if changed {
            reply.body = value.to_string().into_bytes();
        }
    }
    reply
}

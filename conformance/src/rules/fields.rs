//! Field rules over the sampled responses: identifiers, amounts, timestamps,
//! counts, required fields; and the typed client's view of the same bytes.

use aggpay::rules as text;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::support::Judge;
use super::{Failure, Level, Outcome, Rule};
use crate::ctx::Ctx;
use crate::http::show;
use crate::schema::{Field, Kind, data_schema, visit};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "fields.required",
            level: Level::Required,
            source: "API.md Resources and their fields (every table)",
            summary: "every field of API.md's tables is present with its JSON type",
            faults: &["missing-field"],
            check: required,
        },
        Rule {
            id: "ids.prefixes",
            level: Level::Required,
            source: "API.md typing rule 1 and the resource tables",
            summary: "every identifier field carries its type prefix",
            faults: &["wrong-txn-prefix"],
            check: prefixes,
        },
        Rule {
            id: "ids.numeric",
            level: Level::Required,
            source: "API.md typing rule 2; tables (numeric string fields)",
            summary: "numeric ids and numeric string fields are decimal digit strings",
            faults: &["numeric-id-as-number"],
            check: numeric,
        },
        Rule {
            id: "ids.batch-token",
            level: Level::Required,
            source: "API.md typing rule 1 (sb_, exactly 39 characters); Limits",
            summary: "every settlement batch token is sb_ and exactly 39 characters",
            faults: &["short-batch-token"],
            check: batch_tokens,
        },
        Rule {
            id: "ids.access-key-shapes",
            level: Level::Required,
            source: "API.md typing rule 2",
            summary: "access keys have numeric id with ak_ token, or ak_ id with ak_tok_ token",
            faults: &["mixed-key-shape"],
            check: key_shapes,
        },
        Rule {
            id: "amounts.paisa",
            level: Level::Required,
            source: "API.md typing rule 3",
            summary: "amounts are decimal integer strings in paisa",
            faults: &["decimal-amounts"],
            check: paisa,
        },
        Rule {
            id: "amounts.net",
            level: Level::Required,
            source: "API.md PaymentCharges (net_amount) and Transaction",
            summary: "net_amount equals gross_amount minus fee_amount and the four tax amounts",
            faults: &["net-mismatch"],
            check: net,
        },
        Rule {
            id: "amounts.currency",
            level: Level::Required,
            source: "API.md typing rule 3",
            summary: "currency is an ISO 4217 code",
            faults: &["lowercase-currency"],
            check: currency,
        },
        Rule {
            id: "time.rfc3339-utc",
            level: Level::Required,
            source: "API.md typing rule 4",
            summary: "timestamps are RFC 3339 UTC strings",
            faults: &["offset-timestamps"],
            check: timestamps,
        },
        Rule {
            id: "time.null-not-empty",
            level: Level::Required,
            source: "API.md typing rule 4",
            summary: "nullable timestamps are JSON null when unset, never \"\"",
            faults: &["empty-string-null"],
            check: null_timestamps,
        },
        Rule {
            id: "time.dates",
            level: Level::Required,
            source: "API.md typing rule 4 (alias dates)",
            summary: "alias dates are calendar dates YYYY-MM-DD",
            faults: &["datetime-alias-dates"],
            check: dates,
        },
        Rule {
            id: "lists.count-type",
            level: Level::Required,
            source: "API.md typing rule 5",
            summary: "count is a string, except an integer in the access-key and refund lists",
            faults: &["count-types-swapped"],
            check: count_types,
        },
        Rule {
            id: "fields.refund-id-null",
            level: Level::Required,
            source: "API.md Transaction (refund_id: null for payment transactions)",
            summary: "payment transactions carry refund_id null",
            faults: &["refund-id-on-payments"],
            check: refund_id_null,
        },
        Rule {
            id: "fields.event-filter-json",
            level: Level::Required,
            source: "API.md WebhookEndpoint; Events 1",
            summary: "event_filter_json is a JSON-encoded array of strings",
            faults: &["event-filter-object"],
            check: event_filter,
        },
        Rule {
            id: "client.decodes",
            level: Level::Required,
            source: "API.md Resources (the aggpay client's models follow them)",
            summary: "the typed aggpay client decodes every sampled response",
            faults: &["missing-field", "numeric-id-as-number"],
            check: client_decodes,
        },
    ]
}

/// A field's verdict under one rule.
enum Verdict {
    /// Not this rule's business.
    Skip,
    Ok,
    Bad(String),
}

/// Walks every successful sample with its table; `judge_field` decides.
fn over_corpus(
    ctx: &Ctx,
    mut judge_field: impl FnMut(&Field, Option<&Value>) -> Verdict,
) -> Outcome {
    let mut judge = Judge::default();
    let mut sampled = 0;
    for (op, e) in &ctx.corpus {
        let (Some(schema), Some(data)) = (data_schema(op), e.data()) else {
            continue;
        };
        sampled += 1;
        visit(
            data,
            schema,
            "",
            &mut |path, field, value| match judge_field(field, value) {
                Verdict::Skip => {}
                Verdict::Ok => judge.case(),
                Verdict::Bad(why) => {
                    judge.case();
                    judge.fail(Failure::at(ctx, e, format!("{op}: {path}: {why}")));
                }
            },
        );
    }
    if sampled == 0 {
        return Outcome::skipped("no operation answered with data to judge");
    }
    judge.outcome()
}

/// Judges string fields of `kinds` with `ok`; a missing field or another
/// JSON type is `fields.required`'s business.
fn strings(
    ctx: &Ctx,
    applies: impl Fn(Kind) -> bool,
    ok: impl Fn(Kind, &str) -> Result<(), String>,
) -> Outcome {
    over_corpus(ctx, |field, value| {
        if !applies(field.kind) {
            return Verdict::Skip;
        }
        match value {
            Some(Value::String(s)) => match ok(field.kind, s) {
                Ok(()) => Verdict::Ok,
                Err(why) => Verdict::Bad(why),
            },
            Some(Value::Null) | None => Verdict::Skip,
            Some(other) => Verdict::Bad(format!("{} is not a string", show(Some(other)))),
        }
    })
}

fn required(ctx: &Ctx) -> Outcome {
    over_corpus(ctx, |field, value| match value {
        None => Verdict::Bad("missing".into()),
        // A count's JSON type is `lists.count-type`'s business.
        Some(_) if matches!(field.kind, Kind::Count(_)) => Verdict::Ok,
        Some(v) if field.kind.type_matches(v) => Verdict::Ok,
        Some(v) => Verdict::Bad(format!(
            "{} is not {}",
            show(Some(v)),
            field.kind.json_type()
        )),
    })
}

fn prefixes(ctx: &Ctx) -> Outcome {
    strings(
        ctx,
        |k| matches!(k, Kind::Prefix(_) | Kind::PrefixOrEmpty(_)),
        |kind, s| match kind {
            Kind::PrefixOrEmpty(_) if s.is_empty() => Ok(()),
            Kind::Prefix(p) | Kind::PrefixOrEmpty(p) if text::has_prefix(s, p) => Ok(()),
            Kind::Prefix(p) | Kind::PrefixOrEmpty(p) => Err(format!("{s:?} lacks the prefix {p}")),
            _ => Ok(()),
        },
    )
}

fn numeric(ctx: &Ctx) -> Outcome {
    strings(
        ctx,
        |k| matches!(k, Kind::Numeric | Kind::NumStr),
        |_, s| {
            if text::is_numeric_id(s) {
                Ok(())
            } else {
                Err(format!("{s:?} is not a numeric string"))
            }
        },
    )
}

fn batch_tokens(ctx: &Ctx) -> Outcome {
    strings(
        ctx,
        |k| k == Kind::Batch,
        |_, s| {
            if text::is_batch_token(s) {
                Ok(())
            } else {
                Err(format!(
                    "{s:?} is not sb_ and 39 characters (it has {})",
                    s.chars().count()
                ))
            }
        },
    )
}

fn key_shapes(ctx: &Ctx) -> Outcome {
    let mut judge = Judge::default();
    let mut seen = false;
    for (op, pointer) in [("keys", "/keys"), ("aggregator", "/keys"), ("rotate", "")] {
        let Some(e) = ctx.corpus.get(op) else {
            continue;
        };
        let Some(data) = e.data() else { continue };
        let keys: Vec<&Value> = if pointer.is_empty() {
            vec![data]
        } else {
            data.pointer(pointer)
                .and_then(Value::as_array)
                .map(|a| a.iter().collect())
                .unwrap_or_default()
        };
        for key in keys {
            seen = true;
            let id = key["id"].as_str().unwrap_or("");
            let token = key["token"].as_str().unwrap_or("");
            let first = text::is_numeric_id(id) && text::has_prefix(token, "ak_");
            let second = text::has_prefix(id, "ak_") && text::has_prefix(token, "ak_tok_");
            judge.check(first || second, || {
                Failure::at(
                    ctx,
                    e,
                    format!(
                        "{op}: key id {} with token {} is neither shape",
                        show(key.get("id")),
                        show(key.get("token"))
                    ),
                )
            });
        }
    }
    if !seen {
        return Outcome::skipped("no access key was listed");
    }
    judge.outcome()
}

fn paisa(ctx: &Ctx) -> Outcome {
    strings(
        ctx,
        |k| k == Kind::Amount,
        |_, s| {
            if text::is_paisa(s) {
                Ok(())
            } else {
                Err(format!("{s:?} is not an integer amount in paisa"))
            }
        },
    )
}

fn currency(ctx: &Ctx) -> Outcome {
    strings(
        ctx,
        |k| k == Kind::Currency,
        |_, s| {
            if text::is_currency(s) {
                Ok(())
            } else {
                Err(format!("{s:?} is not an ISO 4217 code"))
            }
        },
    )
}

fn timestamps(ctx: &Ctx) -> Outcome {
    strings(
        ctx,
        |k| matches!(k, Kind::Ts | Kind::NullTs),
        |kind, s| {
            // "" for a nullable timestamp is `time.null-not-empty`'s business.
            if (kind == Kind::NullTs && s.is_empty()) || text::is_utc_timestamp(s) {
                Ok(())
            } else {
                Err(format!("{s:?} is not an RFC 3339 UTC timestamp"))
            }
        },
    )
}

fn null_timestamps(ctx: &Ctx) -> Outcome {
    strings(
        ctx,
        |k| k == Kind::NullTs,
        |_, s| {
            if s.is_empty() {
                Err("an unset timestamp is \"\" instead of null".into())
            } else {
                Ok(())
            }
        },
    )
}

fn dates(ctx: &Ctx) -> Outcome {
    if !ctx.corpus.contains_key("alias") {
        return Outcome::skipped(
            super::support::sample(ctx, "alias")
                .err()
                .unwrap_or_default(),
        );
    }
    strings(
        ctx,
        |k| k == Kind::Date,
        |_, s| {
            if text::is_date(s) {
                Ok(())
            } else {
                Err(format!("{s:?} is not a YYYY-MM-DD date"))
            }
        },
    )
}

fn count_types(ctx: &Ctx) -> Outcome {
    over_corpus(ctx, |field, value| match (field.kind, value) {
        (Kind::Count(as_string), Some(v)) => {
            if field.kind.type_matches(v)
                && (!as_string || v.as_str().is_some_and(text::is_numeric_id))
            {
                Verdict::Ok
            } else {
                let want = if as_string {
                    "a numeric string"
                } else {
                    "an integer"
                };
                Verdict::Bad(format!("count is {}, not {want}", show(Some(v))))
            }
        }
        _ => Verdict::Skip,
    })
}

/// The charges object and every sampled transaction.
fn amount_rows(ctx: &Ctx) -> Vec<(&'static str, &crate::http::Exchange, &Value)> {
    let mut rows = Vec::new();
    if let Some(e) = ctx.corpus.get("charges")
        && let Some(d) = e.data()
    {
        rows.push(("charges", e, d));
    }
    if let Some(e) = ctx.corpus.get("transactions") {
        for t in e
            .data()
            .and_then(|d| d["transactions"].as_array())
            .into_iter()
            .flatten()
        {
            rows.push(("transactions", e, t));
        }
    }
    rows
}

fn net(ctx: &Ctx) -> Outcome {
    let rows = amount_rows(ctx);
    if rows.is_empty() {
        return Outcome::skipped("no charges and no transactions were sampled");
    }
    let mut judge = Judge::default();
    let amount = |v: &Value, f: &str| {
        v[f].as_str()
            .filter(|s| text::is_paisa(s))
            .and_then(|s| s.parse::<i128>().ok())
    };
    for (op, e, row) in rows {
        let parts: Option<Vec<i128>> = [
            "gross_amount",
            "fee_amount",
            "sales_tax_on_fee_amount",
            "sales_tax_withholding_amount",
            "income_tax_withholding_amount",
            "digital_tax_amount",
            "net_amount",
        ]
        .iter()
        .map(|f| amount(row, f))
        .collect();
        // Unparsable amounts are `amounts.paisa`'s business.
        let Some(p) = parts else { continue };
        let expected = p[0] - p[1] - p[2] - p[3] - p[4] - p[5];
        judge.check(expected == p[6], || {
            Failure::at(
                ctx,
                e,
                format!(
                    "{op}: net_amount {} but gross minus fee and taxes is {expected} ({})",
                    p[6],
                    show(row.get("token").or(row.get("payment_id")))
                ),
            )
        });
    }
    judge.outcome()
}

fn refund_id_null(ctx: &Ctx) -> Outcome {
    let e = match super::support::sample(ctx, "transactions") {
        Ok(e) => e,
        Err(why) => return Outcome::skipped(why),
    };
    let mut judge = Judge::default();
    for t in e
        .data()
        .and_then(|d| d["transactions"].as_array())
        .into_iter()
        .flatten()
    {
        if t["transaction_type"] == "TT_PAYMENT" {
            judge.check(t["refund_id"].is_null(), || {
                Failure::at(
                    ctx,
                    e,
                    format!(
                        "payment transaction {} has refund_id {}",
                        show(t.get("token")),
                        show(t.get("refund_id"))
                    ),
                )
            });
        }
    }
    if judge.cases == 0 {
        return Outcome::skipped("no payment transaction (TT_PAYMENT) was sampled");
    }
    judge.outcome()
}

fn event_filter(ctx: &Ctx) -> Outcome {
    strings(
        ctx,
        |k| k == Kind::EventJson,
        |_, s| match serde_json::from_str::<Value>(s) {
            Ok(Value::Array(items)) if items.iter().all(Value::is_string) => Ok(()),
            _ => Err(format!("{s:?} is not a JSON array of strings")),
        },
    )
}

/// `value` read with the client's model `T`.
fn decode<T: DeserializeOwned>(value: &Value) -> Result<(), String> {
    T::deserialize(value).map(|_| ()).map_err(|e| e.to_string())
}

/// Every record under `data[key]` read with the client's model `T`.
fn rows<T: DeserializeOwned>(data: &Value, key: &str) -> Result<(), String> {
    let items = data[key]
        .as_array()
        .ok_or_else(|| format!("no {key} array"))?;
    items
        .iter()
        .enumerate()
        .try_for_each(|(i, row)| decode::<T>(row).map_err(|e| format!("{key}[{i}]: {e}")))
}

fn client_decodes(ctx: &Ctx) -> Outcome {
    use aggpay::*;
    let mut judge = Judge::default();
    for (op, e) in &ctx.corpus {
        let Some(data) = e.data() else {
            continue;
        };
        let result = match *op {
            "aggregator" => decode::<Aggregator>(data),
            "keys" => rows::<AccessKey>(data, "keys"),
            "rotate" => decode::<AccessKey>(data),
            "merchants" => rows::<AggregatorMerchant>(data, "merchants"),
            "rail-merchants" => rows::<RailMerchant>(data, "merchants"),
            "rail-merchant" => decode::<RailMerchant>(data),
            "qrs" | "qrs-dynamic" => rows::<QrCode>(data, "qr_codes"),
            "charges" => decode::<PaymentCharges>(data),
            "refunds" => rows::<Refund>(data, "keys"),
            "batches" => rows::<SettlementBatch>(data, "batches"),
            "transactions" => rows::<Transaction>(data, "transactions"),
            "report-export" => decode::<ReportExport>(&data["report_export"]),
            "account-info" | "account-info-mobile" | "title-fetch" => decode::<AccountInfo>(data),
            "alias" => decode::<Alias>(data),
            "ledger" => decode::<LedgerAccount>(data),
            "webhooks" => rows::<WebhookEndpoint>(data, "endpoints"),
            // Payout elements are not shown by API.md: `wire.payout-shape`.
            _ => continue,
        };
        judge.check(result.is_ok(), || {
            Failure::at(
                ctx,
                e,
                format!(
                    "{op}: the aggpay client cannot decode it: {}",
                    result.err().unwrap_or_default()
                ),
            )
        });
    }
    if judge.cases == 0 {
        return Outcome::skipped("no operation answered with a success to decode");
    }
    judge.outcome()
}

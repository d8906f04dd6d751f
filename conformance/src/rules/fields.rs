//! fields.*: every field of API.md's tables, with its JSON type, and the
//! field values API.md fixes; judged on the wire JSON of every sample.

use serde_json::Value;

use super::support::{Judge, text};
use super::{Check, Failure, Level, Outcome, Rule};
use crate::http::{Exchange, show};
use crate::schema::{Field, Kind, data_schema, visit};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "fields.required",
            level: Level::Required,
            source: "API.md Resources and their fields (every table)",
            summary: "every field of API.md's tables is present with its JSON type, in every sampled record",
            faults: &["missing-field", "numeric-id-as-number"],
            check: required,
            observe: None,
        },
        Rule {
            id: "fields.enums",
            level: Level::Required,
            source: "API.md SettlementBatch (status: BATCH_* name); States; RailMerchant (status); QRCode (type); ReportExport (kind, status)",
            summary: "batch status is one of the four BATCH_* names; rail merchant status Active, Inactive, Suspended or empty; QR type STATIC or DYNAMIC; report kind and status REPORT_KIND_* and REPORT_STATUS_* names",
            faults: &["rail-merchant-status-unknown"],
            check: enums,
            observe: None,
        },
        Rule {
            id: "fields.refund-id-null",
            level: Level::Required,
            source: "API.md Transaction (refund_id: null for payment transactions)",
            summary: "payment transactions carry refund_id null",
            faults: &["refund-id-on-payments"],
            check: refund_id_null,
            observe: None,
        },
        Rule {
            id: "fields.event-filter-json",
            level: Level::Required,
            source: "API.md WebhookEndpoint; Events 1",
            summary: "event_filter_json is a JSON-encoded array of strings",
            faults: &["event-filter-object"],
            check: event_filter,
            observe: None,
        },
        Rule {
            id: "fields.webhook-url",
            level: Level::Required,
            source: "API.md WebhookEndpoint (url: absolute URL receiving deliveries)",
            summary: "every webhook endpoint's url is an absolute URL",
            faults: &["webhook-url-relative"],
            check: webhook_url,
            observe: None,
        },
        Rule {
            id: "fields.redacted-iban",
            level: Level::Required,
            source: "API.md Aggregator (BankAccount: redacted_iban, middle digits masked)",
            summary: "the bank account's redacted_iban keeps the IBAN's ends and masks its middle digits",
            faults: &["iban-unmasked"],
            check: redacted_iban,
            observe: None,
        },
    ]
}

/// A field's verdict under one rule.
pub enum Verdict {
    /// Not this rule's business.
    Skip,
    Ok,
    Bad(String),
}

/// Walks every successful sample with its table; `judge_field` decides.
pub fn over_corpus(
    c: &Check<'_>,
    mut judge_field: impl FnMut(&Field, Option<&Value>) -> Verdict,
) -> Outcome {
    let mut judge = Judge::default();
    let mut sampled = 0;
    for sample in &c.ctx.samples {
        let (Some(schema), Some(data)) = (data_schema(sample.op), sample.exchange.data()) else {
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
                    judge.fail(c.fail(&sample.exchange, format!("{}: {path}: {why}", sample.op)));
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
pub fn strings(
    c: &Check<'_>,
    applies: impl Fn(Kind) -> bool,
    ok: impl Fn(Kind, &str) -> Result<(), String>,
) -> Outcome {
    over_corpus(c, |field, value| {
        if !applies(field.kind) {
            return Verdict::Skip;
        }
        match value {
            Some(Value::String(s)) => match ok(field.kind, s) {
                Ok(()) => Verdict::Ok,
                Err(why) => Verdict::Bad(why),
            },
            Some(Value::Null) | None => Verdict::Skip,
            // Another JSON type is `fields.required`'s business.
            Some(_) => Verdict::Skip,
        }
    })
}

fn required(c: &Check<'_>) -> Outcome {
    over_corpus(c, |field, value| match value {
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

fn enums(c: &Check<'_>) -> Outcome {
    strings(
        c,
        |k| matches!(k, Kind::OneOf(_) | Kind::Named(_)),
        |kind, s| match kind {
            Kind::OneOf(allowed) if allowed.contains(&s) => Ok(()),
            Kind::OneOf(allowed) => Err(format!("{s:?} is none of {allowed:?}")),
            Kind::Named(prefix) if s.starts_with(prefix) && s.len() > prefix.len() => Ok(()),
            Kind::Named(prefix) => Err(format!("{s:?} is not a {prefix}* name")),
            _ => Ok(()),
        },
    )
}

fn refund_id_null(c: &Check<'_>) -> Outcome {
    let mut judge = Judge::default();
    for (e, t) in c.ctx.rows("transactions", "transactions") {
        if t["transaction_type"] == "TT_PAYMENT" {
            judge.check(t["refund_id"].is_null(), || {
                c.fail(
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

fn event_filter(c: &Check<'_>) -> Outcome {
    strings(
        c,
        |k| k == Kind::EventJson,
        |_, s| match serde_json::from_str::<Value>(s) {
            Ok(Value::Array(items)) if items.iter().all(Value::is_string) => Ok(()),
            _ => Err(format!("{s:?} is not a JSON array of strings")),
        },
    )
}

fn webhook_url(c: &Check<'_>) -> Outcome {
    let mut judge = Judge::default();
    for (e, hook) in c.ctx.rows("webhooks", "endpoints") {
        let url = text(hook, "url");
        let absolute = url.split_once("://").is_some_and(|(scheme, rest)| {
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || "+-.".contains(ch))
                && !rest.split('/').next().unwrap_or("").is_empty()
        });
        judge.check(absolute, || {
            c.fail(
                e,
                format!(
                    "webhook {}: url {url:?} is not absolute",
                    show(hook.get("token"))
                ),
            )
        });
    }
    if judge.cases == 0 {
        return Outcome::skipped("no webhook endpoint was listed");
    }
    judge.outcome()
}

/// Why `redacted` does not mask the middle of `iban`, if it does not:
/// it must keep the IBAN's first and last two characters, hide some of its
/// digits, and never show its middle whole.
fn masking(iban: &str, redacted: &str) -> Result<(), String> {
    let (a, b): (Vec<char>, Vec<char>) = (iban.chars().collect(), redacted.chars().collect());
    if a.len() < 8 {
        return Ok(());
    }
    let digits = |chars: &[char]| chars.iter().filter(|c| c.is_ascii_digit()).count();
    let middle: String = a[4..a.len() - 4].iter().collect();
    let ends_kept = b.len() >= 4 && b[..2] == a[..2] && b[b.len() - 2..] == a[a.len() - 2..];
    if redacted == iban || redacted.contains(&middle) || digits(&b) >= digits(&a) || !ends_kept {
        return Err(format!(
            "redacted_iban {redacted:?} does not keep the ends and mask the middle digits of the IBAN"
        ));
    }
    Ok(())
}

fn redacted_iban(c: &Check<'_>) -> Outcome {
    let e: &Exchange = match c.ctx.sample_or_why("aggregator") {
        Ok(e) => e,
        Err(why) => return Outcome::skipped(why),
    };
    let Some(account) = e.data().map(|d| &d["bank_account"]) else {
        return Outcome::skipped("the aggregator record did not succeed");
    };
    let mut judge = Judge::default();
    let result: Result<(), Failure> =
        masking(text(account, "iban"), text(account, "redacted_iban"))
            .map_err(|why| c.fail(e, why));
    judge.result(result);
    judge.outcome()
}

#[cfg(test)]
mod tests {
    use super::masking;

    #[test]
    fn masking_is_recognised() {
        let iban = "PK36MEZN5000000000000001";
        assert!(masking(iban, "PK36MEZN************0001").is_ok());
        assert!(masking(iban, "PK36****0001").is_ok());
        assert!(masking(iban, iban).is_err());
        assert!(masking(iban, "PK36MEZN5000000000000***").is_err());
        assert!(masking(iban, "************************").is_err());
    }
}

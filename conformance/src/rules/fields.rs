//! fields.*: every field of API.md's tables, with its JSON type, and the
//! field values API.md fixes; judged on every answer of the run.

use aggpay_mock::Fault;
use serde_json::Value;

use super::observe::{Cases, Observed, Verdict, first_of, rows_of, schema, strings};
use super::{Claim, Kind, Level, Rule, Run};
use crate::contract::FieldKind;
use crate::contract::subject::{Said, Subject};
use crate::http::show;

pub(crate) const STATE_BOUND: Claim = Claim {
    holds: "a record's fields agree with what API.md binds to its state",
    says: &[
        "| refund_id | string or null | null for payment transactions |",
        "| storage_key | string | location of the produced file; empty until produced |",
        "| merchant_id | string | empty string when the export is of kind REPORT_KIND_BATCH |",
        "Observed value: REPORT_STATUS_SEEDED (a newly created export, with attempts at 1, started_at set and finished_at null).",
    ],
};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "fields.required",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Resources and their fields (every table)",
            claims: &[Claim {
                holds: "every field of its table is present with its type",
                says: &["## Resources and their fields"],
            }],
            summary: "every field of API.md's tables is present with its JSON type, in every record of every answer",
            faults: &[
                Fault::MissingField,
                Fault::NumericIdAsNumber,
                Fault::LaterPagesDropField,
            ],
            judges: &[Subject::Field(|_| true)],
            run: Run::EveryAnswer(required, Cases::Successes),
        },
        Rule {
            id: "fields.enums",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md SettlementBatch (status: BATCH_* name); States; RailMerchant (status); QRCode (type); ReportExport (kind, status)",
            claims: &[Claim {
                holds: "a field with listed values holds one of them",
                says: &[
                    "| status | string | BATCH_* name (see States) |",
                    "| type | string | STATIC or DYNAMIC |",
                    "Values: Active, Inactive, Suspended; an empty string is also seen on a record without a rail record.",
                ],
            }],
            summary: "batch status is one of the four BATCH_* names; rail merchant status Active, Inactive, Suspended or empty; QR type STATIC or DYNAMIC; report kind and status REPORT_KIND_* and REPORT_STATUS_* names",
            faults: &[Fault::RailMerchantStatusUnknown],
            judges: &[
                Subject::Field(|k| matches!(k, FieldKind::OneOf(_) | FieldKind::Named(_))),
                Subject::Said(Said::BatchStatus),
            ],
            run: Run::EveryAnswer(enums, Cases::Successes),
        },
        Rule {
            id: "fields.state-bound",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Transaction (refund_id: null for payment transactions); ReportExport (storage_key: empty until produced; merchant_id: empty string for REPORT_KIND_BATCH); Report export status (REPORT_STATUS_SEEDED: attempts at 1, started_at set, finished_at null)",
            claims: &[STATE_BOUND],
            summary: "every state-bound statement of API.md holds on every record of every answer, in whatever state the server shows it: payment transactions carry refund_id null; an export's storage_key is empty until it is produced, its merchant_id empty for a batch export, and REPORT_STATUS_SEEDED means what API.md says it means",
            faults: &[
                Fault::RefundIdOnPayments,
                Fault::ExportSeededFinished,
                Fault::ExportStorageKeyEarly,
                Fault::EmptyStringNull,
                // An upserted export's attempts, a pooled body's
                // merchant_id on a batch export: state-bound statements.
                Fault::ExportUpsert,
                Fault::ExportBodyPooled,
            ],
            judges: &[Subject::Said(Said::RefundIdNull)],
            run: Run::EveryAnswer(state_bound, Cases::Successes),
        },
        Rule {
            id: "fields.event-filter-json",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md WebhookEndpoint; Events 1",
            claims: &[Claim {
                holds: "event_filter_json is a JSON-encoded array of strings",
                says: &[
                    "| event_filter_json | string | a JSON-encoded array of event-name strings |",
                ],
            }],
            summary: "event_filter_json is a JSON-encoded array of strings",
            faults: &[Fault::EventFilterObject],
            judges: &[
                Subject::Field(|k| k == FieldKind::EventJson),
                Subject::Said(Said::Webhooks),
            ],
            run: Run::EveryAnswer(event_filter, Cases::Successes),
        },
        Rule {
            id: "fields.webhook-url",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md WebhookEndpoint (url: absolute URL receiving deliveries)",
            claims: &[Claim {
                holds: "a webhook endpoint's url is an absolute URL",
                says: &["| url | string | absolute URL receiving deliveries |"],
            }],
            summary: "every webhook endpoint's url is an absolute URL",
            faults: &[Fault::WebhookUrlRelative],
            judges: &[Subject::Said(Said::Webhooks)],
            run: Run::EveryAnswer(webhook_url, Cases::Successes),
        },
        Rule {
            id: "fields.redacted-iban",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Aggregator (BankAccount: redacted_iban, middle digits masked)",
            claims: &[Claim {
                holds: "redacted_iban keeps the IBAN's ends and masks its middle",
                says: &["redacted_iban (middle digits masked)"],
            }],
            summary: "the bank account's redacted_iban keeps the IBAN's ends and masks its middle digits",
            faults: &[Fault::IbanUnmasked],
            judges: &[Subject::Said(Said::RedactedIban)],
            run: Run::EveryAnswer(redacted_iban, Cases::Successes),
        },
    ]
}

fn required(e: &Observed<'_>) -> Option<String> {
    schema(e, |field, value| match value {
        None => Verdict::Bad("missing".into()),
        // A count's JSON type is `lists.count-type`'s business.
        Some(_) if matches!(field.kind, FieldKind::Count(_)) => Verdict::Ok,
        Some(v) if field.kind.type_matches(v) => Verdict::Ok,
        Some(v) => Verdict::Bad(format!(
            "{} is not {}",
            show(Some(v)),
            field.kind.json_type()
        )),
    })
}

fn enums(e: &Observed<'_>) -> Option<String> {
    strings(
        e,
        |k| matches!(k, FieldKind::OneOf(_) | FieldKind::Named(_)),
        |kind, s| match kind {
            FieldKind::OneOf(allowed) if allowed.contains(&s) => Ok(()),
            FieldKind::OneOf(allowed) => Err(format!("{s:?} is none of {allowed:?}")),
            FieldKind::Named(prefix) if s.starts_with(prefix) && s.len() > prefix.len() => Ok(()),
            FieldKind::Named(prefix) => Err(format!("{s:?} is not a {prefix}* name")),
            _ => Ok(()),
        },
    )
}

/// The model's invariants, on every answer: one home for each
/// state-bound statement, which the random sequences hold too.
fn state_bound(e: &Observed<'_>) -> Option<String> {
    crate::model::invariants::of_answer(e.op()?.id, e)
}

fn event_filter(e: &Observed<'_>) -> Option<String> {
    strings(
        e,
        |k| k == FieldKind::EventJson,
        |_, s| match serde_json::from_str::<Value>(s) {
            Ok(Value::Array(items)) if items.iter().all(Value::is_string) => Ok(()),
            _ => Err(format!("{s:?} is not a JSON array of strings")),
        },
    )
}

fn is_absolute(url: &str) -> bool {
    url.split_once("://").is_some_and(|(scheme, rest)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || "+-.".contains(ch))
            && !rest.split('/').next().unwrap_or("").is_empty()
    })
}

fn webhook_url(e: &Observed<'_>) -> Option<String> {
    first_of(
        rows_of(e, "webhooks", "endpoints")
            .filter(|h| h["url"].as_str().is_some_and(|u| !is_absolute(u)))
            .map(|h| {
                format!(
                    "webhook {}: url {} is not absolute",
                    show(h.get("token")),
                    show(h.get("url"))
                )
            }),
    )
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

fn redacted_iban(e: &Observed<'_>) -> Option<String> {
    if e.op().is_none_or(|o| o.name != "aggregator") {
        return None;
    }
    let account = &e.data()?["bank_account"];
    let text = |f: &str| account[f].as_str().unwrap_or("");
    masking(text("iban"), text("redacted_iban")).err()
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

//! What API.md states, statement by statement, and the rules that judge
//! each, or why none does. `--coverage` prints it; COVERAGE.md at the
//! top of the repository is that output, and a test keeps the two equal.

use std::fmt::Write as _;

/// How a statement of API.md is judged.
#[derive(Debug, Clone, Copy)]
pub enum Judged {
    /// By these rules.
    By(&'static [&'static str]),
    /// By no rule, for this reason.
    Not(&'static str),
}

/// One statement of API.md.
#[derive(Debug, Clone, Copy)]
pub struct Statement {
    /// The API.md section.
    pub section: &'static str,
    /// What it says, in short.
    pub says: &'static str,
    /// The rules, or why none.
    pub judged: Judged,
}

const fn by(
    section: &'static str,
    says: &'static str,
    rules: &'static [&'static str],
) -> Statement {
    Statement {
        section,
        says,
        judged: Judged::By(rules),
    }
}

const fn not(section: &'static str, says: &'static str, why: &'static str) -> Statement {
    Statement {
        section,
        says,
        judged: Judged::Not(why),
    }
}

/// Why the statements API.md leaves unshown are not judged.
const NOT_SHOWN: &str = "API.md says it is not shown: nothing to hold a server to";

/// API.md, statement by statement, in its order.
pub const STATEMENTS: &[Statement] = &[
    by(
        "What the service does",
        "every operation is scoped to the aggregator of the path",
        &["scope.aggregator", "scope.unknown-aggregator"],
    ),
    by(
        "What the service does",
        "the 17 operations offered each answer",
        &["envelope.success"],
    ),
    by(
        "Resources and their fields",
        "every table: each field, with its JSON type",
        &["fields.required", "client.decodes"],
    ),
    by(
        "Typing rule 1",
        "identifiers carry their type prefix; sb_ tokens are exactly 39 characters",
        &["ids.prefixes", "ids.batch-token"],
    ),
    by(
        "Typing rule 2",
        "numeric ids are strings; the two access-key shapes",
        &["ids.numeric", "ids.access-key-shapes"],
    ),
    by(
        "Typing rule 3",
        "amounts are integer strings in paisa; currency is ISO 4217",
        &["amounts.paisa", "amounts.currency"],
    ),
    by(
        "Typing rule 4",
        "timestamps RFC 3339 UTC, unset ones null, alias dates YYYY-MM-DD",
        &["time.rfc3339-utc", "time.null-not-empty", "time.dates"],
    ),
    by(
        "Typing rule 5",
        "count is a string, an integer in the access-key and refund lists",
        &["lists.count-type"],
    ),
    by(
        "PaymentCharges, Transaction",
        "net_amount is gross minus the fee and the four taxes",
        &["amounts.net"],
    ),
    by(
        "Transaction",
        "refund_id is null for payment transactions",
        &["fields.refund-id-null"],
    ),
    by(
        "ReportExport, SettlementBatch, RailMerchant, QRCode",
        "enumerated values: batch status names, rail merchant status, QR type, report kind and status",
        &["fields.enums"],
    ),
    by(
        "Aggregator",
        "the bank account's redacted_iban masks the IBAN's middle digits",
        &["fields.redacted-iban"],
    ),
    by(
        "Aggregator, AccessKey",
        "the record holds the aggregator's access keys, their secret in clear",
        &["keys.consistent"],
    ),
    by(
        "WebhookEndpoint",
        "url is an absolute URL; event_filter_json a JSON array of names",
        &["fields.webhook-url", "fields.event-filter-json"],
    ),
    by(
        "Settlement batch status",
        "requests filter with the integer 0-3, responses carry the name",
        &["cursor.status-filter", "fields.enums"],
    ),
    by(
        "Report export status",
        "a new export is REPORT_STATUS_SEEDED, attempts 1, started_at set, finished_at null",
        &["exports.seeded"],
    ),
    not(
        "Transaction status",
        "TXN_SETTLEMENT_CONFIRMED is observed",
        "other values are not shown: any string is allowed (fields.required types it)",
    ),
    by(
        "Rail merchant status",
        "Active, Inactive, Suspended, or empty without a rail record",
        &["fields.enums"],
    ),
    not(
        "States and transitions",
        "transitions of every state",
        NOT_SHOWN,
    ),
    by(
        "Conventions 1",
        "paths are appended to {base_url}, its own prefix included",
        &["envelope.success"],
    ),
    by(
        "Conventions 2",
        "requests and responses are JSON; every operation requires the key",
        &["body.json", "auth.missing-key"],
    ),
    by(
        "Conventions 3; Versioning 1",
        "success body {api_version: v1, data: object}",
        &["envelope.success"],
    ),
    by(
        "Conventions 4",
        "responses carry Content-Length and Date",
        &["headers.content-length", "headers.date"],
    ),
    by(
        "Conventions 5",
        "cursor lists return next_cursor and count {filtered_count, total_count} as numeric strings",
        &["cursor.counts", "cursor.walk"],
    ),
    by(
        "Conventions 7",
        "the payment-charges operation succeeds with 200",
        &["status.charges-200"],
    ),
    not(
        "Conventions 6, 7",
        "other success statuses; the wire names of purpose-only parameters",
        "not shown: success is any 2xx (wire.success-200 observes 200), and wire names follow WIRE.md",
    ),
    by(
        "Path parameters",
        "a read answers for the id of its path; sb_ ids are exactly 39 characters",
        &["ids.path-match", "cursor.bad-batch-token"],
    ),
    by(
        "Aggregator",
        "GET the aggregator; 404 error.not_found",
        &["envelope.success", "scope.unknown-aggregator"],
    ),
    by(
        "Access keys",
        "list: page size 0 to 100, offset at least 0, name fragments, active filter",
        &[
            "offset.pages",
            "offset.limit",
            "filters.keys",
            "filters.combined",
            "filters.multi-value",
        ],
    ),
    by(
        "Access keys",
        "rotate returns the key with its new secret",
        &["keys.rotation"],
    ),
    by(
        "Merchants",
        "merchant list: enabled, identifiers and names (comma-separated lists)",
        &[
            "filters.merchants",
            "filters.combined",
            "filters.multi-value",
            "offset.pages",
        ],
    ),
    by(
        "Merchants",
        "rail merchant list: status and name filters; read one rail merchant",
        &[
            "filters.rail-merchants",
            "filters.combined",
            "ids.path-match",
        ],
    ),
    by(
        "QR codes",
        "type defaults to STATIC; aggregator_merchant_id filter; page size and offset",
        &[
            "filters.qrs",
            "filters.combined",
            "offset.pages",
            "offset.limit",
        ],
    ),
    by(
        "Payments",
        "charges of a payment: 200; 404 error.not_found for an unknown one",
        &["status.charges-200", "errors.not-found", "ids.path-match"],
    ),
    by(
        "Refunds",
        "filters, each with one or more values; inclusive date bounds",
        &["refunds.filters"],
    ),
    by(
        "Refunds",
        "sort direction ASC or DESC",
        &["refunds.direction"],
    ),
    not(
        "Refunds",
        "the pagination parameters",
        "not shown: the refund list is read with WIRE.md's limit and offset only to sample it",
    ),
    by(
        "Settlements",
        "batch list: cursor (omit or 0 first), next_cursor walks",
        &["cursor.walk", "cursor.end", "wire.cursor-bounds"],
    ),
    by(
        "Settlements; Limits",
        "page size default 30, maximum 100, 0 means the default",
        &["cursor.default-limit", "cursor.max-limit"],
    ),
    by(
        "Settlements; Limits",
        "direction ASC or DESC, uppercase only, on the numeric id; otherwise DESC",
        &["cursor.order"],
    ),
    by(
        "Settlements",
        "batch token and status filters, alone and together",
        &[
            "cursor.batch-filter",
            "cursor.status-filter",
            "filters.combined",
        ],
    ),
    by(
        "Settlements",
        "a malformed batch token: 400 error.bad_request",
        &["cursor.bad-batch-token", "errors.bad-request"],
    ),
    by(
        "Settlements",
        "batch transactions: only_settlement_txns splits payouts from transactions; unknown batch 404",
        &[
            "cursor.only-settlement-txns",
            "errors.not-found",
            "wire.payout-shape",
        ],
    ),
    by(
        "Settlements",
        "report export for a batch or a merchant scope",
        &["exports.match", "exports.seeded"],
    ),
    not(
        "Settlements",
        "which export fields are required",
        "not shown (wire.export-validation observes WIRE.md's answer)",
    ),
    by(
        "Lookups",
        "account-info by IBAN answers for it",
        &["lookups.match"],
    ),
    by(
        "Lookups",
        "the alias value must be provided with alias_type",
        &["lookups.alias-value-required"],
    ),
    by(
        "Lookups",
        "read one alias; alias dates",
        &["ids.path-match", "time.dates"],
    ),
    not(
        "Lookups",
        "with_title_fetch includes the account title details",
        "which fields are the title details is not shown: both answers are sampled and typed (fields.required)",
    ),
    by(
        "Ledger, Webhooks",
        "the ledger account; the webhook endpoint list",
        &["envelope.success", "fields.required", "offset.pages"],
    ),
    by(
        "Authentication 1-2",
        "no key, an empty or a wrong key: 401 error.unauthorized_access saying a key is required",
        &["auth.missing-key", "auth.empty-key", "auth.wrong-key"],
    ),
    by(
        "Authentication 3",
        "keys are listed, in the aggregator record, rotated; secrets in clear",
        &["keys.consistent", "keys.rotation"],
    ),
    not(
        "Authentication 4-5",
        "whether the key must belong to the path's aggregator; scopes, expiry, inactive keys",
        "not shown: scope.unknown-aggregator accepts a 401 or a 404, never a success",
    ),
    by(
        "Events 1-2",
        "endpoints carry url, enabled, secret, event_filter_json",
        &["fields.required", "fields.event-filter-json"],
    ),
    not("Events 3-5", "event names, payloads, delivery", NOT_SHOWN),
    by(
        "Errors",
        "envelope form with 401; bare form with 400 and 404",
        &["auth.missing-key", "errors.bad-request", "errors.not-found"],
    ),
    by(
        "Errors",
        "the 404 message: requested resource not found",
        &["errors.not-found"],
    ),
    by(
        "Errors",
        "500 only for an internal failure",
        &["input.arbitrary"],
    ),
    by(
        "Limits",
        "the page sizes, the batch token, the direction, the QR type default",
        &[
            "cursor.default-limit",
            "cursor.max-limit",
            "ids.batch-token",
            "cursor.order",
            "filters.qrs",
        ],
    ),
    not(
        "Limits",
        "rate limits; page size maximum of the offset lists",
        "not shown: offset.limit only holds a page to the size asked",
    ),
    not(
        "Versioning 2-4",
        "the description's version; deprecation; resources' version field",
        NOT_SHOWN,
    ),
];

/// COVERAGE.md: the statements in API.md's order, then the rules that
/// judge something API.md does not state (WIRE.md's observations).
pub fn markdown(rules: &[crate::rules::Rule]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# What the conformance harness judges\n\n\
         Generated by `aggpay-conformance --coverage`; a test keeps this file equal to it.\n\
         Each statement of API.md, in its order, with the rules that judge it or why none does.\n"
    );
    let _ = writeln!(out, "| API.md | Statement | Judged by |\n|---|---|---|");
    for s in STATEMENTS {
        let judged = match s.judged {
            Judged::By(ids) => ids
                .iter()
                .map(|id| format!("`{id}`"))
                .collect::<Vec<_>>()
                .join(", "),
            Judged::Not(why) => format!("not judged: {why}"),
        };
        let _ = writeln!(out, "| {} | {} | {judged} |", s.section, s.says);
    }
    let _ = writeln!(
        out,
        "\n## Observations (WIRE.md, or common practice)\n\n\
         Reported, failing the run only with `--strict`.\n\n| Rule | What it observes |\n|---|---|"
    );
    for r in rules
        .iter()
        .filter(|r| r.level == crate::rules::Level::Observation)
    {
        let _ = writeln!(out, "| `{}` | {} |", r.id, r.summary);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Level, catalogue};

    #[test]
    fn every_required_rule_judges_a_statement_and_every_named_rule_exists() {
        let rules = catalogue();
        let named: Vec<&str> = STATEMENTS
            .iter()
            .filter_map(|s| match s.judged {
                Judged::By(ids) => Some(ids),
                Judged::Not(_) => None,
            })
            .flatten()
            .copied()
            .collect();
        for id in &named {
            assert!(rules.iter().any(|r| r.id == *id), "{id} is no rule");
        }
        for r in rules.iter().filter(|r| r.level == Level::Required) {
            assert!(
                named.contains(&r.id),
                "{} judges no statement of API.md",
                r.id
            );
        }
    }

    #[test]
    fn coverage_md_is_the_generated_table() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../COVERAGE.md");
        let want = markdown(&catalogue());
        let have = std::fs::read_to_string(path).unwrap_or_default();
        if have != want && std::env::var_os("AGGPAY_BLESS").is_some() {
            std::fs::write(path, &want).unwrap();
            return;
        }
        assert!(
            have == want,
            "COVERAGE.md is stale: rerun with AGGPAY_BLESS=1 (or `aggpay-conformance --coverage > COVERAGE.md`)"
        );
    }
}

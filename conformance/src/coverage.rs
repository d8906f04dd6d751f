//! What API.md states and the rules that judge each statement, or why
//! none does. Most of it is generated from the contract table: every
//! operation with its path id, parameters and errors, every resource
//! field, every error condition, every reference; the statements the
//! table does not hold (typing rules, conventions, authentication,
//! versioning) follow by hand. `aggpay-conformance coverage` prints it; COVERAGE.md at the
//! top of the repository is that output, and a test keeps the two equal.

use std::fmt::Write as _;

use crate::contract::{
    ERRORS, Effect, Field, Many, Named, OPS, Op, Param, REFERENCES, ROOMS, Role, Said, Subject,
};
use crate::rules::{Level, Rule};

/// How a statement of API.md is judged.
#[derive(Debug, Clone, Copy)]
pub enum Judged {
    /// By the rules that name it among their subjects.
    By(Said),
    /// By no rule, for this reason.
    Not(&'static str),
}

/// One statement of API.md the table does not hold.
#[derive(Debug, Clone, Copy)]
pub struct Statement {
    /// The API.md section.
    pub section: &'static str,
    /// What it says, in short.
    pub says: &'static str,
    /// The rules, or why none.
    pub judged: Judged,
}

const fn by(section: &'static str, says: &'static str, said: Said) -> Statement {
    Statement {
        section,
        says,
        judged: Judged::By(said),
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

/// API.md's statements that are not rows of the contract table, in its
/// order.
pub const STATEMENTS: &[Statement] = &[
    by(
        "What the service does",
        "every operation is scoped to the aggregator of the path",
        Said::Scope,
    ),
    by(
        "Typing rule 1",
        "identifiers carry their type prefix; sb_ tokens are exactly 39 characters",
        Said::Prefixes,
    ),
    by(
        "Typing rule 2",
        "numeric ids are strings; the two access-key shapes",
        Said::NumericIds,
    ),
    by(
        "Typing rule 3",
        "amounts are integer strings in paisa; currency is ISO 4217",
        Said::Amounts,
    ),
    by(
        "Typing rule 4",
        "timestamps RFC 3339 UTC, unset ones null, alias dates YYYY-MM-DD",
        Said::Timestamps,
    ),
    by(
        "Typing rule 5",
        "count is a string, an integer in the access-key and refund lists; what an offset list's count counts is not shown, so it must mean one thing",
        Said::Counts,
    ),
    by(
        "PaymentCharges, Transaction",
        "net_amount is gross minus the fee and the four taxes; a transaction's amounts mean what its payment's charges mean",
        Said::NetAmount,
    ),
    by(
        "Transaction",
        "refund_id is null for payment transactions",
        Said::RefundIdNull,
    ),
    by(
        "Aggregator",
        "the bank account's redacted_iban masks the IBAN's middle digits",
        Said::RedactedIban,
    ),
    by(
        "Aggregator, AccessKey; Authentication 3",
        "the record holds the aggregator's access keys, their secret in clear, as the key list shows them, before and after a rotation",
        Said::KeysHeld,
    ),
    by(
        "Access keys (rotate); Authentication 2",
        "a rotation changes the rotated key's secret and nothing else: no other key, nothing when the id names no key or the key is not valid; every operation then takes the new secret as it took the old, and an old secret opens what its key did or nothing",
        Said::Rotation,
    ),
    by(
        "WebhookEndpoint; Events 1",
        "url is an absolute URL; event_filter_json a JSON array of names",
        Said::Webhooks,
    ),
    by(
        "Settlement batch status; States",
        "requests filter with the integer 0-3, responses carry the name",
        Said::BatchStatus,
    ),
    by(
        "Report export status",
        "a new export is REPORT_STATUS_SEEDED, attempts 1, started_at set, finished_at null; a server may choose another status, but one that says SEEDED means it; storage_key is empty until the file is produced",
        Said::ExportStatus,
    ),
    not(
        "Transaction status",
        "TXN_SETTLEMENT_CONFIRMED is observed",
        "other values are not shown: any string is allowed (fields.required types it)",
    ),
    not(
        "States and transitions",
        "transitions of every state",
        NOT_SHOWN,
    ),
    by(
        "Overview (a JSON-over-HTTP API)",
        "every message is HTTP/1.1 as RFC 9112 and RFC 9110 require, judged from the bytes the server sent: status and field lines ended by CRLF, no field that is not a list twice, one framing, no 1xx to HTTP/1.0; every form a client sends is served: HEAD, HTTP/1.0, Connection: close, pipelining",
        Said::Http,
    ),
    by(
        "Conventions 1",
        "paths are appended to {base_url}, its own prefix included",
        Said::BaseUrl,
    ),
    by(
        "Conventions 2",
        "requests and responses are JSON; every operation requires the key",
        Said::JsonWithKey,
    ),
    by(
        "Conventions 2",
        "a response is JSON as HTTP says what a body is: labelled with a JSON media type (RFC 9110 section 8.3), one meaning for every member (RFC 8259 section 4: no member named twice with values that differ)",
        Said::JsonMeaning,
    ),
    by(
        "Conventions 3; Versioning 1",
        "success body {api_version: v1, data: object}",
        Said::Envelope,
    ),
    by(
        "Conventions 4",
        "responses carry Content-Length and Date",
        Said::Headers,
    ),
    by(
        "Conventions 5",
        "cursor lists return next_cursor and count {filtered_count, total_count} as numeric strings, the same on every page",
        Said::CursorCounts,
    ),
    not(
        "Conventions 6, 7",
        "the wire names of purpose-only parameters; success statuses other than the charges'",
        "not shown: wire names follow WIRE.md (the parameter tables below say which); success is any 2xx (wire.success-200 observes 200)",
    ),
    by(
        "Authentication 1-2",
        "no key, an empty or a wrong key: 401 error.unauthorized_access saying a key is required",
        Said::KeyRequired,
    ),
    by(
        "Authentication 1",
        "an API-key scheme carried in a request header only: the key anywhere else (query, Authorization, cookie) is no key; the header's name in any case is the header",
        Said::KeyHeader,
    ),
    not(
        "Authentication 4-5",
        "whether the key must belong to the path's aggregator; scopes, expiry, inactive keys",
        "not shown: scope.unknown-aggregator accepts a 401 or a 404, never a success",
    ),
    not("Events 2-5", "event names, payloads, delivery", NOT_SHOWN),
    not(
        "Limits",
        "rate limits; page size maximum of the offset lists",
        "not shown: offset.limit holds a page to the size asked, and accepts a cap or a 400 above it",
    ),
    not(
        "Versioning 2-4",
        "the description's version; deprecation; resources' version field",
        NOT_SHOWN,
    ),
];

/// The ids of the rules among `rules` that judge a subject for which
/// `holds` is true, in the catalogue's order.
fn judging(rules: &[Rule], holds: impl Fn(&Subject) -> bool) -> Vec<&'static str> {
    rules
        .iter()
        .filter(|r| r.judges.iter().any(&holds))
        .map(|r| r.id)
        .collect()
}

/// What a parameter means, in a few words.
fn param_meaning(p: &Param) -> String {
    let many = |m: Many| match m {
        Many::One => "",
        Many::Comma => ", several comma-separated",
        Many::Repeated => ", several by repeating it",
    };
    match p.role {
        Role::Limit {
            default,
            max,
            zero_is_default,
        } => {
            let mut s = "page size".to_owned();
            if let Some(d) = default {
                s.push_str(&format!(", default {d}"));
            }
            if let Some(m) = max {
                s.push_str(&format!(", maximum {m}"));
            }
            if zero_is_default {
                s.push_str(", 0 means the default");
            }
            s
        }
        Role::Offset => "rows skipped".into(),
        Role::Cursor => "the previous next_cursor; omit or 0 for the first page".into(),
        Role::Direction => "ASC or DESC, uppercase only; otherwise DESC".into(),
        Role::Filter(f) => {
            use crate::contract::Matching as M;
            let field = f.field;
            let how = match f.matching {
                M::Exact => format!("`{field}` equals the value"),
                M::Fragment => format!("the value is a fragment of `{field}` (case: not shown)"),
                M::Name => {
                    format!("the value names `{field}` (exactly or as a fragment, case: not shown)")
                }
                M::Bool => format!("`{field}` is the value, true or false"),
                M::Code(_) => format!("`{field}` is the name of the integer given"),
                M::OnOrAfter => format!("`{field}` is on or after the value (UNIX seconds)"),
                M::OnOrBefore => {
                    format!("`{field}` is on or before the value (UNIX seconds, inclusive)")
                }
            };
            format!("filter: {how}{}", many(f.many))
        }
        Role::Part { field, default } => {
            format!("a part of the list by `{field}`; `{default}` when omitted")
        }
        Role::RowKind => "payouts instead of transactions".into(),
        Role::Lookup(Some(field)) => format!("looked up: the answer is for it (`{field}`)"),
        Role::Lookup(None) => "looked up; required with alias_type".into(),
        Role::Option => "an option of the lookup".into(),
    }
}

/// Rule ids as a table cell; a row no rule judges says so (a test
/// keeps every row of the table judged).
fn names(rules: &[&str]) -> String {
    if rules.is_empty() {
        return NO_RULE.to_owned();
    }
    rules
        .iter()
        .map(|id| format!("`{id}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a row no rule judges says.
const NO_RULE: &str = "**no rule**";

fn operation(out: &mut String, rules: &[Rule], op: &Op) {
    let _ = writeln!(
        out,
        "\n### {} {} ({})\n",
        op.method,
        aggpay_internal::syntax::documented_path(op.path),
        op.section
    );
    let _ = writeln!(
        out,
        "| Part | What API.md says | Judged by |\n|---|---|---|"
    );
    let success = judging(rules, |s| matches!(s, Subject::Answer(f) if f(op)));
    let kind = match op.effect {
        Effect::Read => "a read",
        Effect::Rotation => {
            "a write, never repeated blindly (a lost answer is recovered from the key list)"
        }
        Effect::NewJob => {
            "a write that makes a new job (sent again up to twice when its answer is lost)"
        }
    };
    let _ = writeln!(
        out,
        "| success | {kind}; `data` as the resource tables say | {} |",
        names(&success)
    );
    if let Some(id) = op.path_id {
        let judged = judging(rules, |s| matches!(s, Subject::PathId(f) if f(op, &id)));
        let shape = id
            .exact_len
            .map_or(String::new(), |n| format!(", exactly {n} characters"));
        let _ = writeln!(
            out,
            "| path `{{{}}}` | `{}` id{shape} | {} |",
            id.name,
            id.prefix,
            names(&judged)
        );
    }
    let _ = writeln!(
        out,
        "| header `{}` | the access key secret (Authentication 1) | {} |",
        aggpay_internal::syntax::KEY_HEADER,
        names(&judging(
            rules,
            |s| matches!(s, Subject::KeyHeader(f) if f(op))
        ))
    );
    for p in op.params {
        let from = match p.named {
            Named::Api => "API.md",
            Named::Wire => "WIRE.md",
        };
        let _ = writeln!(
            out,
            "| `{}` (name from {from}) | {} | {} |",
            p.wire,
            param_meaning(p),
            names(&judging(
                rules,
                |s| matches!(s, Subject::Param(f) if f(op, p))
            ))
        );
    }
    let mut statuses: Vec<u16> = op.errors.to_vec();
    if !statuses.contains(&401) {
        statuses.insert(0, 401);
    }
    for status in statuses {
        // Each row says where its own status comes from.
        let why = match (status, op.errors.contains(&status)) {
            (401, true) => "listed for this operation, and by Authentication 2 for every one",
            (401, false) => {
                "by Authentication 2 (a request without a valid key), for every operation"
            }
            _ => "listed for this operation",
        };
        let _ = writeln!(
            out,
            "| error {status} | {why} | {} |",
            names(&judging(
                rules,
                |s| matches!(s, Subject::Error(f) if f(op, status))
            ))
        );
    }
    for field in op.body {
        let names_record = field.names.map_or(String::new(), |list| {
            format!(
                "; names a record of {}",
                crate::contract::Op::get(list).name
            )
        });
        let _ = writeln!(
            out,
            "| body `{}` | {}{names_record} | {} |",
            field.name,
            domain_words(field.domain),
            names(&judging(
                rules,
                |s| matches!(s, Subject::BodyField(f) if f(op, field))
            ))
        );
    }
    let body = judging(rules, |s| matches!(s, Subject::Body(f) if f(op)));
    if !body.is_empty() {
        let _ = writeln!(
            out,
            "| body | a batch or merchant export, for the batch, kind and merchant asked | {} |",
            names(&body)
        );
    }
}

/// A body field's values, in words.
fn domain_words(domain: crate::contract::Domain) -> String {
    use crate::contract::Domain;
    match domain {
        Domain::Int => "an integer".into(),
        Domain::Bool => "`true` or `false`".into(),
        Domain::Choice(words) => words
            .iter()
            .map(|w| format!("`{w}`"))
            .collect::<Vec<_>>()
            .join(" or "),
        Domain::Text => "text".into(),
        Domain::Token(prefix) => format!("a `{prefix}` id"),
        Domain::BatchToken => "an `sb_` batch token, 39 characters".into(),
        Domain::Unix => "UNIX seconds".into(),
    }
}

fn resource(out: &mut String, rules: &[Rule], name: &str, fields: &[Field]) {
    let _ = writeln!(out, "\n### {name}\n");
    let _ = writeln!(out, "| Field | Type | Judged by |\n|---|---|---|");
    for f in fields {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |",
            f.name,
            f.kind.json_type(),
            names(&judging(
                rules,
                |s| matches!(s, Subject::Field(k) if k(f.kind))
            ))
        );
    }
}

/// Every resource table, once, named by the operations that answer it.
fn resources(out: &mut String, rules: &[Rule]) {
    for (name, fields) in crate::contract::resources::TABLES {
        resource(out, rules, name, fields);
    }
}

/// Where API.md leaves room: each room, its readings, how the harness
/// judges it, and the mock's legal choices that exercise it.
fn rooms(out: &mut String) {
    let _ = writeln!(
        out,
        "\n## Where API.md leaves the server a choice\n\n\
         Each reading passes: the legal mutation test runs the harness against the mock with each legal choice \
         (`aggpay-mock --legal NAME`) alone and with all compatible ones at once, and requires exit 0.\n\n\
         | Room | The text that leaves it open | Legal readings (the mock's first) | How the harness judges | Exercised by `--legal` |\n|---|---|---|---|---|"
    );
    for r in ROOMS {
        let choices: Vec<String> = aggpay_mock::Legal::ALL
            .iter()
            .filter(|l| l.room() == r.name)
            .map(|l| format!("`{l}`"))
            .collect();
        let exercised = match r.unexercised {
            Some(why) => format!("none: {why}"),
            None => choices.join(", "),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {exercised} |",
            r.name,
            r.text.replace('|', "\\|"),
            r.readings.join("; ").replace('|', "\\|"),
            r.judged.replace('|', "\\|"),
        );
    }
}

/// The families of properties: each rule, the sentences it rests on, the
/// kind of mistake it looks for, the places of the table it covers, and
/// the mock faults that show it failing.
fn families(out: &mut String, rules: &[Rule]) {
    let _ = writeln!(
        out,
        "\n## Families of properties\n\n\
         Each rule below looks for one kind of mistake at every place of the contract table its subjects hold for, \
         generated from the table (a test fails when it misses one), and carries the sentence it rests on. \
         The faults show it failing (at two places or more for its own kind, `families.rs`), the legal choices of the mock show it passing.\n\n\
         | Rule | Rests on | Looks for | Places | Broken by `--fault` |\n|---|---|---|---|---|"
    );
    for r in rules
        .iter()
        .filter(|r| r.kind == crate::rules::Kind::Properties)
    {
        let says: Vec<String> = r.says().iter().map(|s| format!("\"{s}\"")).collect();
        let places = r.places_due();
        let faults: Vec<String> = r.faults.iter().map(|f| format!("`{f}`")).collect();
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} ({}) | {} |",
            r.id,
            says.join(" ").replace('|', "\\|"),
            r.summary.replace('|', "\\|"),
            places.len(),
            places.join(", "),
            faults.join(", ")
        );
    }
}

/// The sentences of API.md that leave something unshown with no room or
/// rule behind them, and why none is needed.
fn silent(out: &mut String) {
    let _ = writeln!(
        out,
        "\n## Left unshown, with nothing to judge\n\n\
         Every sentence of API.md that leaves something unshown is quoted by a room above, by a rule, or here \
         (a test reads API.md and fails on one that is not).\n\n| API.md | Why nothing judges it |\n|---|---|"
    );
    for (sentence, why) in crate::contract::SILENT {
        let _ = writeln!(
            out,
            "| \"{}\" | {} |",
            sentence.replace('|', "\\|"),
            why.replace('|', "\\|")
        );
    }
}

/// Every claim of every rule with the sentences it rests on: what a
/// failure of it quotes.
fn provenance(out: &mut String, rules: &[Rule]) {
    let _ = writeln!(
        out,
        "\n## Every check and the sentences it rests on\n\n\
         A rule makes one claim per kind of comparison, and every failure names the claim it breaks and quotes its \
         sentences. Each claim of a required rule quotes API.md (a test holds it to a sentence of API.md, and every quote \
         to `spec/`, verbatim); an observation may rest on WIRE.md or an RFC alone.\n\n\
         | Rule | Level | Holds the server to | Rests on |\n|---|---|---|---|"
    );
    for r in rules {
        for claim in r.claims {
            let says: Vec<String> = claim.says.iter().map(|s| format!("\"{s}\"")).collect();
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} |",
                r.id,
                r.level.as_str(),
                claim.holds.replace('|', "\\|"),
                says.join(" ").replace('|', "\\|")
            );
        }
    }
}

/// COVERAGE.md.
pub fn markdown(rules: &[Rule]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# What the conformance harness judges\n\n\
         Generated by `aggpay-conformance coverage` from the harness's contract table; a test keeps this file equal to it.\n\
         Every operation of API.md with its path id, parameters and errors, every resource field, every error condition\n\
         and every reference between records, with the rules that judge each; then the statements the table does not hold.\n\
         Every rule applies wherever the table says its subject can be seen: every answer of the run, every page, every record."
    );
    let _ = writeln!(out, "\n## Operations");
    for op in OPS {
        operation(&mut out, rules, op);
    }
    families(&mut out, rules);
    provenance(&mut out, rules);
    let _ = writeln!(out, "\n## Resources and their fields");
    resources(&mut out, rules);
    let _ = writeln!(
        out,
        "\n## Errors\n\n| Status | Code | Form | Message | Judged by |\n|---|---|---|---|---|"
    );
    for e in ERRORS {
        let message = match e.message {
            crate::contract::Message::Exactly(m) => format!("exactly \"{m}\""),
            crate::contract::Message::Says(words) => format!(
                "says {}",
                words
                    .iter()
                    .map(|w| format!("\"{w}\""))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
            crate::contract::Message::Described => "an internal error description".into(),
        };
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | {message} | {} (every such answer of the run) |",
            e.status,
            e.code,
            e.form.as_str(),
            names(&judging(rules, |s| matches!(s, Subject::ErrorTable)))
        );
    }
    let _ = writeln!(
        out,
        "\n## References between records\n\n| Record | Names | As | Judged by |\n|---|---|---|---|"
    );
    for r in REFERENCES {
        let _ = writeln!(
            out,
            "| {} | `{}` with `{}` | {}'s `{}` | {} |",
            crate::contract::Op::get(r.from).name,
            r.id,
            r.name,
            crate::contract::Op::get(r.to).name,
            r.to_name,
            names(&judging(rules, |s| matches!(s, Subject::References)))
        );
    }
    let _ = writeln!(
        out,
        "\n## Statements the table does not hold\n\n| API.md | Statement | Judged by |\n|---|---|---|"
    );
    for s in STATEMENTS {
        let judged = match s.judged {
            Judged::By(said) => names(&judging(
                rules,
                |subject| matches!(subject, Subject::Said(x) if *x == said),
            )),
            Judged::Not(why) => format!("not judged: {why}"),
        };
        let _ = writeln!(out, "| {} | {} | {judged} |", s.section, s.says);
    }
    rooms(&mut out);
    silent(&mut out);
    let _ = writeln!(
        out,
        "\n## Observations (WIRE.md, or common practice)\n\n\
         Reported, failing the run only with `--strict`.\n\n| Rule | What it observes |\n|---|---|"
    );
    for r in rules.iter().filter(|r| r.level == Level::Observation) {
        let _ = writeln!(out, "| `{}` | {} |", r.id, r.summary);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::catalogue;

    /// The rule table of docs/conformance.md: every rule of the catalogue, its
    /// level, what it checks, where the contract says it, and the mock faults
    /// that break it.
    fn rule_table(rules: &[Rule]) -> String {
        let mut out = String::from(
            "| rule | level | checks | source | broken by `--fault` |\n|---|---|---|---|---|\n",
        );
        for r in rules {
            let faults: Vec<String> = r.faults.iter().map(|f| format!("`{f}`")).collect();
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {} |",
                r.id,
                r.level.as_str(),
                r.summary.replace('|', "\\|"),
                r.source.replace('|', "\\|"),
                faults.join(", ")
            );
        }
        out
    }

    /// Markers around the generated rule table in docs/conformance.md.
    const TABLE_BEGIN: &str = "<!-- rule table: generated from the catalogue, do not edit -->\n";
    const TABLE_END: &str = "<!-- end of rule table -->\n";

    #[test]
    fn every_required_rule_judges_something_and_every_row_is_judged() {
        let rules = catalogue();
        let text = markdown(&rules);
        for r in rules.iter().filter(|r| r.level == Level::Required) {
            assert!(!r.judges.is_empty(), "{} names no subject", r.id);
            assert!(
                text.contains(&format!("`{}`", r.id)),
                "{} judges nothing COVERAGE.md shows",
                r.id
            );
        }
        assert!(
            !text.contains(NO_RULE),
            "a row of COVERAGE.md is judged by no rule"
        );
        // A statement a rule names is one COVERAGE.md shows.
        for r in &rules {
            for subject in r.judges {
                if let Subject::Said(said) = subject {
                    assert!(
                        STATEMENTS
                            .iter()
                            .any(|s| matches!(s.judged, Judged::By(x) if x == *said)),
                        "{} judges {said:?}, which no statement of COVERAGE.md is",
                        r.id
                    );
                }
            }
        }
    }

    #[test]
    fn the_docs_rule_table_is_the_generated_one() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/conformance.md");
        let have = std::fs::read_to_string(path).unwrap_or_default();
        let (Some(begin), Some(end)) = (have.find(TABLE_BEGIN), have.find(TABLE_END)) else {
            panic!("docs/conformance.md lacks the rule table's markers");
        };
        let table = &have[begin + TABLE_BEGIN.len()..end];
        let want = rule_table(&catalogue());
        if table != want && std::env::var_os("AGGPAY_BLESS").is_some() {
            let blessed = format!(
                "{}{want}{}",
                &have[..begin + TABLE_BEGIN.len()],
                &have[end..]
            );
            std::fs::write(path, blessed).unwrap();
            return;
        }
        assert!(
            table == want,
            "the rule table of docs/conformance.md is stale: rerun with AGGPAY_BLESS=1"
        );
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
            "COVERAGE.md is stale: rerun with AGGPAY_BLESS=1 (or `aggpay-conformance coverage > COVERAGE.md`)"
        );
    }
}

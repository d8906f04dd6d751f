//! refunds.*: the refund list's filters (each takes one or more values)
//! and its sort direction.

use serde_json::Value;

use super::support::{Judge, query_text, text};
use super::{Check, Level, Outcome, Rule};
use crate::http::{Request, show};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "refunds.filters",
            level: Level::Required,
            source: "API.md Refunds (query filters; each accepts one or more values; created on or after, on or before)",
            summary: "each refund filter keeps the matching refunds, every value of a repeated one counts, the date bounds are inclusive, and filters together keep the refunds matching all",
            faults: &["refund-status-first-only", "offset-timestamps"],
            check: filters,
            observe: None,
        },
        Rule {
            id: "refunds.direction",
            level: Level::Required,
            source: "API.md Refunds (sort direction ASC or DESC); Limits (list sort direction: ASC or DESC, uppercase only; otherwise DESC)",
            summary: "the refund list in direction ASC is the DESC list reversed; lowercase, empty, garbage or no direction gives the DESC order",
            faults: &["refund-direction-lowercase", "lowercase-asc"],
            check: direction,
            observe: None,
        },
    ]
}

/// One filtered request: its query, a predicate every row must meet, and
/// refunds that must be listed.
struct Case {
    query: Vec<(&'static str, String)>,
    ok: Box<dyn Fn(&Value) -> bool + Sync>,
    wanted: Vec<String>,
}

fn created_second(r: &Value) -> Option<i64> {
    text(r, "created_at")
        .parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_second())
}

fn filters(c: &Check<'_>) -> Outcome {
    let sample: Vec<Value> = c
        .ctx
        .rows("refunds", "keys")
        .map(|(_, r)| r.clone())
        .collect();
    let Some(first) = sample.first() else {
        return Outcome::skipped("no refund was listed");
    };
    let mut cases: Vec<Case> = Vec::new();
    for field in [
        "payment_id",
        "status",
        "trace_reference",
        "msg_id",
        "return_id",
        "request_id",
    ] {
        let value = text(first, field).to_owned();
        if value.is_empty() {
            continue;
        }
        let v = value.clone();
        cases.push(Case {
            query: vec![(field, value)],
            ok: Box::new(move |r| text(r, field) == v),
            wanted: vec![text(first, "token").to_owned()],
        });
    }
    if !text(first, "token").is_empty() {
        let token = text(first, "token").to_owned();
        let t = token.clone();
        cases.push(Case {
            query: vec![("refund_id", token.clone())],
            ok: Box::new(move |r| text(r, "token") == t),
            wanted: vec![token],
        });
    }
    // Several values of one filter: every one counts.
    for field in ["status", "payment_id"] {
        let mut values: Vec<(String, String)> = Vec::new();
        for r in &sample {
            let v = text(r, field);
            if !v.is_empty() && !values.iter().any(|(seen, _)| seen == v) {
                values.push((v.to_owned(), text(r, "token").to_owned()));
            }
            if values.len() == 2 {
                break;
            }
        }
        if values.len() == 2 {
            let allowed: Vec<String> = values.iter().map(|(v, _)| v.clone()).collect();
            cases.push(Case {
                query: values.iter().map(|(v, _)| (field, v.clone())).collect(),
                ok: Box::new(move |r| allowed.iter().any(|a| text(r, field) == a)),
                wanted: values.into_iter().map(|(_, t)| t).collect(),
            });
        }
    }
    // Inclusive date bounds, and two filters together.
    if let Some(at) = created_second(first) {
        cases.push(Case {
            query: vec![("start_date", at.to_string()), ("end_date", at.to_string())],
            ok: Box::new(move |r| created_second(r) == Some(at)),
            wanted: vec![text(first, "token").to_owned()],
        });
    }
    let (status, payment) = (
        text(first, "status").to_owned(),
        text(first, "payment_id").to_owned(),
    );
    if !status.is_empty() && !payment.is_empty() {
        let (s, p) = (status.clone(), payment.clone());
        cases.push(Case {
            query: vec![("status", status), ("payment_id", payment)],
            ok: Box::new(move |r| text(r, "status") == s && text(r, "payment_id") == p),
            wanted: vec![text(first, "token").to_owned()],
        });
    }
    let answers = c.map(&cases, |case| {
        let mut r = Request::get("/refunds").q("limit", 100);
        for (k, v) in &case.query {
            r = r.q(k, v);
        }
        c.send(r)
    });
    let mut judge = Judge::default();
    for (case, e) in cases.iter().zip(&answers) {
        let Some(rows) = e.data().and_then(|d| d["keys"].as_array()) else {
            judge.check(false, || {
                c.fail(
                    e,
                    format!("/refunds?{}: no keys array", query_text(&case.query)),
                )
            });
            continue;
        };
        for row in rows {
            judge.check((case.ok)(row), || {
                c.fail(
                    e,
                    format!(
                        "/refunds?{}: refund {} does not match",
                        query_text(&case.query),
                        show(row.get("token"))
                    ),
                )
            });
        }
        for wanted in &case.wanted {
            judge.check(rows.iter().any(|r| r["token"] == wanted.as_str()), || {
                c.fail(
                    e,
                    format!(
                        "/refunds?{}: refund {wanted} is missing",
                        query_text(&case.query)
                    ),
                )
            });
        }
    }
    judge.outcome()
}

fn direction(c: &Check<'_>) -> Outcome {
    let directions: [Option<&str>; 8] = [
        Some("DESC"),
        Some("ASC"),
        None,
        Some("asc"),
        Some("Asc"),
        Some(""),
        Some("desc"),
        Some("sideways"),
    ];
    let answers = c.map(&directions, |d| {
        let r = Request::get("/refunds").q("limit", 100);
        c.send(match d {
            Some(d) => r.q("direction", d),
            None => r,
        })
    });
    let tokens = |i: usize| -> Option<Vec<String>> {
        answers[i]
            .data()
            .and_then(|d| d["keys"].as_array())
            .map(|rows| rows.iter().map(|r| text(r, "token").to_owned()).collect())
    };
    let Some(desc) = tokens(0) else {
        return Outcome::judged(
            1,
            vec![c.fail(&answers[0], "direction DESC: no keys array")],
        );
    };
    let count = answers[0]
        .data()
        .and_then(|d| d["count"].as_u64())
        .unwrap_or(u64::MAX);
    let mut judge = Judge::default();
    if count <= desc.len() as u64 && desc.len() > 1 {
        let mut reversed = desc.clone();
        reversed.reverse();
        judge.check(tokens(1).as_ref() == Some(&reversed), || {
            c.fail(&answers[1], "direction ASC: not the DESC order reversed")
        });
    }
    for (i, d) in directions.iter().enumerate().skip(2) {
        judge.check(tokens(i).as_ref() == Some(&desc), || {
            c.fail(
                &answers[i],
                format!(
                    "direction {}: not the DESC order (uppercase ASC only sorts ascending)",
                    d.map_or("absent".to_owned(), |d| format!("{d:?}"))
                ),
            )
        });
    }
    judge.outcome()
}

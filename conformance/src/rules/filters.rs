//! filters.*: the filters of the lists, alone, combined, and with several
//! values.

use serde_json::Value;

use super::support::{Judge, query_text, text};
use super::{Check, Level, Outcome, Rule};
use crate::http::{Request, show};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "filters.keys",
            level: Level::Required,
            source: "API.md Access keys (name fragments, active filter)",
            summary: "is_active keeps keys of that state; names keeps keys whose name contains a fragment",
            faults: &["keys-active-filter-ignored"],
            check: keys,
            observe: None,
        },
        Rule {
            id: "filters.merchants",
            level: Level::Required,
            source: "API.md Merchants (enabled filter, merchant identifiers, merchant names)",
            summary: "enabled, merchant_identifiers and names keep only matching merchants",
            faults: &["merchants-enabled-filter-ignored"],
            check: merchants,
            observe: None,
        },
        Rule {
            id: "filters.rail-merchants",
            level: Level::Required,
            source: "API.md Merchants (onboarding status filter, name filter)",
            summary: "status keeps merchants of that status; name finds a merchant by its name",
            faults: &["rail-status-filter-ignored"],
            check: rail_merchants,
            observe: None,
        },
        Rule {
            id: "filters.qrs",
            level: Level::Required,
            source: "API.md QR codes (type defaults to STATIC); Limits",
            summary: "without type only STATIC codes; type=DYNAMIC only DYNAMIC; aggregator_merchant_id only that merchant's",
            faults: &["qr-default-dynamic"],
            check: qrs,
            observe: None,
        },
        Rule {
            id: "filters.combined",
            level: Level::Required,
            source: "API.md Settlements (batch token, status), Access keys, Merchants, QR codes (their filters)",
            summary: "two filters of one list together keep the rows matching both: batch_id with status, is_active with names, enabled with merchant_identifiers, status with name, type with aggregator_merchant_id",
            faults: &[
                "batch-filter-drops-status",
                "short-batch-token",
                "status-filter-ignored",
                "batch-filter-ignored",
                "keys-active-filter-ignored",
                "merchants-enabled-filter-ignored",
                "rail-status-filter-ignored",
            ],
            check: combined,
            observe: None,
        },
        Rule {
            id: "filters.multi-value",
            level: Level::Required,
            source: "API.md Access keys (comma-separated list of name fragments), Merchants (comma-separated lists of identifiers and names)",
            summary: "a comma-separated filter keeps the rows of every value it lists, not only the first",
            faults: &["merchant-ids-first-only"],
            check: multi_value,
            observe: None,
        },
    ]
}

/// The rows of one filtered request, judged: every row must be `ok`,
/// `included` must be listed, `excluded` must not.
struct Filtered<'a> {
    path: &'a str,
    key: &'a str,
    query: Vec<(&'a str, String)>,
    ok: Box<dyn Fn(&Value) -> bool + Sync + 'a>,
    included: Vec<String>,
    excluded: Vec<String>,
}

fn judge_all(c: &Check<'_>, cases: Vec<Filtered<'_>>) -> Outcome {
    let answers = c.map(&cases, |f| {
        let mut r = Request::get(f.path);
        for (k, v) in &f.query {
            r = r.q(k, v);
        }
        c.send(r)
    });
    let mut judge = Judge::default();
    for (f, e) in cases.iter().zip(&answers) {
        let Some(rows) = e.data().and_then(|d| d[f.key].as_array()) else {
            judge.check(false, || {
                c.fail(
                    e,
                    format!("{}?{}: no {} array", f.path, query_text(&f.query), f.key),
                )
            });
            continue;
        };
        for row in rows {
            judge.check((f.ok)(row), || {
                c.fail(
                    e,
                    format!(
                        "{}?{}: row {} does not match",
                        f.path,
                        query_text(&f.query),
                        show(row.get("token"))
                    ),
                )
            });
        }
        for wanted in &f.included {
            judge.check(rows.iter().any(|r| r["token"] == wanted.as_str()), || {
                c.fail(
                    e,
                    format!("{}?{}: {wanted} is missing", f.path, query_text(&f.query)),
                )
            });
        }
        for unwanted in &f.excluded {
            judge.check(
                !rows.iter().any(|r| r["token"] == unwanted.as_str()),
                || {
                    c.fail(
                        e,
                        format!("{}?{}: {unwanted} is listed", f.path, query_text(&f.query)),
                    )
                },
            );
        }
    }
    judge.outcome()
}

fn case<'a>(
    path: &'a str,
    key: &'a str,
    query: Vec<(&'a str, String)>,
    ok: impl Fn(&Value) -> bool + Sync + 'a,
) -> Filtered<'a> {
    Filtered {
        path,
        key,
        query,
        ok: Box::new(ok),
        included: Vec::new(),
        excluded: Vec::new(),
    }
}

impl Filtered<'_> {
    fn including(mut self, token: &str) -> Self {
        self.included.push(token.to_owned());
        self
    }

    fn excluding(mut self, token: &str) -> Self {
        self.excluded.push(token.to_owned());
        self
    }
}

fn rows(c: &Check<'_>, op: &str, key: &str) -> Vec<Value> {
    c.ctx.rows(op, key).map(|(_, r)| r.clone()).collect()
}

/// A name filter with a sampled row's exact name (a fragment of itself
/// whatever the server's matching): that row is listed, and every row
/// listed contains the name.
fn by_name<'a>(path: &'a str, key: &'a str, param: &'a str, row: &Value) -> Option<Filtered<'a>> {
    let name = text(row, "name").to_owned();
    if name.is_empty() || name.contains(',') {
        return None;
    }
    let lower = name.to_lowercase();
    Some(
        case(path, key, vec![(param, name.clone())], move |r| {
            text(r, "name").to_lowercase().contains(&lower)
        })
        .including(text(row, "token")),
    )
}

fn keys(c: &Check<'_>) -> Outcome {
    let mut cases: Vec<Filtered<'_>> = [true, false]
        .into_iter()
        .map(|active| {
            case(
                "/keys",
                "keys",
                vec![("is_active", active.to_string())],
                move |k| k["is_active"] == active,
            )
        })
        .collect();
    if let Some(k) = rows(c, "keys", "keys").first() {
        cases.extend(by_name("/keys", "keys", "names", k));
    }
    judge_all(c, cases)
}

fn merchants(c: &Check<'_>) -> Outcome {
    let mut cases: Vec<Filtered<'_>> = [true, false]
        .into_iter()
        .map(|enabled| {
            case(
                "/merchants",
                "merchants",
                vec![("enabled", enabled.to_string())],
                move |m| m["enabled"] == enabled,
            )
        })
        .collect();
    let sample = rows(c, "merchants", "merchants");
    if let Some(m) = sample.first() {
        let token = text(m, "token").to_owned();
        let wanted = token.clone();
        cases.push(
            case(
                "/merchants",
                "merchants",
                vec![("merchant_identifiers", token.clone())],
                move |r| r["token"] == wanted.as_str(),
            )
            .including(&token),
        );
        cases.extend(by_name("/merchants", "merchants", "names", m));
    }
    judge_all(c, cases)
}

fn rail_merchants(c: &Check<'_>) -> Outcome {
    let mut cases: Vec<Filtered<'_>> = ["Active", "Inactive", "Suspended"]
        .into_iter()
        .map(|status| {
            case(
                "/rail-merchants",
                "merchants",
                vec![("status", status.into())],
                move |m| m["status"] == status,
            )
        })
        .collect();
    if let Some(m) = rows(c, "rail-merchants", "merchants").first() {
        let name = text(m, "name");
        if !name.is_empty() {
            cases.push(
                case(
                    "/rail-merchants",
                    "merchants",
                    vec![("name", name.into())],
                    |_| true,
                )
                .including(text(m, "token")),
            );
        }
    }
    judge_all(c, cases)
}

fn qrs(c: &Check<'_>) -> Outcome {
    let mut cases = vec![
        case("/qrs", "qr_codes", vec![], |q| q["type"] == "STATIC"),
        case("/qrs", "qr_codes", vec![("type", "DYNAMIC".into())], |q| {
            q["type"] == "DYNAMIC"
        }),
    ];
    if let Some(q) = rows(c, "qrs-dynamic", "qr_codes").first() {
        let merchant = text(q, "aggregator_merchant_id").to_owned();
        let wanted = merchant.clone();
        cases.push(
            case(
                "/qrs",
                "qr_codes",
                vec![
                    ("type", "DYNAMIC".into()),
                    ("aggregator_merchant_id", merchant),
                ],
                move |r| r["aggregator_merchant_id"] == wanted.as_str(),
            )
            .including(text(q, "token")),
        );
    }
    judge_all(c, cases)
}

const BATCH_STATUSES: [&str; 4] = [
    "BATCH_CREATED",
    "BATCH_PROCESSING",
    "BATCH_COMPLETED",
    "BATCH_FAILED",
];

fn combined(c: &Check<'_>) -> Outcome {
    let mut cases = Vec::new();
    // A batch with its own status, and with another one.
    if let Some(b) = rows(c, "batches", "batches")
        .into_iter()
        .find(|b| BATCH_STATUSES.contains(&text(b, "status")))
    {
        let token = text(&b, "token").to_owned();
        let own = BATCH_STATUSES
            .iter()
            .position(|s| *s == text(&b, "status"))
            .unwrap_or(0);
        let other = (own + 1) % 4;
        let t = token.clone();
        cases.push(
            case(
                "/settlements/batches",
                "batches",
                vec![("batch_id", token.clone()), ("status", own.to_string())],
                move |r| r["token"] == t.as_str(),
            )
            .including(&token),
        );
        cases.push(
            case(
                "/settlements/batches",
                "batches",
                vec![("batch_id", token.clone()), ("status", other.to_string())],
                |_| false,
            )
            .excluding(&token),
        );
    }
    // A key with its own state and name, and with the other state.
    if let Some(k) = rows(c, "keys", "keys").into_iter().find(|k| {
        k["is_active"].is_boolean() && !text(k, "name").is_empty() && !text(k, "name").contains(',')
    }) {
        let active = k["is_active"].as_bool().unwrap_or(false);
        let name = text(&k, "name").to_owned();
        let lower = name.to_lowercase();
        cases.push(
            case(
                "/keys",
                "keys",
                vec![("is_active", active.to_string()), ("names", name.clone())],
                move |r| {
                    r["is_active"] == active && text(r, "name").to_lowercase().contains(&lower)
                },
            )
            .including(text(&k, "token")),
        );
        cases.push(
            case(
                "/keys",
                "keys",
                vec![("is_active", (!active).to_string()), ("names", name)],
                move |r| r["is_active"] == !active,
            )
            .excluding(text(&k, "token")),
        );
    }
    // A merchant by identifier, with its own enabled state and the other.
    if let Some(m) = rows(c, "merchants", "merchants")
        .into_iter()
        .find(|m| m["enabled"].is_boolean())
    {
        let enabled = m["enabled"].as_bool().unwrap_or(false);
        let token = text(&m, "token").to_owned();
        let t = token.clone();
        cases.push(
            case(
                "/merchants",
                "merchants",
                vec![
                    ("enabled", enabled.to_string()),
                    ("merchant_identifiers", token.clone()),
                ],
                move |r| r["token"] == t.as_str() && r["enabled"] == enabled,
            )
            .including(&token),
        );
        cases.push(
            case(
                "/merchants",
                "merchants",
                vec![
                    ("enabled", (!enabled).to_string()),
                    ("merchant_identifiers", token.clone()),
                ],
                |_| false,
            )
            .excluding(&token),
        );
    }
    // A rail merchant by name, with its status and another.
    if let Some(m) = rows(c, "rail-merchants", "merchants")
        .into_iter()
        .find(|m| {
            ["Active", "Inactive", "Suspended"].contains(&text(m, "status"))
                && !text(m, "name").is_empty()
        })
    {
        let status = text(&m, "status").to_owned();
        let other = if status == "Active" {
            "Suspended"
        } else {
            "Active"
        };
        let (s, o) = (status.clone(), other.to_owned());
        cases.push(
            case(
                "/rail-merchants",
                "merchants",
                vec![("status", status), ("name", text(&m, "name").into())],
                move |r| r["status"] == s.as_str(),
            )
            .including(text(&m, "token")),
        );
        cases.push(
            case(
                "/rail-merchants",
                "merchants",
                vec![("status", other.into()), ("name", text(&m, "name").into())],
                move |r| r["status"] == o.as_str(),
            )
            .excluding(text(&m, "token")),
        );
    }
    // A dynamic code under STATIC with its merchant: absent.
    if let Some(q) = rows(c, "qrs-dynamic", "qr_codes").first() {
        cases.push(
            case(
                "/qrs",
                "qr_codes",
                vec![
                    ("type", "STATIC".into()),
                    (
                        "aggregator_merchant_id",
                        text(q, "aggregator_merchant_id").into(),
                    ),
                ],
                |r| r["type"] == "STATIC",
            )
            .excluding(text(q, "token")),
        );
    }
    if cases.is_empty() {
        return Outcome::skipped("no list showed rows to filter");
    }
    judge_all(c, cases)
}

fn multi_value(c: &Check<'_>) -> Outcome {
    let mut cases = Vec::new();
    let two = |op: &str, key: &str, field: &str| -> Vec<(String, String)> {
        let mut seen: Vec<(String, String)> = Vec::new();
        for r in rows(c, op, key) {
            let value = text(&r, field).to_owned();
            if value.is_empty() || value.contains(',') || seen.iter().any(|(v, _)| *v == value) {
                continue;
            }
            seen.push((value, text(&r, "token").to_owned()));
            if seen.len() == 2 {
                break;
            }
        }
        seen
    };
    for (path, key, param, field) in [
        ("/keys", "keys", "names", "name"),
        ("/merchants", "merchants", "names", "name"),
        ("/merchants", "merchants", "merchant_identifiers", "token"),
    ] {
        let pair = two(
            if path == "/keys" { "keys" } else { "merchants" },
            key,
            field,
        );
        if pair.len() < 2 {
            continue;
        }
        let values: Vec<String> = pair.iter().map(|(v, _)| v.clone()).collect();
        let lowered: Vec<String> = values.iter().map(|v| v.to_lowercase()).collect();
        let f = field.to_owned();
        let mut filtered = case(path, key, vec![(param, values.join(","))], move |r| {
            let have = text(r, &f).to_lowercase();
            lowered.iter().any(|v| have.contains(v.as_str()))
        });
        for (_, token) in &pair {
            filtered = filtered.including(token);
        }
        cases.push(filtered);
    }
    if cases.is_empty() {
        return Outcome::skipped("no list showed two rows to filter by");
    }
    judge_all(c, cases)
}

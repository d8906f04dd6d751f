//! Offset pagination and the filters of the offset lists.

use serde_json::Value;

use super::support::{Judge, property};
use super::{Failure, Level, Outcome, Rule};
use crate::ctx::Ctx;
use crate::http::{Request, show};

/// Page sizes the offset rules ask for: API.md shows no maximum for most
/// offset lists, and the reference's default is 10, so nothing larger is
/// needed to judge them.
const MAX_ASKED: u64 = 10;

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "offset.pages",
            level: Level::Required,
            source: "API.md Access keys, QR codes (offset: records skipped before the result set); Merchants, Webhooks",
            summary: "generated (offset, limit) pages equal the same slice of the list",
            faults: &["offset-ignored"],
            check: pages,
        },
        Rule {
            id: "offset.limit",
            level: Level::Required,
            source: "API.md Access keys (page size 0 to 100); QR codes (maximum QR codes returned)",
            summary: "generated limits: an offset list page never holds more rows than asked",
            faults: &["offset-limit-ignored"],
            check: limit,
        },
        Rule {
            id: "filters.keys",
            level: Level::Required,
            source: "API.md Access keys (name fragments, active filter)",
            summary: "is_active keeps keys of that state; names keeps keys whose name contains a fragment",
            faults: &["keys-active-filter-ignored"],
            check: keys,
        },
        Rule {
            id: "filters.merchants",
            level: Level::Required,
            source: "API.md Merchants (enabled filter, merchant identifiers, merchant names)",
            summary: "enabled, merchant_identifiers and names keep only matching merchants",
            faults: &["merchants-enabled-filter-ignored"],
            check: merchants,
        },
        Rule {
            id: "filters.rail-merchants",
            level: Level::Required,
            source: "API.md Merchants (onboarding status filter, name filter)",
            summary: "status keeps merchants of that status; name finds a merchant by its name",
            faults: &["rail-status-filter-ignored"],
            check: rail_merchants,
        },
        Rule {
            id: "filters.qrs",
            level: Level::Required,
            source: "API.md QR codes (type defaults to STATIC); Limits",
            summary: "without type only STATIC codes; type=DYNAMIC only DYNAMIC; aggregator_merchant_id only that merchant's",
            faults: &["qr-default-dynamic"],
            check: qrs,
        },
    ]
}

/// The offset lists: path and the key of their rows.
const LISTS: &[(&str, &str)] = &[
    ("/keys", "keys"),
    ("/merchants", "merchants"),
    ("/rail-merchants", "merchants"),
    ("/qrs", "qr_codes"),
    ("/refunds", "keys"),
    ("/webhooks", "endpoints"),
];

/// A row's identity: its token.
fn token(row: &Value) -> String {
    row.get("token")
        .map(|t| t.to_string())
        .unwrap_or_else(|| row.to_string())
}

fn rows_of(
    ctx: &Ctx,
    path: &str,
    key: &str,
    query: &[(&str, String)],
) -> Result<Vec<Value>, Failure> {
    let mut r = Request::get(path);
    for (k, v) in query {
        r = r.q(k, v);
    }
    let e = ctx.http.send(r);
    e.data()
        .and_then(|d| d[key].as_array().cloned())
        .ok_or_else(|| {
            Failure::at(
                &*ctx,
                &e,
                format!("{path}: no {key} array in a success answer"),
            )
        })
}

fn pages(ctx: &Ctx) -> Outcome {
    // The reference: the first two pages of MAX_ASKED rows of each list.
    let mut reference = Vec::new();
    for (path, key) in LISTS {
        let mut rows = Vec::new();
        for offset in [0, MAX_ASKED] {
            match rows_of(
                ctx,
                path,
                key,
                &[
                    ("limit", MAX_ASKED.to_string()),
                    ("offset", offset.to_string()),
                ],
            ) {
                Ok(r) => rows.extend(r.iter().map(token)),
                Err(f) => return Outcome::judged(1, vec![f]),
            }
        }
        reference.push(rows);
    }
    let strategy = (0..LISTS.len(), 0..MAX_ASKED, 1..=MAX_ASKED);
    property(ctx, "offset.pages", strategy, |(i, offset, limit)| {
        let (path, key) = LISTS[*i];
        let known = &reference[*i];
        let (o, l) = (*offset as usize, *limit as usize);
        let e = ctx
            .http
            .send(Request::get(path).q("limit", limit).q("offset", offset));
        let got: Vec<String> = e
            .data()
            .and_then(|d| d[key].as_array())
            .map(|rows| rows.iter().map(token).collect())
            .ok_or_else(|| Failure::at(ctx, &e, format!("{path}: no {key} array")))?;
        let expected: Vec<String> = known.iter().skip(o).take(l).cloned().collect();
        if got == expected {
            Ok(())
        } else {
            Err(Failure::at(
                ctx,
                &e,
                format!(
                    "{path} offset {offset} limit {limit}: rows {got:?}, the list has {expected:?} there"
                ),
            ))
        }
    })
}

fn limit(ctx: &Ctx) -> Outcome {
    property(
        ctx,
        "offset.limit",
        (0..LISTS.len(), 1..=MAX_ASKED),
        |(i, limit)| {
            let (path, key) = LISTS[*i];
            let e = ctx.http.send(Request::get(path).q("limit", limit));
            let rows = e.data().and_then(|d| d[key].as_array()).map_or(0, Vec::len);
            if e.success() && rows as u64 <= *limit {
                Ok(())
            } else {
                Err(Failure::at(
                    ctx,
                    &e,
                    format!("{path} limit {limit}: {rows} rows"),
                ))
            }
        },
    )
}

/// Checks every row of one filtered request.
fn filtered(
    ctx: &Ctx,
    judge: &mut Judge,
    path: &str,
    key: &str,
    query: Vec<(&str, String)>,
    ok: impl Fn(&Value) -> bool,
    must_include: Option<&str>,
) {
    let mut r = Request::get(path);
    for (k, v) in &query {
        r = r.q(k, v);
    }
    let e = ctx.http.send(r);
    let Some(rows) = e.data().and_then(|d| d[key].as_array()) else {
        judge.check(false, || {
            Failure::at(ctx, &e, format!("{path} {query:?}: no {key} array"))
        });
        return;
    };
    for row in rows {
        judge.check(ok(row), || {
            Failure::at(
                ctx,
                &e,
                format!(
                    "{path} {query:?}: row {} does not match",
                    show(row.get("token"))
                ),
            )
        });
    }
    if let Some(wanted) = must_include {
        judge.check(rows.iter().any(|r| r["token"] == wanted), || {
            Failure::at(ctx, &e, format!("{path} {query:?}: {wanted} is missing"))
        });
    }
}

fn sample_rows(ctx: &Ctx, op: &str, key: &str) -> Vec<Value> {
    ctx.data(op)
        .and_then(|d| d[key].as_array())
        .cloned()
        .unwrap_or_default()
}

/// A `names` filter with a sampled row's exact name (a fragment of itself,
/// and a name whatever the server's matching): that row is listed, and every
/// row listed contains the name.
fn by_name(ctx: &Ctx, judge: &mut Judge, path: &str, key: &str, sampled: &Value) {
    let name = sampled["name"].as_str().unwrap_or("").to_owned();
    if name.is_empty() || name.contains(',') {
        return;
    }
    let lower = name.to_lowercase();
    let token = sampled["token"].as_str().map(str::to_owned);
    let contains = |row: &Value| {
        row["name"]
            .as_str()
            .is_some_and(|n| n.to_lowercase().contains(&lower))
    };
    filtered(
        ctx,
        judge,
        path,
        key,
        vec![("names", name.clone())],
        contains,
        token.as_deref(),
    );
}

fn keys(ctx: &Ctx) -> Outcome {
    let mut judge = Judge::default();
    for active in [true, false] {
        filtered(
            ctx,
            &mut judge,
            "/keys",
            "keys",
            vec![("is_active", active.to_string())],
            |k| k["is_active"] == active,
            None,
        );
    }
    if let Some(k) = sample_rows(ctx, "keys", "keys").first() {
        by_name(ctx, &mut judge, "/keys", "keys", k);
    }
    judge.outcome()
}

fn merchants(ctx: &Ctx) -> Outcome {
    let mut judge = Judge::default();
    for enabled in [true, false] {
        filtered(
            ctx,
            &mut judge,
            "/merchants",
            "merchants",
            vec![("enabled", enabled.to_string())],
            |m| m["enabled"] == enabled,
            None,
        );
    }
    let sample = sample_rows(ctx, "merchants", "merchants");
    let tokens: Vec<String> = sample
        .iter()
        .take(2)
        .filter_map(|m| m["token"].as_str().map(str::to_owned))
        .collect();
    if !tokens.is_empty() {
        let set = tokens.clone();
        filtered(
            ctx,
            &mut judge,
            "/merchants",
            "merchants",
            vec![("merchant_identifiers", tokens.join(","))],
            |m| {
                m["token"]
                    .as_str()
                    .is_some_and(|t| set.iter().any(|s| s == t))
            },
            tokens.first().map(String::as_str),
        );
    }
    if let Some(m) = sample.first() {
        by_name(ctx, &mut judge, "/merchants", "merchants", m);
    }
    judge.outcome()
}

fn rail_merchants(ctx: &Ctx) -> Outcome {
    let mut judge = Judge::default();
    for status in ["Active", "Inactive", "Suspended"] {
        filtered(
            ctx,
            &mut judge,
            "/rail-merchants",
            "merchants",
            vec![("status", status.into())],
            |m| m["status"] == status,
            None,
        );
    }
    if let Some(m) = sample_rows(ctx, "rail-merchants", "merchants").first()
        && let (Some(name), Some(token)) = (m["name"].as_str(), m["token"].as_str())
    {
        filtered(
            ctx,
            &mut judge,
            "/rail-merchants",
            "merchants",
            vec![("name", name.into())],
            |_| true,
            Some(token),
        );
    }
    judge.outcome()
}

fn qrs(ctx: &Ctx) -> Outcome {
    let mut judge = Judge::default();
    filtered(
        ctx,
        &mut judge,
        "/qrs",
        "qr_codes",
        vec![],
        |q| q["type"] == "STATIC",
        None,
    );
    filtered(
        ctx,
        &mut judge,
        "/qrs",
        "qr_codes",
        vec![("type", "DYNAMIC".into())],
        |q| q["type"] == "DYNAMIC",
        None,
    );
    let sample = sample_rows(ctx, "qrs-dynamic", "qr_codes");
    if let Some(merchant) = sample
        .first()
        .and_then(|q| q["aggregator_merchant_id"].as_str())
    {
        filtered(
            ctx,
            &mut judge,
            "/qrs",
            "qr_codes",
            vec![
                ("type", "DYNAMIC".into()),
                ("aggregator_merchant_id", merchant.into()),
            ],
            |q| q["aggregator_merchant_id"] == merchant,
            sample.first().and_then(|q| q["token"].as_str()),
        );
    }
    judge.outcome()
}

//! Cursor pagination: settlement batches and a batch's transactions.

use std::collections::HashSet;

use proptest::prelude::*;
use serde_json::Value;

use super::support::{Judge, num, property};
use super::{Failure, Level, Outcome, Rule};
use crate::ctx::Ctx;
use crate::http::{Exchange, Request, encode, show};

/// Pages a walk may take beyond the count's promise before it is endless.
const SLACK_PAGES: u64 = 3;
/// Rows a walk judges at most (a million-row batch is judged on a prefix).
const WALK_ROWS: u64 = 20_000;

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "cursor.default-limit",
            level: Level::Required,
            source: "API.md Settlements (page size default 30, 0 means the default); Limits",
            summary: "without a limit, or with 0, a cursor list page holds 30 rows (or all when fewer match)",
            faults: &["default-limit-10"],
            check: default_limit,
        },
        Rule {
            id: "cursor.max-limit",
            level: Level::Required,
            source: "API.md Settlements (maximum 100); Limits",
            summary: "generated limits: never more than min(limit, 100) rows; 400 or a capped page above 100",
            faults: &["no-limit-cap"],
            check: max_limit,
        },
        Rule {
            id: "cursor.order",
            level: Level::Required,
            source: "API.md Settlements (sort direction: uppercase only, on the numeric id, invalid or empty means DESC); Limits",
            summary: "generated directions: exactly ASC sorts ascending on id; anything else (lowercase, empty, garbage) descending",
            faults: &["lowercase-asc"],
            check: order,
        },
        Rule {
            id: "cursor.walk",
            level: Level::Required,
            source: "API.md Settlements (cursor: pass the previous next_cursor); Conventions 5",
            summary: "a full walk, ASC and DESC at several limits, visits filtered_count rows exactly once, in order, and ends",
            faults: &["cursor-repeat"],
            check: walk,
        },
        Rule {
            id: "cursor.counts",
            level: Level::Required,
            source: "API.md Conventions 5 (filtered_count and total_count, numeric strings)",
            summary: "filtered_count and total_count are numeric strings and filtered_count <= total_count",
            faults: &["filtered-exceeds-total"],
            check: counts,
        },
        Rule {
            id: "cursor.status-filter",
            level: Level::Required,
            source: "API.md Settlements (status 0..3); States (Settlement batch status)",
            summary: "status=N lists only batches whose status is the name of N",
            faults: &["status-filter-ignored"],
            check: status_filter,
        },
        Rule {
            id: "cursor.batch-filter",
            level: Level::Required,
            source: "API.md Settlements (batch token restricts to one batch)",
            summary: "batch_id=TOKEN lists that batch only",
            faults: &["batch-filter-ignored"],
            check: batch_filter,
        },
        Rule {
            id: "cursor.bad-batch-token",
            level: Level::Required,
            source: "API.md Limits (sb_, exactly 39 characters); Settlements (400 error.bad_request); Path parameters",
            summary: "generated malformed batch tokens (every wrong length, wrong prefixes) get 400, in the query and in the path",
            faults: &["lenient-batch-token"],
            check: bad_batch_token,
        },
        Rule {
            id: "cursor.only-settlement-txns",
            level: Level::Required,
            source: "API.md Settlements (only_settlement_txns)",
            summary: "only_settlement_txns=true empties transactions; false empties settlement_transactions",
            faults: &["payouts-in-transactions"],
            check: only_settlement_txns,
        },
        Rule {
            id: "wire.cursor-bounds",
            level: Level::Observation,
            source: "WIRE.md Cursor pagination (next_cursor is the last row's id; the next page follows it)",
            summary: "generated cursors (real ids, their neighbours, random numbers): a page holds only ids beyond the cursor",
            faults: &["cursor-inclusive"],
            check: cursor_bounds,
        },
        Rule {
            id: "wire.limit-validation",
            level: Level::Observation,
            source: "WIRE.md Cursor pagination (negative or non-numeric limit: 400)",
            summary: "a negative or non-numeric limit gets 400",
            faults: &["negative-limit-accepted"],
            check: limit_validation,
        },
    ]
}

/// One cursor list of the server.
#[derive(Debug, Clone)]
struct List {
    name: &'static str,
    path: String,
    rows: &'static str,
}

fn lists(ctx: &Ctx) -> Vec<List> {
    let mut out = vec![List {
        name: "batches",
        path: "/settlements/batches".into(),
        rows: "batches",
    }];
    if let Some((token, _)) = &ctx.found.busy_batch {
        out.push(List {
            name: "transactions",
            path: format!("/settlements/batches/{}/transactions", encode(token)),
            rows: "transactions",
        });
    }
    out
}

/// A page: the exchange, its rows and counts when it answered 2xx.
struct Page {
    e: Exchange,
    rows: Option<Vec<Value>>,
    next: Option<String>,
    filtered: Option<u64>,
    total: Option<u64>,
}

fn page(ctx: &Ctx, list: &List, query: &[(&str, String)]) -> Page {
    let mut r = Request::get(list.path.clone());
    for (k, v) in query {
        r = r.q(k, v);
    }
    let e = ctx.http.send(r);
    let data = e.data();
    let rows = data.and_then(|d| d[list.rows].as_array()).cloned();
    let next = data
        .and_then(|d| d["next_cursor"].as_str())
        .map(str::to_owned);
    let filtered = data.and_then(|d| num(&d["count"]["filtered_count"]));
    let total = data.and_then(|d| num(&d["count"]["total_count"]));
    Page {
        e,
        rows,
        next,
        filtered,
        total,
    }
}

fn ids(rows: &[Value]) -> Result<Vec<u64>, String> {
    rows.iter()
        .map(|r| {
            num(&r["id"]).ok_or_else(|| format!("row id {} is not numeric", show(r.get("id"))))
        })
        .collect()
}

fn rows_or_fail<'p>(ctx: &Ctx, p: &'p Page, what: &str) -> Result<&'p Vec<Value>, Failure> {
    p.rows.as_ref().ok_or_else(|| {
        Failure::at(
            ctx,
            &p.e,
            format!("{what}: no rows array in a success answer"),
        )
    })
}

fn default_limit(ctx: &Ctx) -> Outcome {
    let mut judge = Judge::default();
    for list in lists(ctx) {
        for query in [vec![], vec![("limit", "0".to_owned())]] {
            let p = page(ctx, &list, &query);
            let rows = match rows_or_fail(ctx, &p, list.name) {
                Ok(r) => r,
                Err(f) => {
                    judge.check(false, || f);
                    continue;
                }
            };
            let expected = p.filtered.map_or(30, |f| f.min(30)) as usize;
            judge.check(rows.len() == expected, || {
                Failure::at(
                    ctx,
                    &p.e,
                    format!(
                        "{}: {} rows, expected {expected} (default 30; filtered_count {:?})",
                        list.name,
                        rows.len(),
                        p.filtered
                    ),
                )
            });
        }
    }
    judge.outcome()
}

fn max_limit(ctx: &Ctx) -> Outcome {
    let lists = lists(ctx);
    let n = lists.len();
    let limits = prop_oneof![
        (1u64..=100).prop_map(|l| l.to_string()),
        (101u64..=100_000).prop_map(|l| l.to_string()),
        Just(u64::MAX.to_string()),
        Just("99999999999999999999999".to_owned()),
    ];
    property(ctx, "cursor.max-limit", (0..n, limits), |(i, limit)| {
        let p = page(ctx, &lists[*i], &[("limit", limit.clone())]);
        let asked = limit.parse::<u64>().unwrap_or(u64::MAX);
        match p.e.status() {
            Some(400) if asked > 100 => Ok(()),
            _ if !p.e.success() => Err(Failure::at(
                ctx,
                &p.e,
                format!("limit {limit}: not a success"),
            )),
            _ => {
                let rows = rows_or_fail(ctx, &p, lists[*i].name)?;
                let cap = asked.min(100) as usize;
                if rows.len() > cap {
                    Err(Failure::at(
                        ctx,
                        &p.e,
                        format!("limit {limit}: {} rows, more than {cap}", rows.len()),
                    ))
                } else {
                    Ok(())
                }
            }
        }
    })
}

fn order(ctx: &Ctx) -> Outcome {
    let lists = lists(ctx);
    let n = lists.len();
    let directions = prop_oneof![
        Just("ASC".to_owned()),
        Just("DESC".to_owned()),
        Just("asc".to_owned()),
        Just("desc".to_owned()),
        Just(String::new()),
        Just("Asc".to_owned()),
        "[A-Za-z]{1,8}",
    ];
    property(
        ctx,
        "cursor.order",
        (0..n, directions, 2u64..=60),
        |(i, direction, limit)| {
            let p = page(
                ctx,
                &lists[*i],
                &[
                    ("direction", direction.clone()),
                    ("limit", limit.to_string()),
                ],
            );
            let rows = rows_or_fail(ctx, &p, lists[*i].name)?;
            let ids = ids(rows).map_err(|why| Failure::at(ctx, &p.e, why))?;
            let ascending = direction == "ASC";
            let ordered = ids
                .windows(2)
                .all(|w| if ascending { w[0] < w[1] } else { w[0] > w[1] });
            if ordered {
                Ok(())
            } else {
                let want = if ascending { "ascending" } else { "descending" };
                Err(Failure::at(
                    ctx,
                    &p.e,
                    format!("direction {direction:?}: ids {ids:?} are not strictly {want}"),
                ))
            }
        },
    )
}

/// Walks a list to its end under WIRE.md's end rules, judging everything.
fn walk_one(ctx: &Ctx, list: &List, direction: &str, limit: Option<u64>) -> Result<u64, Failure> {
    let mut query = vec![("direction", direction.to_owned())];
    if let Some(l) = limit {
        query.push(("limit", l.to_string()));
    }
    let effective = limit.filter(|l| *l > 0).unwrap_or(30).min(100);
    let first = page(ctx, list, &query);
    let Some(filtered) = first.filtered else {
        return Err(Failure::at(
            ctx,
            &first.e,
            format!("{}: no numeric filtered_count", list.name),
        ));
    };
    let budget = filtered.min(WALK_ROWS).div_ceil(effective) + SLACK_PAGES;
    let mut seen = HashSet::new();
    let mut last: Option<u64> = None;
    let mut cursors = HashSet::new();
    let mut current = first;
    for pages in 1..=budget {
        let rows = rows_or_fail(ctx, &current, list.name)?.clone();
        let ids = ids(&rows).map_err(|why| Failure::at(ctx, &current.e, why))?;
        for id in ids {
            if !seen.insert(id) {
                return Err(Failure::at(
                    ctx,
                    &current.e,
                    format!("{} {direction}: row {id} served twice", list.name),
                ));
            }
            if let Some(prev) = last {
                let forward = if direction == "ASC" {
                    id > prev
                } else {
                    id < prev
                };
                if !forward {
                    return Err(Failure::at(
                        ctx,
                        &current.e,
                        format!("{} {direction}: row {id} after {prev}", list.name),
                    ));
                }
            }
            last = Some(id);
        }
        let next = current.next.clone().unwrap_or_default();
        let ended =
            rows.is_empty() || (rows.len() as u64) < effective || next.is_empty() || next == "0";
        if ended || seen.len() as u64 >= WALK_ROWS {
            let count = seen.len() as u64;
            if count != filtered && count < WALK_ROWS {
                return Err(Failure::at(
                    ctx,
                    &current.e,
                    format!(
                        "{} {direction} limit {limit:?}: the walk saw {count} rows in {pages} pages but filtered_count is {filtered}",
                        list.name
                    ),
                ));
            }
            return Ok(count);
        }
        if !cursors.insert(next.clone()) {
            return Err(Failure::at(
                ctx,
                &current.e,
                format!("{} {direction}: next_cursor {next} repeated", list.name),
            ));
        }
        let mut q = query.clone();
        q.push(("cursor", next));
        current = page(ctx, list, &q);
    }
    Err(Failure::at(
        ctx,
        &current.e,
        format!(
            "{} {direction} limit {limit:?}: no end after {budget} pages ({filtered} rows promised)",
            list.name
        ),
    ))
}

fn walk(ctx: &Ctx) -> Outcome {
    let mut judge = Judge::default();
    for list in lists(ctx) {
        for (direction, limit) in [
            ("DESC", None),
            ("ASC", Some(100)),
            ("DESC", Some(37)),
            ("ASC", Some(7)),
        ] {
            match walk_one(ctx, &list, direction, limit) {
                Ok(rows) => judge.cases += rows.max(1),
                Err(f) => judge.check(false, || f),
            }
        }
    }
    judge.outcome()
}

fn counts(ctx: &Ctx) -> Outcome {
    let mut judge = Judge::default();
    let mut queries: Vec<(List, Vec<(&str, String)>)> =
        lists(ctx).into_iter().map(|l| (l, vec![])).collect();
    for s in 0..4 {
        queries.push((lists(ctx)[0].clone(), vec![("status", s.to_string())]));
    }
    for (list, q) in queries {
        let p = page(ctx, &list, &q);
        let data = p.e.data();
        let (f, t) = (
            data.map(|d| &d["count"]["filtered_count"]),
            data.map(|d| &d["count"]["total_count"]),
        );
        match (p.filtered, p.total) {
            (Some(filtered), Some(total)) => judge.check(filtered <= total, || {
                Failure::at(
                    ctx,
                    &p.e,
                    format!(
                        "{} {q:?}: filtered_count {filtered} > total_count {total}",
                        list.name
                    ),
                )
            }),
            _ => judge.check(false, || {
                Failure::at(
                    ctx,
                    &p.e,
                    format!(
                        "{}: counts {} / {} are not numeric strings",
                        list.name,
                        show(f),
                        show(t)
                    ),
                )
            }),
        }
    }
    judge.outcome()
}

const STATUS_NAMES: [&str; 4] = [
    "BATCH_CREATED",
    "BATCH_PROCESSING",
    "BATCH_COMPLETED",
    "BATCH_FAILED",
];

fn status_filter(ctx: &Ctx) -> Outcome {
    let list = &lists(ctx)[0];
    let mut judge = Judge::default();
    for (code, name) in STATUS_NAMES.iter().enumerate() {
        let p = page(
            ctx,
            list,
            &[("status", code.to_string()), ("limit", "100".into())],
        );
        match rows_or_fail(ctx, &p, "batches") {
            Ok(rows) => {
                for row in rows {
                    judge.check(row["status"] == *name, || {
                        Failure::at(
                            ctx,
                            &p.e,
                            format!(
                                "status={code}: batch {} has status {}",
                                show(row.get("id")),
                                show(row.get("status"))
                            ),
                        )
                    });
                }
            }
            Err(f) => judge.check(false, || f),
        }
    }
    judge.outcome()
}

fn batch_filter(ctx: &Ctx) -> Outcome {
    if ctx.found.batches.is_empty() {
        return Outcome::skipped("no settlement batch was listed");
    }
    let list = &lists(ctx)[0];
    let mut judge = Judge::default();
    for token in ctx.found.batches.iter().step_by(7).take(4) {
        let p = page(ctx, list, &[("batch_id", token.clone())]);
        match rows_or_fail(ctx, &p, "batches") {
            Ok(rows) => judge.check(
                !rows.is_empty() && rows.iter().all(|r| r["token"] == token.as_str()),
                || {
                    let got: Vec<String> = rows.iter().map(|r| show(r.get("token"))).collect();
                    Failure::at(ctx, &p.e, format!("batch_id={token}: listed {got:?}"))
                },
            ),
            Err(f) => judge.check(false, || f),
        }
    }
    judge.outcome()
}

fn bad_batch_token(ctx: &Ctx) -> Outcome {
    let prefixes = prop::sample::select(vec![
        "sb_", "sB_", "SB_", "sb-", "xb_", "s_b", "sb", "txn_", "",
    ]);
    let tokens = (prefixes, "[a-z0-9-]{0,50}")
        .prop_map(|(p, tail)| format!("{p}{tail}"))
        .prop_filter("malformed", |t| {
            !(t.is_empty() || (t.starts_with("sb_") && t.len() == 39))
        });
    property(
        ctx,
        "cursor.bad-batch-token",
        (tokens, any::<bool>()),
        |(token, in_path)| {
            let e = if *in_path {
                ctx.http.send(Request::get(format!(
                    "/settlements/batches/{}/transactions",
                    encode(token)
                )))
            } else {
                ctx.http
                    .send(Request::get("/settlements/batches").q("batch_id", token))
            };
            if e.status() == Some(400) {
                Ok(())
            } else {
                let place = if *in_path { "path" } else { "batch_id" };
                Err(Failure::at(
                    ctx,
                    &e,
                    format!(
                        "malformed token {token:?} ({} characters) in the {place}: not 400",
                        token.chars().count()
                    ),
                ))
            }
        },
    )
}

fn only_settlement_txns(ctx: &Ctx) -> Outcome {
    let Some((token, _)) = &ctx.found.busy_batch else {
        return Outcome::skipped("no settlement batch was listed");
    };
    let path = format!("/settlements/batches/{}/transactions", encode(token));
    let mut judge = Judge::default();
    for (flag, empty, other) in [
        ("true", "transactions", "settlement_transactions"),
        ("false", "settlement_transactions", "transactions"),
    ] {
        let e = ctx
            .http
            .send(Request::get(path.clone()).q("only_settlement_txns", flag));
        let data = e.data();
        let ok = data
            .is_some_and(|d| d[empty].as_array().is_some_and(Vec::is_empty) && d[other].is_array());
        judge.check(ok, || {
            Failure::at(
                ctx,
                &e,
                format!(
                    "only_settlement_txns={flag}: {empty} is {}, expected []",
                    show(data.and_then(|d| d.get(empty)))
                ),
            )
        });
    }
    judge.outcome()
}

fn cursor_bounds(ctx: &Ctx) -> Outcome {
    let lists = lists(ctx);
    // Real ids of each list, newest first: cursors from real responses.
    let real: Vec<Vec<u64>> = lists
        .iter()
        .map(|l| {
            page(ctx, l, &[("limit", "100".into())])
                .rows
                .map(|r| ids(&r).unwrap_or_default())
                .unwrap_or_default()
        })
        .collect();
    let n = lists.len();
    let cursors = prop_oneof![
        3 => (any::<prop::sample::Index>(), -1i64..=1).prop_map(|(i, d)| (Some(i), d, 0u64)),
        1 => (1u64..=10_000_000_000_000).prop_map(|c| (None, 0, c)),
    ];
    let strategy = (0..n, cursors, any::<bool>(), 1u64..=20);
    property(
        ctx,
        "wire.cursor-bounds",
        strategy,
        |(i, (index, delta, random), ascending, limit)| {
            let cursor = match (index, real[*i].is_empty()) {
                (Some(ix), false) => real[*i][ix.index(real[*i].len())]
                    .saturating_add_signed(*delta)
                    .max(1),
                _ => (*random).max(1),
            };
            let direction = if *ascending { "ASC" } else { "DESC" };
            let p = page(
                ctx,
                &lists[*i],
                &[
                    ("cursor", cursor.to_string()),
                    ("direction", direction.into()),
                    ("limit", limit.to_string()),
                ],
            );
            let rows = rows_or_fail(ctx, &p, lists[*i].name)?;
            let ids = ids(rows).map_err(|why| Failure::at(ctx, &p.e, why))?;
            match ids.iter().find(|id| {
                if *ascending {
                    **id <= cursor
                } else {
                    **id >= cursor
                }
            }) {
                None => Ok(()),
                Some(id) => Err(Failure::at(
                    ctx,
                    &p.e,
                    format!("cursor {cursor} {direction}: the page holds id {id}"),
                )),
            }
        },
    )
}

fn limit_validation(ctx: &Ctx) -> Outcome {
    let mut judge = Judge::default();
    for list in lists(ctx) {
        for bad in ["-1", "-100", "abc"] {
            let p = page(ctx, &list, &[("limit", bad.into())]);
            judge.check(p.e.status() == Some(400), || {
                Failure::at(
                    ctx,
                    &p.e,
                    format!("{}: limit={bad} not refused with 400", list.name),
                )
            });
        }
    }
    judge.outcome()
}

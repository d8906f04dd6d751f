//! cursor.*: cursor pagination of settlement batches and of a batch's
//! transactions.

use std::collections::HashSet;

use proptest::prelude::*;
use serde_json::Value;

use super::support::{Judge, num};
use super::{Check, Failure, Level, Outcome, Rule};
use crate::ctx::Ctx;
use crate::http::{Exchange, Request, encode, show};

/// Pages a walk may take beyond the count's promise before it is endless.
const SLACK_PAGES: u64 = 3;
/// Rows a walk judges at most: a longer list (a million-row batch at a
/// remote staging) is judged on a prefix.
const WALK_ROWS: u64 = 3_000;

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "cursor.default-limit",
            level: Level::Required,
            source: "API.md Settlements (page size default 30, 0 means the default); Limits",
            summary: "without a limit, or with 0, a cursor list page holds 30 rows (or all when fewer match)",
            faults: &["default-limit-10"],
            check: default_limit,
            observe: None,
        },
        Rule {
            id: "cursor.max-limit",
            level: Level::Required,
            source: "API.md Settlements (maximum 100); Limits",
            summary: "generated limits: never more than min(limit, 100) rows; 400 or a capped page above 100",
            faults: &["no-limit-cap"],
            check: max_limit,
            observe: None,
        },
        Rule {
            id: "cursor.order",
            level: Level::Required,
            source: "API.md Settlements (sort direction: uppercase only, on the numeric id, invalid or empty means DESC); Limits",
            summary: "generated directions: exactly ASC sorts ascending on id; anything else (lowercase, empty, garbage) descending",
            faults: &["lowercase-asc", "numeric-id-as-number"],
            check: order,
            observe: None,
        },
        Rule {
            id: "cursor.walk",
            level: Level::Required,
            source: "API.md Settlements (cursor: pass the previous next_cursor); Conventions 5",
            summary: "a full walk, ASC and DESC at several limits, visits filtered_count rows exactly once, in order, and ends",
            faults: &[
                "cursor-repeat",
                "numeric-id-as-number",
                "default-limit-10",
                "cursor-inclusive",
                "past-end-wraps",
            ],
            check: walk,
            observe: None,
        },
        Rule {
            id: "cursor.counts",
            level: Level::Required,
            source: "API.md Conventions 5 (filtered_count and total_count, numeric strings)",
            summary: "filtered_count and total_count are numeric strings and filtered_count <= total_count",
            faults: &["filtered-exceeds-total"],
            check: counts,
            observe: None,
        },
        Rule {
            id: "cursor.status-filter",
            level: Level::Required,
            source: "API.md Settlements (status 0..3); States (Settlement batch status)",
            summary: "status=N lists only batches whose status is the name of N",
            faults: &["status-filter-ignored"],
            check: status_filter,
            observe: None,
        },
        Rule {
            id: "cursor.batch-filter",
            level: Level::Required,
            source: "API.md Settlements (batch token restricts to one batch)",
            summary: "batch_id=TOKEN lists that batch only",
            faults: &["batch-filter-ignored", "short-batch-token"],
            check: batch_filter,
            observe: None,
        },
        Rule {
            id: "cursor.bad-batch-token",
            level: Level::Required,
            source: "API.md Limits (sb_, exactly 39 characters); Settlements (400 error.bad_request); Path parameters",
            summary: "generated malformed batch tokens (every wrong length, wrong prefixes) get 400, in the query and in the path",
            faults: &["lenient-batch-token", "batch-filter-ignored"],
            check: bad_batch_token,
            observe: None,
        },
        Rule {
            id: "cursor.only-settlement-txns",
            level: Level::Required,
            source: "API.md Settlements (only_settlement_txns)",
            summary: "only_settlement_txns=true empties transactions; false, or no flag (the default), empties settlement_transactions",
            faults: &["payouts-in-transactions", "short-batch-token"],
            check: only_settlement_txns,
            observe: None,
        },
        Rule {
            id: "cursor.end",
            level: Level::Required,
            source: "API.md Settlements (cursor: omit or 0 for the first page; pass the previous next_cursor); Limits",
            summary: "a walk whose rows are an exact multiple of the page size ends with every row once; a cursor at the last row gives an empty page; cursor=0 is the first page",
            faults: &[
                "past-end-wraps",
                "cursor-zero-literal",
                "numeric-id-as-number",
                "cursor-repeat",
                "cursor-inclusive",
            ],
            check: end,
            observe: None,
        },
    ]
}

/// One cursor list of the server.
#[derive(Debug, Clone)]
pub(super) struct List {
    pub(super) name: &'static str,
    path: String,
    rows: &'static str,
}

pub(super) fn lists(ctx: &Ctx) -> Vec<List> {
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
pub(super) struct Page {
    pub(super) e: Exchange,
    pub(super) rows: Option<Vec<Value>>,
    next: Option<String>,
    filtered: Option<u64>,
    total: Option<u64>,
}

pub(super) fn page(c: &Check<'_>, list: &List, query: &[(&str, String)]) -> Page {
    let mut r = Request::get(list.path.clone());
    for (k, v) in query {
        r = r.q(k, v);
    }
    let e = c.send(r);
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

pub(super) fn ids(rows: &[Value]) -> Result<Vec<u64>, String> {
    rows.iter()
        .map(|r| {
            num(&r["id"]).ok_or_else(|| format!("row id {} is not numeric", show(r.get("id"))))
        })
        .collect()
}

fn rows_or_fail<'p>(c: &Check<'_>, p: &'p Page, what: &str) -> Result<&'p Vec<Value>, Failure> {
    p.rows
        .as_ref()
        .ok_or_else(|| c.fail(&p.e, format!("{what}: no rows array in a success answer")))
}

fn default_limit(c: &Check<'_>) -> Outcome {
    let ctx = c.ctx;
    let mut judge = Judge::default();
    for list in lists(ctx) {
        for query in [vec![], vec![("limit", "0".to_owned())]] {
            let p = page(c, &list, &query);
            let rows = match rows_or_fail(c, &p, list.name) {
                Ok(r) => r,
                Err(f) => {
                    judge.check(false, || f);
                    continue;
                }
            };
            let expected = p.filtered.map_or(30, |f| f.min(30)) as usize;
            judge.check(rows.len() == expected, || {
                c.fail(
                    &p.e,
                    format!(
                        "{}: {} rows, expected {expected} (default 30; filtered_count {})",
                        list.name,
                        rows.len(),
                        p.filtered
                            .map_or_else(|| "unreadable".to_owned(), |f| f.to_string())
                    ),
                )
            });
        }
    }
    judge.outcome()
}

fn max_limit(c: &Check<'_>) -> Outcome {
    let ctx = c.ctx;
    let lists = lists(ctx);
    let n = lists.len();
    let limits = prop_oneof![
        (1u64..=100).prop_map(|l| l.to_string()),
        (101u64..=100_000).prop_map(|l| l.to_string()),
        Just(u64::MAX.to_string()),
        Just("99999999999999999999999".to_owned()),
    ];
    c.property((0..n, limits), |(i, limit)| {
        let p = page(c, &lists[*i], &[("limit", limit.clone())]);
        let asked = limit.parse::<u64>().unwrap_or(u64::MAX);
        match p.e.status() {
            Some(400) if asked > 100 => Ok(()),
            _ if !p.e.success() => Err(c.fail(&p.e, format!("limit {limit}: not a success"))),
            _ => {
                let rows = rows_or_fail(c, &p, lists[*i].name)?;
                let cap = asked.min(100) as usize;
                if rows.len() > cap {
                    Err(c.fail(
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

fn order(c: &Check<'_>) -> Outcome {
    let ctx = c.ctx;
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
    c.property((0..n, directions, 2u64..=60), |(i, direction, limit)| {
        let p = page(
            c,
            &lists[*i],
            &[
                ("direction", direction.clone()),
                ("limit", limit.to_string()),
            ],
        );
        let rows = rows_or_fail(c, &p, lists[*i].name)?;
        let ids = ids(rows).map_err(|why| c.fail(&p.e, why))?;
        let ascending = direction == "ASC";
        let ordered = ids
            .windows(2)
            .all(|w| if ascending { w[0] < w[1] } else { w[0] > w[1] });
        if ordered {
            Ok(())
        } else {
            let want = if ascending { "ascending" } else { "descending" };
            Err(c.fail(
                &p.e,
                format!("direction {direction:?}: ids {ids:?} are not strictly {want}"),
            ))
        }
    })
}

/// Walks a list to its end under WIRE.md's end rules, judging everything.
fn walk_one(
    c: &Check<'_>,
    list: &List,
    direction: &str,
    limit: Option<u64>,
) -> Result<u64, Failure> {
    let mut query = vec![("direction", direction.to_owned())];
    if let Some(l) = limit {
        query.push(("limit", l.to_string()));
    }
    let effective = limit.filter(|l| *l > 0).unwrap_or(30).min(100);
    let first = page(c, list, &query);
    let Some(filtered) = first.filtered else {
        return Err(c.fail(
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
        let rows = rows_or_fail(c, &current, list.name)?.clone();
        let ids = ids(&rows).map_err(|why| c.fail(&current.e, why))?;
        for id in ids {
            if !seen.insert(id) {
                return Err(c.fail(
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
                    return Err(c.fail(
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
                return Err(c.fail(&current.e,
                    format!(
                        "{} {direction} limit {limit:?}: the walk saw {count} rows in {pages} pages but filtered_count is {filtered}",
                        list.name
                    ),
                ));
            }
            return Ok(count);
        }
        if !cursors.insert(next.clone()) {
            return Err(c.fail(
                &current.e,
                format!("{} {direction}: next_cursor {next} repeated", list.name),
            ));
        }
        let mut q = query.clone();
        q.push(("cursor", next));
        current = page(c, list, &q);
    }
    Err(c.fail(&current.e,
        format!(
            "{} {direction} limit {limit:?}: no end after {budget} pages ({filtered} rows promised)",
            list.name
        ),
    ))
}

/// Pages a small-limit walk may take: at a remote staging every page is
/// a round trip, so a small page size walks a prefix-sized list.
const SMALL_WALK_PAGES: u64 = 24;

fn walk(c: &Check<'_>) -> Outcome {
    let mut walks = Vec::new();
    for list in lists(c.ctx) {
        // The smallest page that still walks the list in a few pages.
        let count = page(c, &list, &[("limit", "1".into())])
            .filtered
            .unwrap_or(0);
        let small = count.div_ceil(SMALL_WALK_PAGES).clamp(7, 100);
        for (direction, limit) in [
            ("DESC", None),
            ("ASC", Some(100)),
            ("DESC", Some(37)),
            ("ASC", Some(small)),
        ] {
            walks.push((list.clone(), direction, limit));
        }
    }
    let mut judge = Judge::default();
    for result in c.map(&walks, |(list, direction, limit)| {
        walk_one(c, list, direction, *limit)
    }) {
        match result {
            Ok(rows) => judge.cases += rows.max(1),
            Err(f) => judge.check(false, || f),
        }
    }
    judge.outcome()
}

/// A page size that makes `count` rows an exact multiple of it, in a few
/// pages (at most 30), or `None`.
fn exact_limit(count: u64) -> Option<u64> {
    if count == 0 {
        return None;
    }
    (2..=100)
        .rev()
        .find(|l| count.is_multiple_of(*l) && count / l <= 30 && count / l >= 2)
        .or((count <= 100).then_some(count))
}

fn end(c: &Check<'_>) -> Outcome {
    let lists = lists(c.ctx);
    // Each list and direction on its own: their walks are sequential
    // chains of pages, but independent of each other.
    let jobs: Vec<(&List, &str)> = lists
        .iter()
        .flat_map(|l| [(l, "ASC"), (l, "DESC")])
        .collect();
    let mut judge = Judge::default();
    let mut walked = false;
    for (cases, failures, did_walk) in c.map(&jobs, |(list, direction)| end_of(c, list, direction))
    {
        judge.cases += cases;
        walked |= did_walk;
        for f in failures {
            judge.check(false, || f);
        }
    }
    if !walked && judge.cases == 0 {
        return Outcome::skipped("no cursor list had rows");
    }
    judge.outcome()
}

/// `cursor.end` on one list in one direction: cursor=0 is the first
/// page; a walk at a page size dividing the row count ends with every
/// row once; a cursor at the last row, or past it, gives an empty page.
/// Returns the cases, the failures, and whether a walk was made.
fn end_of(c: &Check<'_>, list: &List, direction: &str) -> (u64, Vec<Failure>, bool) {
    let mut cases = 0;
    let mut failures = Vec::new();
    let first_pages = [
        vec![
            ("direction", direction.to_owned()),
            ("limit", "5".to_owned()),
        ],
        vec![
            ("direction", direction.to_owned()),
            ("limit", "5".to_owned()),
            ("cursor", "0".to_owned()),
        ],
        vec![("limit", "1".to_owned())],
    ];
    let answers = c.map(&first_pages, |query| page(c, list, query));
    let [plain, zero, one] = &answers[..] else {
        unreachable!("three queries, three pages")
    };
    cases += 1;
    let same = plain.rows.as_ref().map(|r| ids(r).ok()) == zero.rows.as_ref().map(|r| ids(r).ok());
    if !(same && zero.rows.as_ref().is_some_and(|r| !r.is_empty())) {
        failures.push(c.fail(
            &zero.e,
            format!("{} {direction}: cursor=0 is not the first page", list.name),
        ));
    }
    let Some(limit) = one.filtered.and_then(exact_limit) else {
        return (cases, failures, false);
    };
    match walk_one(c, list, direction, Some(limit)) {
        Ok(rows) => cases += rows.max(1),
        Err(f) => failures.push(f),
    }
    // A cursor at the last row of the walk, and one past it.
    let reverse = if direction == "ASC" { "DESC" } else { "ASC" };
    let last_page = page(
        c,
        list,
        &[("direction", reverse.into()), ("limit", "1".into())],
    );
    let Some(edge) = last_page
        .rows
        .as_ref()
        .and_then(|r| ids(r).ok())
        .and_then(|ids| ids.first().copied())
    else {
        return (cases, failures, true);
    };
    let past = if direction == "ASC" {
        edge.saturating_add(1)
    } else {
        edge.saturating_sub(1).max(1)
    };
    let edges = [edge, past];
    let pages = c.map(&edges, |cursor| {
        page(
            c,
            list,
            &[
                ("direction", direction.into()),
                ("limit", limit.to_string()),
                ("cursor", cursor.to_string()),
            ],
        )
    });
    for (cursor, p) in edges.iter().zip(&pages) {
        cases += 1;
        let empty = p.e.success() && p.rows.as_ref().is_some_and(Vec::is_empty);
        if !empty {
            failures.push(c.fail(
                &p.e,
                format!(
                    "{} {direction}: cursor {cursor} at or past the last row ({edge}) is not an empty page",
                    list.name
                ),
            ));
        }
    }
    (cases, failures, true)
}

fn counts(c: &Check<'_>) -> Outcome {
    let ctx = c.ctx;
    let mut judge = Judge::default();
    let mut queries: Vec<(List, Vec<(&str, String)>)> =
        lists(ctx).into_iter().map(|l| (l, vec![])).collect();
    for s in 0..4 {
        queries.push((lists(ctx)[0].clone(), vec![("status", s.to_string())]));
    }
    for (list, q) in queries {
        let p = page(c, &list, &q);
        let data = p.e.data();
        let (f, t) = (
            data.map(|d| &d["count"]["filtered_count"]),
            data.map(|d| &d["count"]["total_count"]),
        );
        match (p.filtered, p.total) {
            (Some(filtered), Some(total)) => judge.check(filtered <= total, || {
                c.fail(
                    &p.e,
                    format!(
                        "{} {q:?}: filtered_count {filtered} > total_count {total}",
                        list.name
                    ),
                )
            }),
            _ => judge.check(false, || {
                c.fail(
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

fn status_filter(c: &Check<'_>) -> Outcome {
    let ctx = c.ctx;
    let list = &lists(ctx)[0];
    let mut judge = Judge::default();
    for (code, name) in STATUS_NAMES.iter().enumerate() {
        let p = page(
            c,
            list,
            &[("status", code.to_string()), ("limit", "100".into())],
        );
        match rows_or_fail(c, &p, "batches") {
            Ok(rows) => {
                for row in rows {
                    judge.check(row["status"] == *name, || {
                        c.fail(
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

fn batch_filter(c: &Check<'_>) -> Outcome {
    let ctx = c.ctx;
    if ctx.found.batches.is_empty() {
        return Outcome::skipped("no settlement batch was listed");
    }
    let list = &lists(ctx)[0];
    let mut judge = Judge::default();
    for token in ctx.found.batches.iter().step_by(7).take(4) {
        let p = page(c, list, &[("batch_id", token.clone())]);
        match rows_or_fail(c, &p, "batches") {
            Ok(rows) => judge.check(
                !rows.is_empty() && rows.iter().all(|r| r["token"] == token.as_str()),
                || {
                    let got: Vec<String> = rows.iter().map(|r| show(r.get("token"))).collect();
                    c.fail(&p.e, format!("batch_id={token}: listed {got:?}"))
                },
            ),
            Err(f) => judge.check(false, || f),
        }
    }
    judge.outcome()
}

fn bad_batch_token(c: &Check<'_>) -> Outcome {
    let prefixes = prop::sample::select(vec![
        "sb_", "sB_", "SB_", "sb-", "xb_", "s_b", "sb", "txn_", "",
    ]);
    let tokens = (prefixes, "[a-z0-9-]{0,50}")
        .prop_map(|(p, tail)| format!("{p}{tail}"))
        .prop_filter("malformed", |t| {
            !(t.is_empty() || (t.starts_with("sb_") && t.len() == 39))
        });
    c.property((tokens, any::<bool>()), |(token, in_path)| {
        let e = if *in_path {
            c.send(Request::get(format!(
                "/settlements/batches/{}/transactions",
                encode(token)
            )))
        } else {
            c.send(Request::get("/settlements/batches").q("batch_id", token))
        };
        if e.status() == Some(400) {
            Ok(())
        } else {
            let place = if *in_path { "path" } else { "batch_id" };
            Err(c.fail(
                &e,
                format!(
                    "malformed token {token:?} ({} characters) in the {place}: not 400",
                    token.chars().count()
                ),
            ))
        }
    })
}

fn only_settlement_txns(c: &Check<'_>) -> Outcome {
    // A batch with transactions; else the first listed, whose answer must
    // still have the shape (a server that fails every batch fails here).
    let Some(token) = c.ctx.found.busy_batch.as_ref().map(|(t, _)| t).or(c
        .ctx
        .found
        .batches
        .first())
    else {
        return Outcome::skipped("no settlement batch was listed");
    };
    let path = format!("/settlements/batches/{}/transactions", encode(token));
    let cases = [
        (Some("true"), "transactions", "settlement_transactions"),
        (Some("false"), "settlement_transactions", "transactions"),
        (None, "settlement_transactions", "transactions"),
    ];
    let answers = c.map(&cases, |(flag, _, _)| {
        let r = Request::get(path.clone());
        c.send(match flag {
            Some(f) => r.q("only_settlement_txns", f),
            None => r,
        })
    });
    let mut judge = Judge::default();
    for ((flag, empty, other), e) in cases.iter().zip(&answers) {
        let data = e.data();
        let ok = data.is_some_and(|d| {
            d[*empty].as_array().is_some_and(Vec::is_empty) && d[*other].is_array()
        });
        let asked = flag.map_or_else(
            || "no only_settlement_txns".to_owned(),
            |f| format!("only_settlement_txns={f}"),
        );
        judge.check(ok, || {
            c.fail(
                e,
                format!(
                    "{asked}: {empty} is {}, expected []",
                    show(data.and_then(|d| d.get(*empty)))
                ),
            )
        });
    }
    judge.outcome()
}

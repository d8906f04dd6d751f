//! offset.*: the offset lists (every list the table pages by offset),
//! judged against the model: pages at the start, middle and end and past
//! it, page sizes from 1 to above any maximum, the count meaning one
//! thing on every page, and the refund list's direction.

use aggpay_mock::Fault;
use serde_json::Value;

use super::paging::{Meanings, fetch, judge_rows, meanings, offset_case};
use super::support::Judge;
use super::{Check, Claim, Finding, Kind, Level, Outcome, Rule, Run};
use crate::contract::subject::{Said, Subject, on};
use crate::contract::{Paging, Role, names};
use crate::model::expect::{Expected, Order};
use crate::model::{ListModel, Picker};

const OFFSET: Claim = Claim {
    holds: "a page at an offset is the list's rows from there (none past the end)",
    says: &[
        "| offset | integer | QR codes skipped before the result set |",
        "returns a paginated list of refunds",
    ],
};
const LIMIT: Claim = Claim {
    holds: "a page holds no more rows than asked, and the list's first rows",
    says: &[
        "| page size | integer | 0 to 100 |",
        "| page size (name not shown separately from the rule above) | integer | maximum QR codes returned |",
    ],
};
const COUNT_STEADY: Claim = Claim {
    holds: "an offset list's count means one thing on every page of it",
    says: &[
        "List operations return their records under a named key of `data` together with a `count`.",
    ],
};
const DIRECTION: Claim = Claim {
    holds: "ASC is the DESC order reversed; anything else is the DESC order",
    says: &[
        "| sort direction | ASC or DESC |",
        "| list sort direction | ASC or DESC, uppercase only; otherwise DESC |",
    ],
};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "offset.pages",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Access keys, QR codes (offset: records skipped before the result set); Merchants, Rail merchants, Webhooks, Refunds (paginated)",
            claims: &[
                OFFSET,
                super::paging::ROWS_ANSWERED,
                super::paging::SAME_RECORD,
                super::paging::COUNT_MEANS,
            ],
            summary: "every offset list, at offsets 0, inside, the last row, the count and beyond, is exactly the list's slice there (empty past the end), every record as the list shows it",
            faults: &[
                Fault::OffsetIgnored,
                Fault::OffsetLimitIgnored,
                Fault::OffsetPastEndWraps,
                Fault::LaterPagesDropField,
                Fault::LaterPagesCountDrift,
                Fault::OffsetOffByOne,
            ],
            judges: &[Subject::Param(|_, p| p.role == Role::Offset)],
            run: Run::Check(pages),
        },
        Rule {
            id: "offset.limit",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Access keys (page size 0 to 100); QR codes (maximum QR codes returned)",
            claims: &[
                LIMIT,
                super::paging::ROWS_ANSWERED,
                super::paging::SAME_RECORD,
                super::paging::COUNT_MEANS,
            ],
            summary: "page sizes 1, small, none, 100 and above: never more rows than asked, exactly the list's first rows (a server may cap a page, refuse a size above its maximum, or give its default without one)",
            faults: &[Fault::OffsetLimitIgnored, Fault::HugeNumber500],
            judges: &[Subject::Param(on::offset_limit)],
            run: Run::Check(limit),
        },
        Rule {
            id: "offset.count",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md typing rule 5 and each offset list (count); its meaning is not shown, so it must mean one thing",
            claims: &[
                COUNT_STEADY,
                super::paging::ROWS_ANSWERED,
                super::paging::COUNT_MEANS,
            ],
            summary: "an offset list's count means one thing on every page of it (the rows matching, the whole list, or the page): it does not drift on later pages",
            faults: &[Fault::LaterPagesCountDrift],
            judges: &[Subject::Said(Said::Counts)],
            run: Run::Check(count),
        },
        Rule {
            id: "offset.direction",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Refunds (sort direction ASC or DESC); Limits (list sort direction: ASC or DESC, uppercase only; otherwise DESC)",
            claims: &[
                DIRECTION,
                super::paging::ROWS_ANSWERED,
                super::paging::SAME_RECORD,
                super::paging::COUNT_MEANS,
            ],
            summary: "an offset list with a direction: ASC is its DESC order reversed; lowercase, empty, garbage or no direction gives the DESC order",
            faults: &[Fault::RefundDirectionLowercase, Fault::LowercaseAsc],
            judges: &[Subject::Param(on::offset_direction)],
            run: Run::Check(direction),
        },
    ]
}

/// The offset lists read, whole.
pub(super) fn offset_lists<'a>(c: &Check<'a>) -> Vec<&'a ListModel> {
    c.ctx
        .model
        .lists
        .iter()
        .filter(|l| l.source.paging() == Paging::Offset && l.usable().is_ok())
        .collect()
}

/// The offset lists that read the paging parameter `name`.
fn reading<'a>(c: &Check<'a>, name: &str) -> Vec<&'a ListModel> {
    super::paging::reading(&offset_lists(c), &[name])
}

/// Why no case was left.
fn none_left(c: &Check<'_>) -> String {
    super::paging::why_none(&offset_lists(c), "offset")
}

fn run<T: Sync>(
    c: &Check<'_>,
    cases: &[T],
    f: impl Fn(&T) -> Result<(), Finding> + Sync,
) -> Outcome {
    if cases.is_empty() {
        return Outcome::skipped(none_left(c));
    }
    let mut judge = Judge::default();
    c.map(cases, f).into_iter().for_each(|r| judge.result(r));
    judge.outcome()
}

fn pages(c: &Check<'_>) -> Outcome {
    let mut cases = Vec::new();
    for list in reading(c, names::OFFSET) {
        let len = list.len.unwrap_or(list.head.len() as u64) as usize;
        let mut pick = Picker::new(
            c.ctx.options.seed,
            &format!("offsets {}", list.source.label),
        );
        let small = 1 + pick.below(5);
        let mut at = vec![
            (0, small),
            (len / 2, small),
            (len.saturating_sub(1), 3),
            (len, 3),
            (1_000_000_000_000, 1),
        ];
        if len > 2 {
            at.push((1 + pick.below(len - 1), 1 + pick.below(7)));
        }
        for (offset, limit) in at {
            cases.push((list, offset, limit));
        }
    }
    run(c, &cases, |(list, offset, limit)| {
        let result = offset_case(c, list, &[], Order::Forward, &[], *offset, *limit).map(|_| ());
        // An offset past every 32-bit count may be refused.
        if *offset >= 1 << 31 {
            super::support::unless_refused(result)
        } else {
            result
        }
    })
}

fn limit(c: &Check<'_>) -> Outcome {
    let mut cases = Vec::new();
    for list in reading(c, names::LIMIT) {
        let mut pick = Picker::new(c.ctx.options.seed, &format!("limits {}", list.source.label));
        let small = (2 + pick.below(8)).to_string();
        for asked in ["1", small.as_str(), "", "0", "101", "18446744073709551616"] {
            cases.push((list, asked.to_owned()));
        }
    }
    run(c, &cases, |(list, asked)| {
        let mut q = Vec::new();
        if !asked.is_empty() {
            q.push((names::LIMIT.to_owned(), asked.clone()));
        }
        let got = fetch(c, &list.source, &q);
        let what = format!(
            "{} {}",
            list.source.label,
            if asked.is_empty() {
                "without a limit".to_owned()
            } else {
                format!("limit {asked}")
            }
        );
        let n: Option<u64> = asked.parse().ok();
        let rule = list
            .source
            .op
            .role(|r| matches!(r, Role::Limit { .. }))
            .map(|p| p.role);
        let max = match rule {
            Some(Role::Limit { max, .. }) => max,
            _ => None,
        };
        // Out of the stated range, or a size the server may refuse.
        let refusable = asked == "0" || n.is_none_or(|n| n > max.unwrap_or(100));
        if got.e.refused() && refusable {
            return Ok(());
        }
        let rows = got.rows_or_fail(c, &what)?.clone();
        let whole = Expected::of(list, &[], Order::Forward);
        let len = list.len.unwrap_or(list.head.len() as u64) as usize;
        let cap = match (n, max) {
            (Some(n), Some(max)) => n.min(max) as usize,
            (Some(n), None) => n.min(usize::MAX as u64) as usize,
            (None, _) => usize::MAX,
        };
        if rows.len() > cap.max(if asked == "0" { rows.len() } else { 0 }) {
            return Err(c.fail(
                &LIMIT,
                &got.e,
                format!("{what}: {} rows, more than asked", rows.len()),
            ));
        }
        let k = rows.len();
        // The first rows of the list; how many is the server's to choose
        // where API.md does not say (no limit, 0, a size above its cap),
        // but never an empty page for a list with rows when rows were
        // asked for, and all of them when fewer than asked.
        if let Some(n) = n.filter(|n| *n >= 1 && *n <= list.cap) {
            let due = (n as usize).min(len);
            return judge_rows(c, &got, list, &whole.slice(0, due), &what);
        }
        if k == 0 && len > 0 && asked != "0" {
            return Err(c.fail(
                &LIMIT,
                &got.e,
                format!("{what}: an empty page of a list with {len} rows"),
            ));
        }
        judge_rows(c, &got, list, &whole.slice(0, k), &what)
    })
}

fn count(c: &Check<'_>) -> Outcome {
    let lists = reading(c, names::OFFSET);
    let results = c.map(&lists, |list| count_of(c, list));
    let mut judge = Judge::default();
    results.into_iter().for_each(|r| judge.result(r));
    if judge.cases == 0 {
        return Outcome::skipped(none_left(c));
    }
    judge.outcome()
}

/// The meanings the count of one list keeps over its pages (the model's
/// pages, and pages inside and at the end), until one is left or none.
fn count_of(c: &Check<'_>, list: &ListModel) -> Result<(), Finding> {
    let len = list.len.unwrap_or(0) as usize;
    if !list.complete {
        return Ok(());
    }
    let step = (len / 3).clamp(1, 100);
    let offsets = [0, step, len.saturating_sub(1), len];
    let pages = c.map(&offsets, |offset| {
        (
            *offset,
            fetch(
                c,
                &list.source,
                &[
                    (names::LIMIT.into(), step.to_string()),
                    (names::OFFSET.into(), offset.to_string()),
                ],
            ),
        )
    });
    let mut left = Meanings::ALL;
    let mut seen: Vec<String> = Vec::new();
    for (offset, got) in &pages {
        let what = format!("{} offset {offset} limit {step}", list.source.label);
        let rows = got.rows_or_fail(c, &what)?.len();
        let Some(n) = got.count else {
            return Err(c.fail(
                &super::paging::COUNT_MEANS,
                &got.e,
                format!("{what}: no count"),
            ));
        };
        seen.push(format!("{n} at offset {offset}"));
        left = left.and(meanings(n, &[len], list.len, rows));
        if left.none() {
            return Err(c.fail(
                &COUNT_STEADY,
                &got.e,
                format!(
                    "{}: the count does not mean one thing across pages ({}; the list has {len} rows)",
                    list.source.label,
                    seen.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

fn direction(c: &Check<'_>) -> Outcome {
    let lists: Vec<&ListModel> = offset_lists(c)
        .into_iter()
        .filter(|l| l.source.op.role(|r| *r == Role::Direction).is_some())
        .filter(|l| l.complete && l.head.len() <= 100)
        .collect();
    let directions = [
        Some("DESC"),
        Some("ASC"),
        None,
        Some("asc"),
        Some("Asc"),
        Some(""),
        Some("desc"),
        Some("sideways"),
    ];
    let cases: Vec<(&ListModel, Option<&str>)> = lists
        .iter()
        .flat_map(|l| directions.iter().map(move |d| (*l, *d)))
        .collect();
    run(c, &cases, |(list, d)| {
        let q: Vec<(String, String)> = d
            .iter()
            .map(|d| (names::DIRECTION.to_owned(), (*d).to_owned()))
            .collect();
        // The whole list, read by its own pagination: API.md shows no
        // maximum page size for it.
        let got = super::paging::fetch_whole(c, list, &q);
        let order = Order::of(Paging::Offset, *d);
        let what = format!(
            "{} direction {}",
            list.source.label,
            d.map_or("absent".to_owned(), |d| format!("{d:?}"))
        );
        let expected = Expected::of(list, &[], order);
        let rows = got.rows_or_fail(c, &what)?;
        // Rows created in the same instant may keep their own order.
        if order == Order::Backward && same_but_ties(rows, &expected.alternatives[0]) {
            return super::paging::same_records(c, &got.e, list, rows, &what);
        }
        judge_rows(c, &got, list, &expected.slice(0, 100), &what)
    })
}

/// Whether `got` is `want` but for the order of rows of equal
/// `created_at`.
fn same_but_ties(got: &[Value], want: &[&Value]) -> bool {
    if got.len() != want.len() {
        return false;
    }
    let key = |r: &Value| r["created_at"].as_str().unwrap_or("").to_owned();
    let mut i = 0;
    while i < want.len() {
        let mut j = i;
        while j < want.len() && key(want[j]) == key(want[i]) {
            j += 1;
        }
        let mut a: Vec<String> = got[i..j].iter().map(crate::model::token_of).collect();
        let mut b: Vec<String> = want[i..j]
            .iter()
            .map(|r| crate::model::token_of(r))
            .collect();
        a.sort();
        b.sort();
        if a != b {
            return false;
        }
        i = j;
    }
    true
}

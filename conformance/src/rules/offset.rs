//! offset.*: offset pagination of the offset lists.

use super::{Check, Failure, Level, Outcome, Rule};
use crate::http::Request;

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
            faults: &["offset-ignored", "offset-limit-ignored"],
            check: pages,
            observe: None,
        },
        Rule {
            id: "offset.limit",
            level: Level::Required,
            source: "API.md Access keys (page size 0 to 100); QR codes (maximum QR codes returned)",
            summary: "generated limits: an offset list page never holds more rows than asked",
            faults: &["offset-limit-ignored"],
            check: limit,
            observe: None,
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
pub fn token(row: &serde_json::Value) -> String {
    row.get("token")
        .map(|t| t.to_string())
        .unwrap_or_else(|| row.to_string())
}

fn rows_of(
    c: &Check<'_>,
    path: &str,
    key: &str,
    query: &[(&str, String)],
) -> Result<Vec<serde_json::Value>, Failure> {
    let mut r = Request::get(path);
    for (k, v) in query {
        r = r.q(k, v);
    }
    let e = c.send(r);
    e.data()
        .and_then(|d| d[key].as_array().cloned())
        .ok_or_else(|| c.fail(&e, format!("{path}: no {key} array in a success answer")))
}

fn pages(c: &Check<'_>) -> Outcome {
    // The reference: the first two pages of MAX_ASKED rows of each list.
    let firsts: Vec<(&str, &str, u64)> = LISTS
        .iter()
        .flat_map(|(path, key)| [(*path, *key, 0), (*path, *key, MAX_ASKED)])
        .collect();
    let fetched = c.map(&firsts, |(path, key, offset)| {
        rows_of(
            c,
            path,
            key,
            &[
                ("limit", MAX_ASKED.to_string()),
                ("offset", offset.to_string()),
            ],
        )
    });
    let mut reference: Vec<Vec<String>> = vec![Vec::new(); LISTS.len()];
    for (i, result) in fetched.into_iter().enumerate() {
        match result {
            Ok(r) => reference[i / 2].extend(r.iter().map(token)),
            Err(f) => return Outcome::judged(1, vec![f]),
        }
    }
    let strategy = (0..LISTS.len(), 0..MAX_ASKED, 1..=MAX_ASKED);
    c.property(strategy, |(i, offset, limit)| {
        let (path, key) = LISTS[*i];
        let known = &reference[*i];
        let (o, l) = (*offset as usize, *limit as usize);
        let e = c.send(Request::get(path).q("limit", limit).q("offset", offset));
        let got: Vec<String> = e
            .data()
            .and_then(|d| d[key].as_array())
            .map(|rows| rows.iter().map(token).collect())
            .ok_or_else(|| c.fail(&e, format!("{path}: no {key} array")))?;
        let expected: Vec<String> = known.iter().skip(o).take(l).cloned().collect();
        if got == expected {
            Ok(())
        } else {
            Err(c.fail(
                &e,
                format!(
                    "{path} offset {offset} limit {limit}: rows {got:?}, the list has {expected:?} there"
                ),
            ))
        }
    })
}

fn limit(c: &Check<'_>) -> Outcome {
    c.property((0..LISTS.len(), 1..=MAX_ASKED), |(i, limit)| {
        let (path, key) = LISTS[*i];
        let e = c.send(Request::get(path).q("limit", limit));
        let rows = e.data().and_then(|d| d[key].as_array()).map_or(0, Vec::len);
        if e.success() && rows as u64 <= *limit {
            Ok(())
        } else {
            Err(c.fail(&e, format!("{path} limit {limit}: {rows} rows")))
        }
    })
}

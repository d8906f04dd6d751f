//! Filter values a wrong server would answer differently: values whose
//! rows are few but not none, taken from rows deep in a list or at its
//! end rather than its first, non-ASCII where the data has it, fragments
//! from the middle of names. Seeded: the same seed picks the same values.

use serde_json::Value;

use crate::contract::{Domain, Matching, Param};
use crate::model::expect::{Expected, Given, Order};
use crate::model::{ListModel, Picker};

/// How many values of one filter are judged alone.
const PER_FILTER: usize = 2;

/// A field as text.
fn text(row: &Value, field: &str) -> String {
    match &row[field] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The rows of `list` `given` keeps under every reading (the most of any).
pub fn matched(list: &ListModel, given: &[Given]) -> usize {
    Expected::of(list, given, Order::Forward)
        .alternatives
        .iter()
        .map(Vec::len)
        .max()
        .unwrap_or(0)
}

/// Whether the legal readings agree on `given`.
fn unambiguous(list: &ListModel, given: &[Given]) -> bool {
    Expected::of(list, given, Order::Forward).single()
}

/// Candidate values of `param` from `list`'s rows, best first: few rows
/// matched but some, legal readings agreeing, rows deep in the list.
pub fn candidates(list: &ListModel, param: &'static Param, pick: &mut Picker) -> Vec<String> {
    ranked(list, param, pick, false)
}

/// [`candidates`], all of them with `all`, else the best few of each
/// filter (every value of an enumeration).
fn ranked(list: &ListModel, param: &'static Param, pick: &mut Picker, all: bool) -> Vec<String> {
    let Some(filter) = param.filter() else {
        return Vec::new();
    };
    let rows: Vec<&Value> = list.known().collect();
    let mut raw: Vec<String> = match (filter.matching, param.domain) {
        (Matching::Bool, _) => vec!["true".into(), "false".into()],
        (Matching::Code(names), _) => (0..names.len()).map(|i| i.to_string()).collect(),
        (_, Domain::Choice(words)) => words.iter().map(|w| (*w).to_owned()).collect(),
        (Matching::OnOrAfter | Matching::OnOrBefore, _) => {
            // A row's own second: an inclusive bound must keep it.
            let mut out = Vec::new();
            for i in pick.positions(rows.len(), 2) {
                if let Some(t) = rows[i][filter.field]
                    .as_str()
                    .and_then(|s| s.parse::<jiff::Timestamp>().ok())
                {
                    out.push(t.as_second().to_string());
                }
            }
            out
        }
        (Matching::Fragment, _) => fragments(&rows, filter.field, pick),
        _ => {
            let mut out: Vec<String> = pick
                .positions(rows.len(), 3)
                .into_iter()
                .map(|i| text(rows[i], filter.field))
                .collect();
            // Non-ASCII values, where the data has them.
            out.extend(
                rows.iter()
                    .map(|r| text(r, filter.field))
                    .filter(|v| !v.is_ascii()),
            );
            out
        }
    };
    // A comma inside a value of a comma-separated filter cannot be sent.
    let unsendable = |v: &String| filter.many == crate::contract::Many::Comma && v.contains(',');
    raw.retain(|v| !v.is_empty() && !unsendable(v));
    let mut seen = std::collections::HashSet::new();
    raw.retain(|v| seen.insert(v.clone()));
    // Best first: readings agree, few rows but some, and not the whole
    // list (a filter that is ignored must show).
    let len = rows.len();
    let score = |v: &String| {
        let given = [Given::one(param, v.clone())];
        let n = matched(list, &given);
        let agree = unambiguous(list, &given);
        (n == 0, !agree, n == len && len > 1, n, !v.is_ascii())
    };
    let mut scored: Vec<(_, String)> = raw.into_iter().map(|v| (score(&v), v)).collect();
    scored.sort_by_key(|(score, _)| *score);
    // Enumerations keep every value; the rest their best few.
    let keep = match (filter.matching, param.domain) {
        _ if all => usize::MAX,
        (Matching::Bool | Matching::Code(_), _) | (_, Domain::Choice(_)) => usize::MAX,
        _ => PER_FILTER,
    };
    let mut out: Vec<String> = scored.iter().map(|(_, v)| v.clone()).take(keep).collect();
    // A non-ASCII value when there is one, beyond the best few.
    if let Some((_, v)) = scored.iter().find(|(s, v)| !v.is_ascii() && !s.0)
        && !out.contains(v)
    {
        out.push(v.clone());
    }
    out
}

/// Fragments of names: a part from the middle of a name, and one in
/// another case when folding would change the answer.
fn fragments(rows: &[&Value], field: &str, pick: &mut Picker) -> Vec<String> {
    let mut out = Vec::new();
    for i in pick.positions(rows.len(), 2) {
        let name = text(rows[i], field);
        let chars: Vec<char> = name.chars().collect();
        if chars.len() >= 4 {
            let start = 1 + pick.below(chars.len() / 2);
            let len = 3.min(chars.len() - start);
            out.push(chars[start..start + len].iter().collect());
        }
        out.push(name);
    }
    out.extend(
        rows.iter()
            .map(|r| text(r, field))
            .filter(|v| !v.is_ascii()),
    );
    out
}

/// Two values of `param` whose rows together are more than either alone
/// (a server keeping only the first value must show) and, for a
/// comma-separated list, other than the rows of the two read as one value
/// holding the comma (a server that does not split the list must show).
/// Every candidate is tried, not only the best few.
pub fn several(list: &ListModel, param: &'static Param, pick: &mut Picker) -> Option<Vec<String>> {
    let comma = param
        .filter()
        .is_some_and(|f| f.many == crate::contract::Many::Comma);
    let mut values = ranked(list, param, pick, true);
    values.retain(|v| matched(list, &[Given::one(param, v.clone())]) > 0);
    for (i, a) in values.iter().enumerate() {
        for b in &values[i + 1..] {
            let both = Given {
                param,
                values: vec![a.clone(), b.clone()],
            };
            let n = matched(list, std::slice::from_ref(&both));
            let alone = matched(list, &[Given::one(param, a.clone())])
                .max(matched(list, &[Given::one(param, b.clone())]));
            let unsplit = || matched(list, &[Given::one(param, format!("{a},{b}"))]);
            if n > alone && (!comma || unsplit() != n) {
                // A third value from deep in the list, when there is one.
                return Some(vec![a.clone(), b.clone()]);
            }
        }
    }
    None
}

/// Most values a multi-value filter is given at once ("all").
const MOST_VALUES: usize = 6;

/// Value sets of a multi-value filter by size: two, three and all the
/// candidates that each keep rows the others do not (up to
/// [`MOST_VALUES`]). Each value adds rows, so a server that honours only
/// the first value, only the first two, or reads the whole list as one
/// value (or splits it once, at the first comma) gives another answer
/// than one that honours them all.
pub fn by_size(list: &ListModel, param: &'static Param, pick: &mut Picker) -> Vec<Vec<String>> {
    let Some(pair) = several(list, param, pick) else {
        return Vec::new();
    };
    let comma = param
        .filter()
        .is_some_and(|f| f.many == crate::contract::Many::Comma);
    let count = |values: &[String]| {
        matched(
            list,
            &[Given {
                param,
                values: values.to_vec(),
            }],
        )
    };
    let mut set = pair.clone();
    let mut kept = count(&set);
    for v in ranked(list, param, pick, true) {
        if set.len() >= MOST_VALUES {
            break;
        }
        if set.contains(&v) || (comma && v.contains(',')) {
            continue;
        }
        let mut grown = set.clone();
        grown.push(v);
        let n = count(&grown);
        // The whole tail as one value, or split once at the first comma,
        // keeps fewer rows than every value does.
        let tail_as_one = comma && {
            let mut once = vec![grown[0].clone(), grown[1..].join(",")];
            once.dedup();
            count(&once) == n
        };
        if n > kept && !tail_as_one {
            set = grown;
            kept = n;
        }
    }
    let mut out = vec![pair];
    if set.len() >= 3 {
        out.push(set[..3].to_vec());
    }
    if set.len() > 3 {
        out.push(set);
    }
    out
}

/// Values for two filters given together: the pair whose rows together
/// are some, and fewer than either filter keeps alone (both filters must
/// count); when the data has no such pair, that pair and one whose rows
/// together differ from each alone even if they are none (a server that
/// drops one of the two must show).
pub fn pairs(
    list: &ListModel,
    a: &'static Param,
    b: &'static Param,
    pick: &mut Picker,
) -> Vec<(String, String)> {
    let xs = candidates(list, a, pick);
    let ys = candidates(list, b, pick);
    // (no rows kept, rows the same as one filter alone, rows): best first.
    type Scored = ((bool, bool, usize), (String, String));
    let mut scored: Vec<Scored> = Vec::new();
    for x in xs.iter().take(4) {
        for y in ys.iter().take(4) {
            let ga = Given::one(a, x.clone());
            let gb = Given::one(b, y.clone());
            let both = matched(list, &[ga.clone(), gb.clone()]);
            let differs = both != matched(list, &[ga]) && both != matched(list, &[gb]);
            scored.push(((both == 0, !differs, both), (x.clone(), y.clone())));
        }
    }
    scored.sort_by_key(|(score, _)| *score);
    let mut out: Vec<(String, String)> =
        scored.first().map(|(_, v)| v.clone()).into_iter().collect();
    if scored.first().is_some_and(|(k, _)| k.1)
        && let Some((_, v)) = scored.iter().find(|(k, _)| !k.1)
    {
        out.push(v.clone());
    }
    out
}

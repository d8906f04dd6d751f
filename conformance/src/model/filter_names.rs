//! Whether the server reads the filters whose wire names only WIRE.md
//! gives. API.md names most filters by purpose only (Conventions 6: "a
//! parameter given only by its purpose has a wire name that is not
//! shown"), so a server may call them otherwise, and a rule that holds a
//! server to what a filter does must first know the server reads it.
//!
//! Each such filter is asked once, on the list's first page, with a
//! value of the server's own data that keeps none of that page's first
//! row under every legal reading of the filter. A server that reads the
//! name refuses the request or leaves that row out; one that answers the
//! row anyway does not read the name, and the rules judge that filter
//! only as an observation (`wire.filter-names`).

use serde_json::Value;

use super::expect::Given;
use super::list::{FilterDefault, ListModel, NamedOtherwise, Several, page_of, token_key};
use crate::contract::{Domain, Many, Matching, Param};
use crate::http::{Exchange, Http};

/// The filters of `model`'s list the server does not read under the
/// names WIRE.md gives them, each with the answer that shows it.
pub(super) fn unread(http: &Http, model: &ListModel) -> Vec<NamedOtherwise> {
    let (Some(first), Some(row)) = (model.pages.first(), model.head.first()) else {
        return Vec::new();
    };
    if !model.source.base.is_empty() {
        return Vec::new();
    }
    let op = model.source.op;
    let probes: Vec<(&'static Param, String)> = op
        .filters()
        .filter(|p| !http.names().held(op.id, p.wire))
        .filter_map(|p| Some((p, leaving_out(model, p, row)?)))
        .collect();
    let ask = |param: &'static Param, value: &str| {
        let given = Given::one(param, value.to_owned());
        http.send(first.request.clone().with_query(&given.pairs()))
    };
    let answers = http.pool().map(&probes, |(param, value)| ask(param, value));
    let kept: Vec<((&'static Param, String), Exchange)> = probes
        .into_iter()
        .zip(answers)
        .filter(|(_, e)| answers_row(model, e, row))
        .collect();
    // A name whose value leaves the row in may still be read: a server
    // that refuses a value no reading of the filter takes (validated but
    // not applied) shows it reads the name, and is held to its meaning.
    let refused = http.pool().map(&kept, |((param, _), _)| {
        outside(param).is_some_and(|bad| ask(param, bad).refused())
    });
    kept.into_iter()
        .zip(refused)
        .filter(|(_, refused)| !refused)
        .map(|(kept, _)| kept)
        .map(|((param, value), e)| NamedOtherwise {
            names: vec![param.wire],
            seen: format!(
                "{}={value} keeps no row {} under any reading of the filter, and the answer holds it as the first page does",
                param.wire,
                token_key(row)
            ),
            evidence: Box::new(e),
        })
        .collect()
}

/// A value of `param` that no reading of it takes, where its domain
/// has one: a server that refuses it reads the name. Free text has none.
fn outside(param: &Param) -> Option<&'static str> {
    match param.domain {
        Domain::Text => None,
        Domain::Int
        | Domain::Unix
        | Domain::Bool
        | Domain::Choice(_)
        | Domain::Token(_)
        | Domain::BatchToken => Some("x"),
    }
}

/// Whether `e` is a page of the list that holds `row`.
fn answers_row(model: &ListModel, e: &Exchange, row: &Value) -> bool {
    page_of(e, &model.source).is_ok_and(|p| p.rows.iter().any(|r| token_key(r) == token_key(row)))
}

/// A value of `param` that keeps `row` under no legal reading of the
/// filter: the server's own values first (another row's), then one of
/// the shape of `row`'s.
fn leaving_out(model: &ListModel, param: &'static Param, row: &Value) -> Option<String> {
    let filter = param.filter()?;
    let own = &row[filter.field];
    let mut values: Vec<String> = match (filter.matching, param.domain) {
        (Matching::Bool, _) => vec!["true".into(), "false".into()],
        (Matching::Code(names), _) => (0..names.len()).map(|i| i.to_string()).collect(),
        (Matching::OnOrAfter, _) => seconds(own)
            .map(|s| s + 1)
            .map(|s| s.to_string())
            .into_iter()
            .collect(),
        (Matching::OnOrBefore, _) => seconds(own)
            .map(|s| s - 1)
            .map(|s| s.to_string())
            .into_iter()
            .collect(),
        (_, Domain::Int | Domain::Unix) => Vec::new(),
        _ => {
            let mut texts: Vec<String> = model
                .known()
                .filter_map(|r| r[filter.field].as_str())
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
                .collect();
            texts.dedup();
            texts.extend(own.as_str().and_then(crate::rules::forms::unknown_like));
            texts
        }
    };
    values.retain(|v| !v.is_empty() && !v.contains(','));
    values
        .into_iter()
        .find(|v| !Given::one(param, v.clone()).keeps_under_any_reading(row))
}

/// The whole seconds of a timestamp field.
fn seconds(v: &Value) -> Option<i64> {
    v.as_str()
        .and_then(|s| s.parse::<jiff::Timestamp>().ok())
        .map(|t| t.as_second())
}

/// The flag filters the list applies when they are absent
/// ([`FilterDefault`]): for each flag filter it reads, of a list read
/// whole, the list asked with each value. Where one value's list is the
/// list unfiltered and the other's holds rows the unfiltered list does
/// not, the first value is the list's default, and those rows are what it
/// leaves out.
pub(super) fn defaults(
    http: &Http,
    model: &ListModel,
    unread: &[NamedOtherwise],
) -> Vec<FilterDefault> {
    if !model.complete || !model.source.base.is_empty() {
        return Vec::new();
    }
    let read = |p: &&'static Param| unread.iter().all(|n| !n.names.contains(&p.wire));
    let flags: Vec<&'static Param> = model
        .source
        .op
        .filters()
        .filter(|p| p.filter().is_some_and(|f| f.matching == Matching::Bool))
        .filter(read)
        .collect();
    let asked: Vec<(&'static Param, &str)> = flags
        .iter()
        .flat_map(|p| [(*p, "true"), (*p, "false")])
        .collect();
    let lists = http.pool().map(&asked, |(p, v)| {
        ListModel::read(http, model.source.clone().with(p.wire, v))
    });
    let whole: std::collections::HashSet<_> = model.head.iter().map(token_key).collect();
    let tokens = |l: &ListModel| -> Option<std::collections::HashSet<String>> {
        l.complete
            .then(|| l.head.iter().map(|r| token_key(r).into_owned()).collect())
    };
    let mut out = Vec::new();
    for pair in asked.chunks(2).zip(lists.chunks(2)) {
        let ([(param, _), _], [on, off]) = pair else {
            continue;
        };
        for (value, same, other) in [("true", on, off), ("false", off, on)] {
            let (Some(same_tokens), Some(other_tokens)) = (tokens(same), tokens(other)) else {
                continue;
            };
            let unfiltered_is_same = same_tokens.len() == whole.len()
                && same_tokens.iter().all(|t| whole.contains(t.as_str()));
            let leaves_out = other_tokens.iter().any(|t| !whole.contains(t.as_str()));
            if unfiltered_is_same && leaves_out {
                out.push(FilterDefault {
                    param,
                    value: value.to_owned(),
                    beside: other.head.clone(),
                });
            }
        }
    }
    out
}

/// How the list reads several values of a filter whose form for them
/// API.md does not show ([`Several`]): two values of the server's own
/// data, each keeping rows the other does not, asked with the key
/// repeated (WIRE.md's form), then comma-separated. The first form whose
/// answer keeps rows of both is the list's; `Repeated` when the list
/// shows no two such values, or has no such filter it reads.
pub(super) fn several(http: &Http, model: &ListModel, unread: &[NamedOtherwise]) -> Several {
    // Held to WIRE.md's form: the key repeated, whatever the answers show.
    if http.names().wire_required() {
        return Several::Repeated;
    }
    let Some(first) = model.pages.first() else {
        return Several::Repeated;
    };
    let read = |p: &&'static Param| unread.iter().all(|n| !n.names.contains(&p.wire));
    let Some((param, a, b)) = model
        .source
        .op
        .filters()
        .filter(|p| {
            p.filter()
                .is_some_and(|f| f.many == Many::Repeated && f.matching == Matching::Exact)
        })
        .filter(read)
        .find_map(|p| Some((p, two_values(model, p)?)))
        .map(|(p, (a, b))| (p, a, b))
    else {
        return Several::Repeated;
    };
    let field = param.filter().map_or("", |f| f.field);
    let keeps_both = |e: &Exchange| {
        page_of(e, &model.source).is_ok_and(|p| {
            [&a, &b]
                .iter()
                .all(|v| p.rows.iter().any(|r| r[field].as_str() == Some(v.as_str())))
        })
    };
    let repeated = [
        (param.wire.to_owned(), a.clone()),
        (param.wire.to_owned(), b.clone()),
    ];
    let comma = [(param.wire.to_owned(), format!("{a},{b}"))];
    let answers = http.pool().map(&[&repeated[..], &comma[..]], |q| {
        http.send(first.request.clone().with_query(q))
    });
    match (keeps_both(&answers[0]), keeps_both(&answers[1])) {
        (true, _) => Several::Repeated,
        (false, true) => Several::Comma,
        (false, false) => Several::Neither(NamedOtherwise {
            names: vec![param.wire],
            seen: format!(
                "{} {a} and {b}, the key repeated or the values comma-separated, keeps the rows of one of them at most",
                param.wire
            ),
            evidence: Box::new(answers[0].clone()),
        }),
    }
}

/// Two values of `param`'s field in the list's rows, each of few rows
/// (so that the rows of both fit a page), the one's rows not the other's.
fn two_values(model: &ListModel, param: &'static Param) -> Option<(String, String)> {
    let field = param.filter()?.field;
    let mut counts: Vec<(String, usize)> = Vec::new();
    for row in model.known() {
        let Some(v) = row[field]
            .as_str()
            .filter(|v| !v.is_empty() && !v.contains(','))
        else {
            continue;
        };
        match counts.iter_mut().find(|(k, _)| k == v) {
            Some((_, n)) => *n += 1,
            None => counts.push((v.to_owned(), 1)),
        }
    }
    counts.sort_by_key(|(_, n)| *n);
    let mut few = counts.into_iter().filter(|(_, n)| *n <= 40).map(|(v, _)| v);
    Some((few.next()?, few.next()?))
}

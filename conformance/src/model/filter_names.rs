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
use super::list::{ListModel, NamedOtherwise, page_of, token_key};
use crate::contract::{Domain, Matching, Named, Param};
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
    let probes: Vec<(&'static Param, String)> = model
        .source
        .op
        .filters()
        .filter(|p| p.named == Named::Wire)
        .filter_map(|p| Some((p, leaving_out(model, p, row)?)))
        .collect();
    let answers = http.pool().map(&probes, |(param, value)| {
        let given = Given::one(param, value.clone());
        http.send(first.request.clone().with_query(&given.pairs()))
    });
    probes
        .into_iter()
        .zip(answers)
        .filter(|(_, e)| answers_row(model, e, row))
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

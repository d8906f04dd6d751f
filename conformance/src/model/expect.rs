//! Expected answers: the model's rows filtered and ordered the way the
//! contract table says. Where API.md leaves a choice open (whether a name
//! matches exactly or as a fragment, whether case counts, whether an
//! upper date bound counts the whole second), every legal reading gives
//! an alternative, and an answer must equal one of them.

use serde_json::Value;

use super::list::{ListModel, token_of};
use crate::contract::{Field, FieldKind, Filter, Matching, Paging, Param};
use crate::http::show;

/// A filter parameter with the values sent.
#[derive(Debug, Clone)]
pub struct Given {
    /// The parameter.
    pub param: &'static Param,
    /// Its values (several for a multi-valued filter).
    pub values: Vec<String>,
}

impl Given {
    /// One value of `param`.
    pub fn one(param: &'static Param, value: impl Into<String>) -> Self {
        Self {
            param,
            values: vec![value.into()],
        }
    }

    /// The query pairs it sends: a comma list, repeated keys, or one.
    pub fn pairs(&self) -> Vec<(String, String)> {
        let wire = self.param.wire.to_owned();
        match self.param.filter().map(|f| f.many) {
            Some(crate::contract::Many::Repeated) => self
                .values
                .iter()
                .map(|v| (wire.clone(), v.clone()))
                .collect(),
            _ => vec![(wire, self.values.join(","))],
        }
    }

    /// Whether `row` is kept under some legal reading of the filter.
    pub fn keeps_under_any_reading(&self, row: &Value) -> bool {
        self.param
            .filter()
            .is_none_or(|f| readings(f.matching).iter().any(|r| matches(self, *r, row)))
    }

    /// `wire=value` for messages.
    pub fn describe(&self) -> String {
        query_text(&self.pairs())
    }
}

/// Query pairs as a message shows them: `k=v&k=v`, unencoded.
pub fn query_text(pairs: &[(String, String)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// The legal readings of a filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    Exact,
    ExactFolded,
    Contains,
    ContainsFolded,
    /// A date bound compared at the instant.
    Instant,
    /// A date bound compared at the second (an upper bound takes in the
    /// whole second).
    Second,
}

fn readings(matching: Matching) -> &'static [Reading] {
    match matching {
        Matching::Fragment => &[Reading::Contains, Reading::ContainsFolded],
        Matching::Name => &[
            Reading::Exact,
            Reading::ExactFolded,
            Reading::Contains,
            Reading::ContainsFolded,
        ],
        Matching::OnOrBefore => &[Reading::Instant, Reading::Second],
        _ => &[Reading::Exact],
    }
}

/// Seconds and nanoseconds of an RFC 3339 field.
fn instant(v: &Value) -> Option<(i64, i32)> {
    v.as_str()
        .and_then(|s| s.parse::<jiff::Timestamp>().ok())
        .map(|t| (t.as_second(), t.subsec_nanosecond()))
}

/// Whether `row` matches `filter` with `value` under `reading`.
fn matches_one(filter: Filter, reading: Reading, row: &Value, value: &str) -> bool {
    let field = &row[filter.field];
    let text = || match field {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match filter.matching {
        Matching::Bool => field.as_bool().map(|b| b.to_string()).as_deref() == Some(value),
        Matching::Code(names) => value
            .parse::<usize>()
            .ok()
            .and_then(|i| names.get(i))
            .is_some_and(|name| field == *name),
        Matching::OnOrAfter | Matching::OnOrBefore => {
            // Any integer is a bound, however far (a far bound keeps all
            // rows or none, never wraps to a near one).
            let (Some((s, ns)), Ok(bound)) = (instant(field), value.parse::<i128>()) else {
                return false;
            };
            let s = i128::from(s);
            match (filter.matching, reading) {
                (Matching::OnOrAfter, _) => s >= bound,
                (_, Reading::Second) => s <= bound,
                _ => s < bound || (s == bound && ns == 0),
            }
        }
        _ => {
            let have = text();
            match reading {
                Reading::Exact => have == value,
                Reading::ExactFolded => have.to_lowercase() == value.to_lowercase(),
                Reading::Contains => have.contains(value),
                Reading::ContainsFolded => have.to_lowercase().contains(&value.to_lowercase()),
                Reading::Instant | Reading::Second => false,
            }
        }
    }
}

fn matches(given: &Given, reading: Reading, row: &Value) -> bool {
    let Some(filter) = given.param.filter() else {
        return true;
    };
    given
        .values
        .iter()
        .any(|v| matches_one(filter, reading, row, v))
}

/// Every combination of readings of `given`.
fn combinations(given: &[Given]) -> Vec<Vec<Reading>> {
    let mut out: Vec<Vec<Reading>> = vec![Vec::new()];
    for g in given {
        let options = g
            .param
            .filter()
            .map_or(&[Reading::Exact][..], |f| readings(f.matching));
        out = out
            .into_iter()
            .flat_map(|prefix| {
                options.iter().map(move |r| {
                    let mut next = prefix.clone();
                    next.push(*r);
                    next
                })
            })
            .collect();
    }
    out
}

/// The order asked of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// The model's own order (cursor lists: ascending id).
    Forward,
    /// The reverse.
    Backward,
}

impl Order {
    /// The order a `direction` value asks for (API.md: `ASC` exactly is
    /// ascending; anything else, or none, is `DESC`). Cursor lists are
    /// modelled ascending; offset lists in their default order, which for
    /// a list with a direction is `DESC`.
    pub fn of(paging: Paging, direction: Option<&str>) -> Self {
        let ascending = direction == Some("ASC");
        match (paging, ascending) {
            (Paging::Cursor, true) | (Paging::Offset, false) => Order::Forward,
            _ => Order::Backward,
        }
    }
}

/// What a filtered, ordered list must hold: the model's rows, borrowed
/// (ranking filter values asks this of every candidate, and a copy of
/// each row kept cost more than the rest of a run).
#[derive(Debug, Clone)]
pub struct Expected<'a> {
    /// One sequence of rows per legal reading of the filters (duplicates
    /// removed), in the order asked.
    pub alternatives: Vec<Vec<&'a Value>>,
    /// True when they are whole; false when they are only the known
    /// start of the answer (a large list read in windows).
    pub whole: bool,
}

impl<'a> Expected<'a> {
    /// The rows of `list` that `given` keep, in `order`.
    pub fn of(list: &'a ListModel, given: &[Given], order: Order) -> Self {
        // An identity filter (a token) picks known rows wherever they are.
        let by_identity = given.iter().any(|g| {
            g.param
                .filter()
                .is_some_and(|f| f.field == "token" && f.matching == Matching::Exact)
        });
        // A filter the list applies when it is absent is applied where it
        // is not given; where it is, the rows it leaves out are the list's
        // too.
        let asked =
            |d: &&crate::model::FilterDefault| given.iter().any(|g| std::ptr::eq(g.param, d.param));
        let beside = list.defaults.iter().filter(asked).flat_map(|d| &d.beside);
        let mut with_defaults: Vec<Given> = given.to_vec();
        with_defaults.extend(
            list.defaults
                .iter()
                .filter(|d| !asked(d))
                .map(|d| Given::one(d.param, d.value.clone())),
        );
        let given = &with_defaults[..];
        let (rows, whole): (Vec<&'a Value>, bool) = if list.complete {
            (list.head.iter().chain(beside).collect(), true)
        } else if by_identity {
            (list.known().collect(), true)
        } else {
            match order {
                Order::Forward => (list.head.iter().collect(), false),
                Order::Backward => (list.tail.iter().collect(), false),
            }
        };
        let mut alternatives: Vec<Vec<&'a Value>> = Vec::new();
        for readings in combinations(given) {
            let mut kept: Vec<&'a Value> = rows
                .iter()
                .copied()
                .filter(|row| {
                    given
                        .iter()
                        .zip(&readings)
                        .all(|(g, r)| matches(g, *r, row))
                })
                .collect();
            if by_identity && !list.complete {
                sort_like(&mut kept, list);
            }
            if order == Order::Backward {
                kept.reverse();
            }
            if !alternatives.iter().any(|a| same_tokens(a, &kept)) {
                alternatives.push(kept);
            }
        }
        Self {
            alternatives,
            whole,
        }
    }

    /// Whether every reading gives the same rows: then a failure cannot
    /// be a legal choice of the server.
    pub fn single(&self) -> bool {
        self.alternatives.len() == 1
    }

    /// The slice `offset..offset + limit` of each alternative; `None` for
    /// an alternative that does not reach that far (a known start only).
    pub fn slice(&self, offset: usize, limit: usize) -> Vec<Option<Vec<Value>>> {
        self.alternatives
            .iter()
            .map(|a| {
                let end = offset.saturating_add(limit);
                if self.whole || end <= a.len() {
                    Some(
                        a.iter()
                            .skip(offset)
                            .take(limit)
                            .map(|r| (*r).clone())
                            .collect(),
                    )
                } else {
                    None
                }
            })
            .collect()
    }

    /// Every alternative whole, as rows of their own (a walk judged to
    /// its end).
    pub fn owned(&self) -> Vec<Option<Vec<Value>>> {
        self.alternatives
            .iter()
            .map(|a| Some(a.iter().map(|r| (*r).clone()).collect()))
            .collect()
    }
}

/// Whether two sequences of rows hold the same tokens in the same order.
fn same_tokens(a: &[&Value], b: &[&Value]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| super::list::token_key(x) == super::list::token_key(y))
}

/// Rows picked from the windows of a large cursor list, in id order.
fn sort_like(rows: &mut [&Value], list: &ListModel) {
    if list.source.paging() == Paging::Cursor {
        rows.sort_by_key(|r| super::list::id_of(r).unwrap_or(0));
    }
}

/// The tokens of rows.
pub fn tokens(rows: &[Value]) -> Vec<String> {
    rows.iter().map(token_of).collect()
}

/// Why `got` is not `want`, in a few words: what is missing, what is
/// extra, or where the order differs.
pub fn difference(got: &[Value], want: &[Value]) -> String {
    let (g, w) = (tokens(got), tokens(want));
    let missing: Vec<&String> = w.iter().filter(|t| !g.contains(t)).collect();
    let extra: Vec<&String> = g.iter().filter(|t| !w.contains(t)).collect();
    let list = |ts: &[&String]| {
        let shown: Vec<&str> = ts.iter().take(3).map(|t| t.as_str()).collect();
        let more = if ts.len() > 3 {
            format!(" and {} more", ts.len() - 3)
        } else {
            String::new()
        };
        format!("{}{more}", shown.join(", "))
    };
    if !missing.is_empty() && !extra.is_empty() {
        format!(
            "{} rows where {} were due: {} missing, {} not due",
            g.len(),
            w.len(),
            list(&missing),
            list(&extra)
        )
    } else if !missing.is_empty() {
        format!(
            "{} rows where {} were due: {} missing",
            g.len(),
            w.len(),
            list(&missing)
        )
    } else if !extra.is_empty() {
        format!(
            "{} rows where {} were due: {} not due",
            g.len(),
            w.len(),
            list(&extra)
        )
    } else if g.len() != w.len() {
        format!("{} rows where {} were due (some twice)", g.len(), w.len())
    } else {
        let at = g.iter().zip(&w).position(|(a, b)| a != b).unwrap_or(0);
        format!(
            "the right rows in another order: {} at position {at}, {} due there",
            g[at], w[at]
        )
    }
}

/// The first field API.md defines (`fields`, nested records included)
/// where `row` differs from `model` (the same record read elsewhere), if
/// one does. Fields API.md does not define are not compared: a server may
/// add them, leave them out and change them at any time.
pub fn differs(row: &Value, model: &Value, fields: &[Field]) -> Option<String> {
    differs_at(row, model, fields, "")
}

fn differs_at(row: &Value, model: &Value, fields: &[Field], path: &str) -> Option<String> {
    for field in fields {
        let name = format!("{path}{}", field.name);
        let (x, v) = match (row.get(field.name), model.get(field.name)) {
            (None, None) => continue,
            (None, Some(v)) => {
                return Some(format!(
                    "{name} is missing here, {} in the list",
                    show(Some(v))
                ));
            }
            (Some(_), None) => return Some(format!("{name} is here but not in the list")),
            (Some(x), Some(v)) => (x, v),
        };
        let why = match (field.kind, x.as_array(), v.as_array()) {
            (FieldKind::Obj(inner), _, _) if x.is_object() && v.is_object() => {
                differs_at(x, v, inner, &format!("{name}."))
            }
            (FieldKind::Arr(inner), Some(xs), Some(vs)) if xs.len() == vs.len() => xs
                .iter()
                .zip(vs)
                .enumerate()
                .find_map(|(i, (a, b))| differs_at(a, b, inner, &format!("{name}[{i}]."))),
            _ => (x != v).then(|| {
                format!(
                    "{name} is {} here, {} in the list",
                    show(Some(x)),
                    show(Some(v))
                )
            }),
        };
        if why.is_some() {
            return why;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{Op, OpId};
    use crate::model::list::Source;
    use serde_json::json;

    fn list(rows: Vec<Value>) -> ListModel {
        let mut m = ListModel::new(Source::of(Op::get(OpId::Merchants)));
        m.head = rows;
        m.complete = true;
        m
    }

    #[test]
    fn names_have_every_legal_reading_and_tokens_pick_exactly() {
        let merchants = Op::get(OpId::Merchants);
        let m = list(vec![
            json!({"token": "am_1", "name": "Ali Traders 1", "enabled": true}),
            json!({"token": "am_2", "name": "Ali Traders 12", "enabled": false}),
            json!({"token": "am_3", "name": "ali traders 1", "enabled": true}),
        ]);
        let names = merchants.param("names").unwrap();
        let e = Expected::of(&m, &[Given::one(names, "Ali Traders 1")], Order::Forward);
        // exact; exact folded; contains; contains folded.
        assert_eq!(e.alternatives.len(), 4);
        // A fragment: exact readings keep nothing, fragment ones am_2.
        let e = Expected::of(&m, &[Given::one(names, "Traders 12")], Order::Forward);
        assert_eq!(e.alternatives.len(), 2);
        // A whole name no other name contains: every reading agrees.
        let e = Expected::of(&m, &[Given::one(names, "Ali Traders 12")], Order::Forward);
        assert!(e.single(), "{:?}", e.alternatives);
        let ids = merchants.param("merchant_identifiers").unwrap();
        let enabled = merchants.param("enabled").unwrap();
        let e = Expected::of(
            &m,
            &[
                Given {
                    param: ids,
                    values: vec!["am_1".into(), "am_2".into()],
                },
                Given::one(enabled, "true"),
            ],
            Order::Backward,
        );
        assert_eq!(super::super::list::token_key(e.alternatives[0][0]), "am_1");
        assert_eq!(e.alternatives[0].len(), 1);
        assert_eq!(e.slice(1, 5), vec![Some(Vec::new())]);
    }

    #[test]
    fn upper_date_bounds_have_two_readings() {
        let refunds = Op::get(OpId::Refunds);
        let mut m = list(vec![
            json!({"token": "r1", "created_at": "2024-01-01T00:00:10Z"}),
            json!({"token": "r2", "created_at": "2024-01-01T00:00:10.5Z"}),
        ]);
        m.source = Source::of(refunds);
        let end = refunds.param("end_date").unwrap();
        let start = refunds.param("start_date").unwrap();
        let e = Expected::of(&m, &[Given::one(end, "1704067210")], Order::Forward);
        assert_eq!(e.alternatives.len(), 2);
        let e = Expected::of(&m, &[Given::one(start, "1704067210")], Order::Forward);
        assert!(e.single());
        assert_eq!(e.alternatives[0].len(), 2);
    }

    #[test]
    fn differences_are_said_in_a_few_words() {
        let row = |t: &str| json!({"token": t});
        let (a, b, c) = (row("a"), row("b"), row("c"));
        assert!(difference(&[a.clone(), b.clone()], &[a.clone(), c.clone()]).contains("c missing"));
        assert!(difference(&[b.clone(), a.clone()], &[a.clone(), b.clone()]).contains("order"));
        let fields = [
            Field {
                name: "x",
                kind: FieldKind::Int,
            },
            Field {
                name: "y",
                kind: FieldKind::Int,
            },
        ];
        assert_eq!(
            differs(&json!({"x": 1, "y": 2}), &json!({"x": 1, "y": 3}), &fields).unwrap(),
            "y is 2 here, 3 in the list"
        );
        assert!(differs(&a, &a.clone(), &fields).is_none());
        // A field API.md does not define may change: not compared.
        assert!(differs(&json!({"x": 1, "z": 1}), &json!({"x": 1, "z": 2}), &fields).is_none());
    }
}

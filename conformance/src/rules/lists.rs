//! lists.*: the type of each list's count.

use aggpay::rules as text_rules;

use super::fields::{Verdict, over_corpus};
use super::{Check, Level, Outcome, Rule};
use crate::http::show;
use crate::schema::Kind;

pub fn rules() -> Vec<Rule> {
    vec![Rule {
        id: "lists.count-type",
        level: Level::Required,
        source: "API.md typing rule 5",
        summary: "count is a string, except an integer in the access-key and refund lists",
        faults: &["count-types-swapped"],
        check: count_types,
        observe: None,
    }]
}

fn count_types(c: &Check<'_>) -> Outcome {
    over_corpus(c, |field, value| match (field.kind, value) {
        (Kind::Count(as_string), Some(v)) => {
            if field.kind.type_matches(v)
                && (!as_string || v.as_str().is_some_and(text_rules::is_numeric_id))
            {
                Verdict::Ok
            } else {
                let want = if as_string {
                    "a numeric string"
                } else {
                    "an integer"
                };
                Verdict::Bad(format!("count is {}, not {want}", show(Some(v))))
            }
        }
        _ => Verdict::Skip,
    })
}

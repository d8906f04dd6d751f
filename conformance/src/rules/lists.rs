//! lists.*: the type of each list's count, on every answer.

use aggpay_internal::syntax;
use aggpay_mock::Fault;

use super::observe::{Cases, Observed, Verdict, schema};
use super::{Claim, Kind, Level, Rule, Run};
use crate::contract::subject::{Said, Subject};
use crate::contract::{CountForm, FieldKind};
use crate::http::show;

pub fn rules() -> Vec<Rule> {
    vec![Rule {
        id: "lists.count-type",
        level: Level::Required,
        kind: Kind::Check,
        source: "API.md typing rule 5",
        claims: &[Claim {
            holds: "count is a string, an integer in the access-key and refund lists",
            says: &[
                "`count` is a string in list responses, except in the access-key list and the refund list where it is an integer.",
            ],
        }],
        summary: "count is a string, except an integer in the access-key and refund lists",
        faults: &[Fault::CountTypesSwapped],
        judges: &[
            Subject::Field(|k| matches!(k, FieldKind::Count(_))),
            Subject::Said(Said::Counts),
        ],
        run: Run::EveryAnswer(count_types, Cases::Successes),
    }]
}

fn count_types(e: &Observed<'_>) -> Option<String> {
    schema(e, |field, value| match (field.kind, value) {
        (FieldKind::Count(form), Some(v)) => {
            let as_string = form == CountForm::Text;
            if field.kind.type_matches(v)
                && (!as_string || v.as_str().is_some_and(syntax::is_numeric_id))
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

//! body.*: every body, success or error, is JSON.

use super::observe::from_log;
use super::{Level, Rule};
use crate::http::Exchange;

pub fn rules() -> Vec<Rule> {
    vec![Rule {
        id: "body.json",
        level: Level::Required,
        source: "API.md Conventions 2; Errors (both body shapes are JSON)",
        summary: "every response body, success or error, is JSON",
        faults: &["text-errors"],
        check: |c| from_log(c, false),
        observe: Some(json),
    }]
}

fn json(e: &Exchange) -> Option<String> {
    e.json.is_none().then(|| "the body is not JSON".to_owned())
}

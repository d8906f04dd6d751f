//! envelope.*: every success is `{api_version: "v1", data: {...}}`, and
//! every valid request sampled succeeds.

use aggpay_mock::Fault;
use serde_json::Value;

use super::observe::{Cases, Observed, from_log};
use super::{Check, Level, Outcome, Rule, Run};
use crate::contract::subject::{Said, Subject, on};
use crate::http::show;

pub fn rules() -> Vec<Rule> {
    vec![Rule {
        id: "envelope.success",
        level: Level::Required,
        source: "API.md Conventions 3; Versioning 1",
        says: &[
            "Success body: an object with `api_version` (string, value v1) and `data` (object).",
            "every response body carries `api_version` with the value v1.",
        ],
        summary: "every operation sampled succeeds with 2xx, and every 2xx body is {api_version: \"v1\", data: {...}}",
        faults: &[Fault::WrongApiVersion, Fault::ShortBatchToken],
        judges: &[
            Subject::Answer(on::every_op),
            Subject::Said(Said::BaseUrl),
            Subject::Said(Said::Envelope),
        ],
        run: Run::EveryAnswerAnd(observe, envelope),
    }]
}

fn observe(e: &Observed<'_>) -> Option<String> {
    if !e.success() {
        return None;
    }
    match &e.json {
        Some(v) if v.get("api_version") != Some(&Value::from("v1")) => Some(format!(
            "api_version is {}, not \"v1\"",
            show(v.get("api_version"))
        )),
        Some(v) if !v.get("data").is_some_and(Value::is_object) => {
            Some(format!("data is {}, not an object", show(v.get("data"))))
        }
        Some(_) => None,
        None => Some("a success body that is not JSON".into()),
    }
}

fn envelope(c: &Check<'_>) -> Outcome {
    let outcome = from_log(c, Cases::Successes);
    let mut failures: Vec<_> = outcome
        .failures
        .into_iter()
        .chain(outcome.inconclusive)
        .collect();
    let mut cases = outcome.cases;
    // Valid requests of the sampling must succeed (a transient failure
    // that never went away proves nothing, and is set apart).
    let mut wrong = 0;
    for sample in &c.ctx.samples {
        cases += 1;
        if !sample.exchange.success() {
            let failure = c.fail(
                &sample.exchange,
                format!("{}: a valid request did not succeed", sample.op),
            );
            if failure.inconclusive || wrong < 5 {
                wrong += u32::from(!failure.inconclusive);
                failures.push(failure);
            }
        }
    }
    Outcome::judged(cases, failures)
}

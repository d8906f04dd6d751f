//! envelope.*: every success is `{api_version: "v1", data: {...}}`, and
//! every valid request sampled succeeds.

use aggpay_mock::Fault;
use serde_json::Value;

use super::observe::{Cases, Observed, from_log};
use super::{Check, Claim, Kind, Level, Outcome, Rule, Run};
use crate::contract::subject::{Said, Subject, on};
use crate::http::show;

const ENVELOPE: Claim = Claim {
    holds: "a success body is {api_version: \"v1\", data: {...}}",
    says: &[
        "Success body: an object with `api_version` (string, value v1) and `data` (object).",
        "every response body carries `api_version` with the value v1.",
    ],
};
pub(crate) const VALID_REQUEST_SUCCEEDS: Claim = Claim {
    holds: "a valid request of an operation API.md offers, with the key, succeeds",
    says: &[
        "Every path below is appended to it and begins with /v1/aggregators/{aggregator-id}.",
        "Success body: an object with `api_version` (string, value v1) and `data` (object).",
    ],
};

pub fn rules() -> Vec<Rule> {
    vec![Rule {
        id: "envelope.success",
        level: Level::Required,
        kind: Kind::Check,
        source: "API.md Conventions 3; Versioning 1",
        claims: &[ENVELOPE, VALID_REQUEST_SUCCEEDS],
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
        // A lookup refused under WIRE.md's names may be read under names
        // of the server's own: `wire.lookup-names` reports it.
        if sample.exchange.refused() && c.ctx.lookup_refused(&sample.exchange.request) {
            continue;
        }
        cases += 1;
        if !sample.exchange.success() {
            let failure = c.fail(
                &VALID_REQUEST_SUCCEEDS,
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

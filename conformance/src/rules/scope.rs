//! scope.*: every operation is scoped to the one aggregator its path
//! names.

use aggpay_mock::Fault;
use serde_json::Value;

use super::observe::{Cases, Observed, Verdict, schema};
use super::support::{Judge, Reached};
use super::{Check, Claim, Kind, Level, Outcome, Rule, Run};
use crate::contract::subject::{Said, Subject};
use crate::contract::{At, OpId, Place};
use crate::http::{Exchange, Request, show};

const OWN_AGGREGATOR: Claim = Claim {
    holds: "every record answered belongs to the aggregator of the path: the aggregator record is it, every aggregator_id names it",
    says: &[
        "Every operation is scoped to one aggregator, addressed by {aggregator-id} in the path, and authenticated with an aggregator access key.",
    ],
};
const STRANGER_REFUSED: Claim = Claim {
    holds: "an aggregator that is not the key's is never served: 401, or 404 error.not_found in its form",
    says: &[
        "Every operation is scoped to one aggregator, addressed by {aggregator-id} in the path, and authenticated with an aggregator access key.",
        "Whether the key must belong to the aggregator named in the path: not shown.",
        "Returns `data`: Aggregator. Errors: 404 error.not_found.",
    ],
};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "scope.aggregator",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md What the service does (every operation is scoped to one aggregator, addressed by {aggregator-id} in the path); Aggregator, AccessKey, AggregatorMerchant, Transaction, WebhookEndpoint (aggregator_id)",
            claims: &[OWN_AGGREGATOR],
            summary: "the aggregator record's token, and every aggregator_id of every record of every answer (later pages included), is the aggregator of the path",
            faults: &[Fault::ForeignAggregatorId, Fault::AnyAggregator],
            judges: &[Subject::Said(Said::Scope)],
            run: Run::EveryAnswer(aggregator, Cases::Successes),
        },
        Rule {
            id: "scope.unknown-aggregator",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Aggregator (404 error.not_found); Authentication 2 and 4",
            claims: &[STRANGER_REFUSED],
            summary: "a well-formed aggregator id that is not the key's never succeeds, on every operation: 401, or 404 error.not_found",
            faults: &[Fault::AnyAggregator],
            judges: &[
                Subject::Error(|op, s| s == 404 && op.path_id.is_none()),
                Subject::Said(Said::Scope),
            ],
            run: Run::Check(unknown_aggregator),
        },
    ]
}

/// The aggregator a request's URL names.
fn path_aggregator(e: &Exchange) -> Option<&str> {
    let root = format!("{}/", aggpay_internal::syntax::AGGREGATORS_ROOT);
    let rest = e.url.split(root.as_str()).nth(1)?;
    Some(rest.split(['/', '?']).next().unwrap_or(rest))
}

fn aggregator(e: &Observed<'_>) -> Option<String> {
    let want = path_aggregator(e)?;
    let op = e.op()?;
    let data = e.data()?;
    if op.id == OpId::Aggregator {
        let token = data["token"].as_str().unwrap_or("");
        if token != want {
            return Some(format!("the aggregator record is {token:?}, not {want:?}"));
        }
    }
    schema(e, |field, value| match (field.name, value) {
        ("aggregator_id", Some(Value::String(got))) if got == want => Verdict::Ok,
        ("aggregator_id", Some(v)) => Verdict::Bad(format!(
            "a record of aggregator {} under aggregator {want:?}",
            show(Some(v))
        )),
        _ => Verdict::Skip,
    })
}

fn unknown_aggregator(c: &Check<'_>) -> Outcome {
    // Another aggregator of the server's own shape: the configured one
    // with its end changed within its alphabet.
    let Some(stranger) = super::forms::unknown_like(c.ctx.http.aggregator()) else {
        return Outcome::skipped("the configured aggregator id is too short to vary");
    };
    let stranger = stranger.as_str();
    // Every other value of each request is the server's own: a value the
    // harness made up may be refused for its shape before the aggregator
    // is looked at.
    let ops: Vec<Request> = crate::contract::OPS
        .iter()
        .filter_map(|op| super::auth::known_request(c.ctx, op))
        .collect();
    let mut judge = Judge::default();
    // A refusal of the request's query is not the stranger's to explain
    // where the key's own aggregator refuses that query too: which the
    // server checks first, query or aggregator, is not shown (room
    // `check-order`).
    let answers = c.map(&ops, |r: &Request| {
        let e = c.send(r.clone().for_aggregator(stranger));
        let own_refused = e.refused() && c.send(r.clone()).refused();
        (e, own_refused)
    });
    for (e, own_refused) in answers {
        let place = crate::contract::Op::route(e.request.method, &e.request.path)
            .map(|op| Place::new(op.id, At::Answer));
        if own_refused && let Some(place) = place {
            judge.reached(
                c,
                place,
                Ok(Reached::Not(
                    "the server refuses this request's query on the key's own aggregator too, and whether it checks the query or the aggregator first is not shown".to_owned(),
                )),
            );
            continue;
        }
        let ok = match e.status() {
            Some(401) => true,
            Some(404) => super::errors::form(&e).is_none(),
            _ => false,
        };
        judge.check(ok, || {
            c.fail(
                &STRANGER_REFUSED,
                &e,
                format!(
                    "aggregator {stranger} (not the key's): not 401 nor a bare 404 error.not_found"
                ),
            )
        });
    }
    judge.outcome()
}

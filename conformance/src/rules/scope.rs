//! scope.*: every operation is scoped to the one aggregator its path
//! names.

use super::support::{Judge, text};
use super::{Check, Level, Outcome, Rule};
use crate::http::Request;

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "scope.aggregator",
            level: Level::Required,
            source: "API.md What the service does (every operation is scoped to one aggregator, addressed by {aggregator-id} in the path); Aggregator, AccessKey, AggregatorMerchant, Transaction, WebhookEndpoint (aggregator_id)",
            summary: "the aggregator record's token, and every aggregator_id of every sampled record, is the aggregator of the path",
            faults: &["foreign-aggregator-id"],
            check: aggregator,
            observe: None,
        },
        Rule {
            id: "scope.unknown-aggregator",
            level: Level::Required,
            source: "API.md Aggregator (404 error.not_found); Authentication 2 and 4",
            summary: "a well-formed aggregator id that is not the key's never succeeds, on every operation: 401, or 404 error.not_found",
            faults: &["any-aggregator"],
            check: unknown_aggregator,
            observe: None,
        },
    ]
}

fn aggregator(c: &Check<'_>) -> Outcome {
    let want = c.ctx.http.aggregator();
    let mut judge = Judge::default();
    for sample in &c.ctx.samples {
        let Some(data) = sample.exchange.data() else {
            continue;
        };
        let mut records: Vec<(&str, &serde_json::Value)> = Vec::new();
        match sample.op {
            "aggregator" => {
                let token = text(data, "token");
                judge.check(token == want, || {
                    c.fail(
                        &sample.exchange,
                        format!("the aggregator record is {token:?}, not {want:?}"),
                    )
                });
                records.extend(
                    data["keys"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|k| ("keys", k)),
                );
            }
            "keys" => records.extend(
                data["keys"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|k| ("keys", k)),
            ),
            "rotate" => records.push(("rotate", data)),
            "merchants" => records.extend(
                data["merchants"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|m| ("merchants", m)),
            ),
            "transactions" => records.extend(
                data["transactions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|t| ("transactions", t)),
            ),
            "webhooks" => records.extend(
                data["endpoints"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|w| ("webhooks", w)),
            ),
            _ => {}
        }
        for (op, record) in records {
            let got = text(record, "aggregator_id");
            judge.check(got == want, || {
                c.fail(
                    &sample.exchange,
                    format!("{op}: a record of aggregator {got:?} under aggregator {want:?}"),
                )
            });
        }
    }
    if judge.cases == 0 {
        return Outcome::skipped("no record with an aggregator was sampled");
    }
    judge.outcome()
}

fn unknown_aggregator(c: &Check<'_>) -> Outcome {
    let stranger = "agg_conformance0stranger";
    let ops = super::auth::operations(c.ctx);
    let mut judge = Judge::default();
    let answers = c.map(&ops, |r: &Request| {
        c.send(r.clone().for_aggregator(stranger))
    });
    for e in answers {
        let ok = match e.status() {
            Some(401) => true,
            Some(404) => super::errors::bare(&e, 404, "error.not_found").is_none(),
            _ => false,
        };
        judge.check(ok, || {
            c.fail(
                &e,
                format!(
                    "aggregator {stranger} (not the key's): not 401 nor a bare 404 error.not_found"
                ),
            )
        });
    }
    judge.outcome()
}

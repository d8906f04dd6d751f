//! keys.*: the rotation answers with the key asked and its new secret,
//! which the key list then shows; the aggregator record and the key list
//! agree.

use std::collections::BTreeMap;

use serde_json::Value;

use super::support::{Judge, text};
use super::{Check, Level, Outcome, Rule};
use crate::http::Request;

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "keys.rotation",
            level: Level::Required,
            source: "API.md Access keys (rotates the key and returns the AccessKey with the new secret); Authentication 3 (secrets returned in clear by list)",
            summary: "rotation returns the key asked with a secret different from the one before, and the key list then shows that new secret",
            faults: &["rotate-same-secret", "rotate-other-key"],
            check: rotation,
            observe: None,
        },
        Rule {
            id: "keys.consistent",
            level: Level::Required,
            source: "API.md Authentication 3 (access keys are listed and returned inside the aggregator record; their secret is returned in clear); Aggregator (keys)",
            summary: "the keys of the aggregator record are those of the key list, with the same state and the same secret in clear",
            faults: &["aggregator-keys-masked"],
            check: consistent,
            observe: None,
        },
    ]
}

/// The `ak_` identifier of a key record (its id, or its token).
fn key_id(key: &Value) -> &str {
    let (id, token) = (text(key, "id"), text(key, "token"));
    if id.starts_with("ak_") && !id.starts_with("ak_tok_") {
        id
    } else {
        token
    }
}

fn rotation(c: &Check<'_>) -> Outcome {
    let e = match c.ctx.sample_or_why("rotate") {
        Ok(e) => e,
        Err(why) => return Outcome::skipped(why),
    };
    let mut judge = Judge::default();
    let Some(key) = e.data() else {
        judge.check(false, || c.fail(e, "the rotation did not succeed"));
        return judge.outcome();
    };
    let asked = e.request.path.split('/').nth(2).unwrap_or("");
    judge.check(key_id(key) == asked, || {
        c.fail(
            e,
            format!(
                "asked to rotate {asked}, answered with key {:?}",
                key_id(key)
            ),
        )
    });
    let new = text(key, "secret");
    judge.check(!new.is_empty(), || {
        c.fail(e, "rotation did not return a key with a secret")
    });
    if let Some(old) = &c.ctx.found.secret_before_rotation {
        judge.check(new != old, || {
            c.fail(e, "rotation returned the secret the key already had")
        });
    }
    // The list shows the new secret now.
    let listed = c.send(Request::get("/keys").q("limit", 100));
    let shown = listed
        .data()
        .and_then(|d| d["keys"].as_array())
        .and_then(|keys| keys.iter().find(|k| key_id(k) == asked))
        .map(|k| text(k, "secret").to_owned());
    if let Some(shown) = shown {
        judge.check(shown == new, || {
            c.fail(
                &listed,
                format!("after rotating {asked}, the key list shows another secret"),
            )
        });
    }
    judge.outcome()
}

fn consistent(c: &Check<'_>) -> Outcome {
    let Some(record) = c.ctx.data("aggregator") else {
        return Outcome::skipped("the aggregator record did not succeed");
    };
    let listed: BTreeMap<String, &Value> = c
        .ctx
        .rows("keys", "keys")
        .map(|(_, k)| (text(k, "token").to_owned(), k))
        .collect();
    if listed.is_empty() {
        return Outcome::skipped("the key list showed no key");
    }
    let e = c
        .ctx
        .first("aggregator")
        .unwrap_or_else(|| unreachable!("data came from a sample"));
    let mut judge = Judge::default();
    let in_record: Vec<&Value> = record["keys"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    judge.check(in_record.len() == listed.len(), || {
        c.fail(
            e,
            format!(
                "the record holds {} keys, the list {}",
                in_record.len(),
                listed.len()
            ),
        )
    });
    for key in in_record {
        let token = text(key, "token");
        match listed.get(token) {
            None => judge.check(false, || {
                c.fail(e, format!("key {token} of the record is not listed"))
            }),
            Some(other) => {
                for field in ["is_active", "secret", "id", "name"] {
                    judge.check(key[field] == other[field], || {
                        c.fail(
                            e,
                            format!("key {token}: {field} differs between the record and the list"),
                        )
                    });
                }
            }
        }
    }
    judge.outcome()
}

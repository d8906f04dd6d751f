//! keys.*: the rotation answers with the key asked and its new secret,
//! which the key list and the aggregator record then show; the two agree
//! on every key, before the write and after it.

use aggpay_mock::Fault;
use serde_json::Value;

use super::support::Judge;
use super::{Check, Claim, Finding, Kind, Level, Outcome, Rule, Run};
use crate::contract::Effect;
use crate::contract::OpId;
use crate::contract::resources::{ACCESS_KEY, Written};
use crate::contract::subject::{Said, Subject};
use crate::ctx::Sampled;
use crate::http::Exchange;
use crate::model::expect::differs;
use crate::model::{ListModel, key_id, token_of};

pub(crate) const ROTATES_THE_KEY_ASKED: Claim = Claim {
    holds: "a rotation answers with the key asked, and a new secret",
    says: &["Rotates the key and returns `data`: AccessKey with the new secret."],
};
const NEW_SECRET_LISTED: Claim = Claim {
    holds: "after a rotation, the key list shows the new secret",
    says: &[
        "Rotates the key and returns `data`: AccessKey with the new secret.",
        "| secret | string | the key secret, returned in clear by list, get-aggregator and rotate; shown as <ACCESS_KEY_SECRET> |",
    ],
};
const RECORD_KEYS_ARE_LISTED: Claim = Claim {
    holds: "the aggregator record's keys are the key list's, field by field",
    says: &[
        "Access keys are listed, returned inside the aggregator record, and rotated through the access-key operations; their `secret` field is returned in clear.",
        "| keys | array of AccessKey | |",
    ],
};
const ROTATION_WRITES_ONE_KEY: Claim = Claim {
    holds: "a rotation writes the key asked and no other",
    says: &["Rotates the key and returns `data`: AccessKey with the new secret."],
};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "keys.rotation",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Access keys (rotates the key and returns the AccessKey with the new secret); Authentication 3 (secrets returned in clear by list)",
            claims: &[
                ROTATES_THE_KEY_ASKED,
                NEW_SECRET_LISTED,
                super::envelope::VALID_REQUEST_SUCCEEDS,
            ],
            summary: "rotation returns the key asked with a secret different from the one before (a lost answer is recovered from the key list), and the key list then shows that new secret",
            faults: &[Fault::RotateSameSecret, Fault::RotateOtherKey],
            judges: &[
                Subject::PathId(|op, _| op.effect == Effect::Rotation),
                Subject::Said(Said::KeysHeld),
            ],
            run: Run::Check(rotation),
        },
        Rule {
            id: "keys.consistent",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Authentication 3 (access keys are listed and returned inside the aggregator record; their secret is returned in clear); Aggregator (keys)",
            claims: &[
                RECORD_KEYS_ARE_LISTED,
                ROTATION_WRITES_ONE_KEY,
                super::envelope::VALID_REQUEST_SUCCEEDS,
            ],
            summary: "the keys of the aggregator record are those of the key list, field by field, before the rotation and after it; the rotation changes nothing of the keys it was not asked to rotate",
            faults: &[Fault::AggregatorKeysMasked, Fault::AggregatorKeysStale],
            judges: &[Subject::Said(Said::KeysHeld)],
            run: Run::Check(consistent),
        },
    ]
}

fn rotation(c: &Check<'_>) -> Outcome {
    let Some(rotation) = &c.ctx.model.rotation else {
        return Outcome::skipped(
            c.ctx
                .sample_or_why(OpId::Rotate)
                .err()
                .unwrap_or_else(|| "no rotation was made".into()),
        );
    };
    let e = &rotation.answer;
    let mut judge = Judge::default();
    let Some(key) = rotation.key() else {
        judge.fail(c.fail(
            &super::envelope::VALID_REQUEST_SUCCEEDS,
            e,
            "the rotation did not succeed",
        ));
        judge.case();
        return judge.outcome();
    };
    let asked = &rotation.id;
    judge.check(key_id(key) == asked, || {
        c.fail(
            &ROTATES_THE_KEY_ASKED,
            e,
            format!(
                "asked to rotate {asked}, answered with key {:?}",
                key_id(key)
            ),
        )
    });
    let new = key["secret"].as_str().unwrap_or("");
    judge.check(!new.is_empty(), || {
        c.fail(
            &ROTATES_THE_KEY_ASKED,
            e,
            "rotation did not return a key with a secret",
        )
    });
    if let Some(old) = &rotation.before {
        judge.check(new != old, || {
            c.fail(
                &ROTATES_THE_KEY_ASKED,
                e,
                "rotation returned the secret the key already had",
            )
        });
    }
    // The list read after the write shows the new secret.
    if let Some(list) = c.ctx.model.list(OpId::Keys)
        && let Some(listed) = list.known().find(|k| key_id(k) == asked)
    {
        let page = list.pages.first().unwrap_or(e);
        judge.check(listed["secret"] == new, || {
            c.fail(
                &NEW_SECRET_LISTED,
                page,
                format!("after rotating {asked}, the key list shows another secret"),
            )
        });
    }
    judge.outcome()
}

/// The keys of an aggregator record are the key list's, field by field.
fn agree(
    c: &Check<'_>,
    record: &Exchange,
    list: &ListModel,
    when: &str,
) -> Vec<Result<(), Finding>> {
    let mut out = Vec::new();
    let Some(keys) = record.data().and_then(|d| d["keys"].as_array()) else {
        return out;
    };
    let listed: Vec<&Value> = list.known().collect();
    out.push(if keys.len() == listed.len() {
        Ok(())
    } else {
        Err(c.fail(
            &RECORD_KEYS_ARE_LISTED,
            record,
            format!(
                "{when}: the record holds {} keys, the list {}",
                keys.len(),
                listed.len()
            ),
        ))
    });
    for key in keys {
        let token = token_of(key);
        out.push(match list.find(&token) {
            None => Err(c.fail(
                &RECORD_KEYS_ARE_LISTED,
                record,
                format!("{when}: key {token} of the record is not listed"),
            )),
            Some(other) => match differs(key, other, ACCESS_KEY) {
                None => Ok(()),
                Some(why) => Err(c.fail(
                    &RECORD_KEYS_ARE_LISTED,
                    record,
                    format!("{when}: key {token}: {why}"),
                )),
            },
        });
    }
    out
}

fn consistent(c: &Check<'_>) -> Outcome {
    let model = &c.ctx.model;
    let (Some(after), Some(record)) = (model.list(OpId::Keys), c.ctx.first(OpId::Aggregator))
    else {
        return Outcome::skipped("the key list or the aggregator record was not read");
    };
    if record.transient.is_some() || after.usable().is_err() {
        return Outcome::judged(
            1,
            vec![c.fail(
                &super::envelope::VALID_REQUEST_SUCCEEDS,
                record,
                "the key list or the aggregator record was not read",
            )],
        );
    }
    if !record.success() {
        return Outcome::skipped("the aggregator record did not succeed");
    }
    let mut judge = Judge::default();
    match (
        &model.keys_before,
        c.ctx.first(Sampled::AggregatorAfterWrites),
        &model.rotation,
    ) {
        (Some(before), Some(record_after), Some(rotation)) => {
            agree(c, record, before, "before the rotation")
                .into_iter()
                .for_each(|r| judge.result(r));
            agree(c, record_after, after, "after the rotation")
                .into_iter()
                .for_each(|r| judge.result(r));
            // The rotation wrote one key: the others did not move. Of the
            // rotated key, what API.md leaves a write free to change may
            // have changed (contract::resources::WRITTEN).
            for key in before.known() {
                let token = token_of(key);
                let page = after.pages.first().unwrap_or(record_after);
                let Some(now) = after.find(&token) else {
                    judge.fail(c.fail(
                        &ROTATION_WRITES_ONE_KEY,
                        page,
                        format!("key {token} is gone after the rotation"),
                    ));
                    continue;
                };
                let mut was = key.clone();
                if key_id(key) == rotation.id {
                    for field in Written::fields_of(OpId::Keys) {
                        was[*field] = now[*field].clone();
                    }
                }
                judge.result(match differs(now, &was, ACCESS_KEY) {
                    None => Ok(()),
                    Some(why) => Err(c.fail(
                        &ROTATION_WRITES_ONE_KEY,
                        page,
                        format!("key {token} changed with the rotation of another: {why}"),
                    )),
                });
            }
        }
        _ => agree(c, record, after, "the keys")
            .into_iter()
            .for_each(|r| judge.result(r)),
    }
    judge.outcome()
}

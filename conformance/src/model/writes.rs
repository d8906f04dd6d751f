//! The harness's writes. Never repeated blindly: a rotation whose answer
//! was lost is looked up in the key list (secrets are returned there in
//! clear): sent again when the list shows it did not happen, recovered
//! from the list when it did (then rotated once more, to see an answer);
//! an export, which makes a new job each time, is sent again up to twice
//! ([`Http::repeatable_write`]).

use serde_json::Value;

use super::list::{ListModel, Source};
use crate::contract::{Op, OpId};
use crate::http::{Exchange, Http, Request};

/// Rotations sent at most, when the key list shows each lost one did not
/// happen.
const ROTATIONS: usize = 6;

/// A key rotation and what is known of it.
#[derive(Debug, Clone)]
pub struct Rotation {
    /// The key rotated (its `ak_` id).
    pub id: String,
    /// Its secret before, from the key list.
    pub before: Option<String>,
    /// The answer to the last rotation sent.
    pub answer: Exchange,
    /// When that answer was lost: the key as the list shows it after the
    /// rotation happened.
    pub recovered: Option<Value>,
}

impl Rotation {
    /// The rotated key as the server gave it: the answer, or the record
    /// recovered from the list.
    pub fn key(&self) -> Option<&Value> {
        self.answer.data().or(self.recovered.as_ref())
    }
}

/// The `ak_` identifier of a key record (its id, or its token).
pub fn key_id(key: &Value) -> &str {
    let text = |f: &str| key[f].as_str().unwrap_or("");
    let (id, token) = (text("id"), text("token"));
    if id.starts_with("ak_") && !id.starts_with("ak_tok_") {
        id
    } else {
        token
    }
}

/// The key `id` in a key list read now.
fn listed(http: &Http, id: &str) -> Option<Value> {
    let list = ListModel::read(http, Source::of(Op::get(OpId::Keys)));
    list.known().find(|k| key_id(k) == id).cloned()
}

/// Why key `id`, whose secret is `secret`, must not be rotated: it is
/// the key in use, and rotating it would lock the run out.
pub fn key_in_use(http: &Http, id: &str, secret: Option<&str>) -> Option<String> {
    secret
        .is_some_and(|s| http.key_matches(s))
        .then(|| format!("refusing to rotate {id}: it is the key in use"))
}

/// The secret key `id` has now, from the key list, unless it is the key
/// in use ([`key_in_use`]).
pub fn rotatable(http: &Http, id: &str) -> Result<Option<String>, String> {
    let secret = listed(http, id).and_then(|k| k["secret"].as_str().map(str::to_owned));
    match key_in_use(http, id, secret.as_deref()) {
        Some(why) => Err(why),
        None => Ok(secret),
    }
}

/// Rotates key `id`, whose secret is `before`.
///
/// A lost answer is looked up in the key list: a rotation that did not
/// happen is sent again; one that did is recovered from the list and, so
/// that its answer is seen and judged too, followed by one more rotation
/// (not blind: the list has shown the state it starts from). Never more
/// than [`ROTATIONS`] in all.
pub fn rotate(http: &Http, id: &str, before: Option<&str>) -> Rotation {
    rotate_as(http, Request::to_one(OpId::Rotate, id), id, before)
}

/// [`rotate`], with the rotation's request as given (in a form of its
/// own: chunked, after `Expect: 100-continue`).
pub fn rotate_as(http: &Http, request: Request, id: &str, before: Option<&str>) -> Rotation {
    let mut before = before.map(str::to_owned);
    let mut answer = http.write(request.clone());
    let mut rotated_again = false;
    for _ in 1..ROTATIONS {
        if answer.transient.is_none() {
            break;
        }
        // The answer was lost, or the server refused for now: the list
        // says whether the key was rotated.
        let Some(now) = listed(http, id) else { break };
        let secret = now["secret"].as_str();
        if before.is_some() && secret != before.as_deref() {
            // It happened: recovered, or rotated once more from there.
            if rotated_again || secret.is_none() || !http.wait_before_rewrite(&answer) {
                return Rotation {
                    id: id.to_owned(),
                    before,
                    answer,
                    recovered: Some(now),
                };
            }
            rotated_again = true;
            before = secret.map(str::to_owned);
        } else if before.is_none() || !http.wait_before_rewrite(&answer) {
            break;
        }
        http.count_retry();
        answer = http.write(request.clone());
    }
    Rotation {
        id: id.to_owned(),
        before,
        answer,
        recovered: None,
    }
}

/// Creates a report export: a 429 is waited out, another lost answer is
/// sent again up to twice (another job is harmless).
pub fn export(http: &Http, body: &str) -> Exchange {
    http.send(Request::to(OpId::ReportExport).json(body))
}

//! Access keys: the list and the rotation.

use aggpay::{AccessKeyId, KeyId};

use crate::fault::Fault;
use crate::legal::Legal;
use crate::query::{Invalid, Query};
use crate::reply::{self, Reply};
use crate::router::{App, Deferred};
use crate::synth::Rng;
use crate::wire::{AccessKey, IntCount, KeyList};

impl App {
    pub(crate) fn keys(&self, q: &Query) -> Result<Reply, Invalid> {
        let limit = self.offset_limit(q, true)?;
        let offset = self.offset(q)?;
        let names = if self.faults.has(Fault::KeyNamesNotSplit) {
            self.fragments(q.one("names")?.map(str::to_owned).into_iter().collect())
        } else {
            self.fragments(q.list("names")?)
        };
        for name in &names {
            self.plain_value("names", name)?;
        }
        let active = q
            .boolean("is_active")?
            .filter(|_| !self.faults.has(Fault::KeysActiveFilterIgnored));
        let keys: Vec<_> = self
            .state
            .keys()
            .into_iter()
            .filter(|k| active.is_none_or(|a| k.is_active == a))
            .filter(|k| {
                if self.faults.has(Fault::NameFragmentPrefixOnly) {
                    let name = self.fold(&k.name);
                    names.is_empty() || names.iter().any(|f| name.starts_with(f.as_str()))
                } else {
                    self.matches_any(&k.name, &names)
                }
            })
            .collect();
        let count = IntCount(keys.len() as u64);
        let keys = self.page(self.in_order(keys.into_iter()), offset, limit);
        Ok(reply::ok(&KeyList { count, keys }))
    }

    /// A rotation whose chunked body the `chunked-body-empty` fault read
    /// as empty: answered 200 with the key as it is, nothing rotated.
    pub(crate) fn unrotated(&self, id: &str) -> Result<Reply, Invalid> {
        let id = AccessKeyId::parse(id).map_err(|e| e.to_string())?;
        Ok(
            match self
                .state
                .keys()
                .into_iter()
                .find(|k| k.access_key_id() == Some(&id))
            {
                Some(key) => reply::ok(&key),
                None => reply::not_found(),
            },
        )
    }

    pub(crate) fn rotate(&self, id: &str, deferred: &Deferred) -> Result<Reply, Invalid> {
        let id = AccessKeyId::parse(id).map_err(|e| e.to_string())?;
        let (reply, nth) = match self.rotate_key(&id, deferred) {
            Some((mut key, nth)) if self.faults.has(Fault::RotateOtherKey) => {
                if let Some(other) = self.state.keys().into_iter().find(|k| k.id != key.id) {
                    key.id = other.id;
                    key.token = other.token;
                }
                (reply::ok(&key), nth)
            }
            Some((key, nth)) if self.legal.has(Legal::WrittenFieldsChange) => {
                let rotations = self.state.rotations();
                let changed = self.state.change_key(&id, |k| {
                    let mut rng = Rng::new(self.data.seed, "rotated-key", rotations);
                    k.key_id = crate::data::parse_generated(KeyId::parse(rng.token("key_", 12)));
                    k.is_active = true;
                });
                (reply::ok(&changed.unwrap_or(key)), nth)
            }
            Some((key, nth)) => (reply::ok(&key), nth),
            None if self.faults.has(Fault::RotateUnknownActs) => {
                let last = self
                    .state
                    .keys()
                    .into_iter()
                    .filter_map(|k| k.access_key_id().cloned())
                    .next_back();
                match last.and_then(|id| self.rotate_key(&id, deferred)) {
                    Some((key, nth)) => (reply::ok(&key), nth),
                    None => return Ok(reply::not_found()),
                }
            }
            None => return Ok(reply::not_found()),
        };
        // The new secret is committed all the same: the client is told the
        // rotation failed, and the key's secret is one no answer gave.
        if nth > 1 && self.faults.has(Fault::RotationErrorCommits) {
            return Ok(reply::internal("the key could not be rotated"));
        }
        Ok(reply)
    }

    /// Rotates key `id`: at once, or under `rotations-lost-update` in a
    /// copy of the keys document that `deferred` writes back whole after
    /// a pause. The key and its rotations so far.
    fn rotate_key(&self, id: &AccessKeyId, deferred: &Deferred) -> Option<(AccessKey, u64)> {
        if self.faults.has(Fault::RotationsLostUpdate) {
            let (key, nth, keys) = self.state.rotate_in_copy(&self.data, id, &self.faults)?;
            deferred.put_keys(keys);
            Some((key, nth))
        } else {
            self.state.rotate(&self.data, id, &self.faults)
        }
    }
}

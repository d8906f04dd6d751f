//! What changes at run time: access keys, the count of report exports,
//! and the step of live data. All of it is bounded: a server shared by a
//! team's CI for months does not grow.

use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};

use aggpay::AccessKeyId;

use crate::wire::{AccessKey, ReportExport};

use crate::data::Dataset;
use crate::fault::{Fault, Faults};

#[derive(Debug)]
struct KeySlot {
    key: AccessKey,
    generation: u64,
    /// The last old secrets, still accepted only under
    /// `Fault::RotateKeepsOldSecret`.
    retired: Vec<aggpay::Secret>,
}

/// Old secrets kept per key for `Fault::RotateKeepsOldSecret`.
const RETIRED_KEPT: usize = 16;

/// Mutable state behind locks: a rotation replaces a key in one write, so
/// no request ever sees a half-rotated key.
#[derive(Debug)]
pub(crate) struct State {
    keys: RwLock<Vec<KeySlot>>,
    exports: AtomicU64,
    /// Exports made of each batch (by index), for `written-fields-change`.
    exported: RwLock<std::collections::BTreeMap<u64, i64>>,
    rotations: AtomicU64,
    tick: AtomicU64,
}

/// Lock poisoning only follows a panic in a handler; the state itself is
/// always consistent (every write is one assignment), so keep serving.
fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl State {
    pub(crate) fn new(data: &Dataset) -> Self {
        let keys = data
            .initial_keys()
            .into_iter()
            .map(|key| KeySlot {
                key,
                generation: 0,
                retired: Vec::new(),
            })
            .collect();
        Self {
            keys: RwLock::new(keys),
            exports: AtomicU64::new(0),
            exported: RwLock::default(),
            rotations: AtomicU64::new(0),
            tick: AtomicU64::new(0),
        }
    }

    /// True when `secret` is the secret of an active key (of any key, with
    /// `inactive`). With `keep_old`, the secrets rotation retired are taken
    /// too.
    pub(crate) fn accepts(&self, secret: &str, keep_old: bool, inactive: bool) -> bool {
        read(&self.keys).iter().any(|s| {
            (s.key.is_active || inactive)
                && (s.key.secret.expose() == secret
                    || (keep_old && s.retired.iter().any(|r| r.expose() == secret)))
        })
    }

    /// True when `secret`'s first `len` characters are an active key's
    /// (the `secret-prefix-32` fault: a column indexed on a prefix).
    pub(crate) fn accepts_prefix(&self, secret: &str, len: usize) -> bool {
        let head = |s: &str| s.chars().take(len).collect::<String>();
        secret.chars().count() >= len
            && read(&self.keys)
                .iter()
                .any(|s| s.key.is_active && head(s.key.secret.expose()) == head(secret))
    }

    /// True when `secret` was an active key's before any rotation (the
    /// stale check of `webhooks-stale-secrets`).
    pub(crate) fn accepted_at_start(&self, data: &Dataset, secret: &str) -> bool {
        read(&self.keys)
            .iter()
            .enumerate()
            .any(|(i, s)| s.key.is_active && data.key_secret(i as u64, 0).expose() == secret)
    }

    pub(crate) fn keys(&self) -> Vec<AccessKey> {
        read(&self.keys).iter().map(|s| s.key.clone()).collect()
    }

    pub(crate) fn key(&self, index: usize) -> Option<AccessKey> {
        read(&self.keys).get(index).map(|s| s.key.clone())
    }

    /// Gives the key a new secret; the old one stops working at once.
    pub(crate) fn rotate(
        &self,
        data: &Dataset,
        id: &AccessKeyId,
        faults: &Faults,
    ) -> Option<AccessKey> {
        let mut keys = write(&self.keys);
        let (index, slot) = keys
            .iter_mut()
            .enumerate()
            .find(|(_, s)| s.key.access_key_id() == Some(id))?;
        if !faults.has(Fault::RotateSameSecret) {
            slot.generation += 1;
            let old = std::mem::replace(
                &mut slot.key.secret,
                data.key_secret(index as u64, slot.generation),
            );
            slot.retired.push(old);
            if slot.retired.len() > RETIRED_KEPT {
                slot.retired.remove(0);
            }
        }
        slot.key.updated_at = jiff::Timestamp::now();
        self.rotations.fetch_add(1, Ordering::SeqCst);
        Some(slot.key.clone())
    }

    /// Numbers a new export and builds it with `make` (exports are not
    /// kept: no operation reads one back).
    pub(crate) fn add_export(&self, make: impl FnOnce(u64) -> ReportExport) -> ReportExport {
        make(self.exports.fetch_add(1, Ordering::SeqCst) + 1)
    }

    /// Counts an export of batch `index`.
    pub(crate) fn exported(&self, index: u64) {
        *write(&self.exported).entry(index).or_default() += 1;
    }

    /// Exports made of batch `index` so far.
    pub(crate) fn exports_of(&self, index: u64) -> i64 {
        read(&self.exported).get(&index).copied().unwrap_or(0)
    }

    /// Changes key `id` with `change`; its record as changed.
    pub(crate) fn change_key(
        &self,
        id: &AccessKeyId,
        change: impl FnOnce(&mut AccessKey),
    ) -> Option<AccessKey> {
        let mut keys = write(&self.keys);
        let slot = keys
            .iter_mut()
            .find(|s| s.key.access_key_id() == Some(id))?;
        change(&mut slot.key);
        Some(slot.key.clone())
    }

    /// Report exports created so far.
    pub(crate) fn exports(&self) -> u64 {
        self.exports.load(Ordering::SeqCst)
    }

    /// Key rotations carried out so far.
    pub(crate) fn rotations(&self) -> u64 {
        self.rotations.load(Ordering::SeqCst)
    }

    /// The step of live data.
    pub(crate) fn tick(&self) -> u64 {
        self.tick.load(Ordering::SeqCst)
    }

    /// Advances live data by `steps`; returns the new step.
    pub(crate) fn advance(&self, steps: u64) -> u64 {
        self.tick.fetch_add(steps, Ordering::SeqCst) + steps
    }
}

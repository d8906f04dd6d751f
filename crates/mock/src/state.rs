//! What the API changes at run time: access keys and report exports.

use std::sync::{Mutex, RwLock};

use aggpay::AccessKeyId;

use crate::wire::{AccessKey, ReportExport};

use crate::data::Dataset;
use crate::fault::{Fault, Faults};

#[derive(Debug)]
struct KeySlot {
    key: AccessKey,
    generation: u64,
    /// Old secrets, still accepted only under `Fault::RotateKeepsOldSecret`.
    retired: Vec<aggpay::Secret>,
}

/// Mutable state behind locks: a rotation replaces a key in one write, so
/// no request ever sees a half-rotated key.
#[derive(Debug)]
pub(crate) struct State {
    keys: RwLock<Vec<KeySlot>>,
    exports: Mutex<Vec<ReportExport>>,
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
            exports: Mutex::new(Vec::new()),
        }
    }

    /// True when `secret` is the secret of an active key.
    pub(crate) fn accepts(&self, secret: &str, faults: &Faults) -> bool {
        let keep_old = faults.has(Fault::RotateKeepsOldSecret);
        read(&self.keys).iter().any(|s| {
            s.key.is_active
                && (s.key.secret.expose() == secret
                    || (keep_old && s.retired.iter().any(|r| r.expose() == secret)))
        })
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
        }
        slot.key.updated_at = jiff::Timestamp::now();
        Some(slot.key.clone())
    }

    /// Stores a new export, numbering it; `make` builds it from its number.
    pub(crate) fn add_export(&self, make: impl FnOnce(u64) -> ReportExport) -> ReportExport {
        let mut exports = self
            .exports
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let export = make(exports.len() as u64 + 1);
        exports.push(export.clone());
        export
    }
}

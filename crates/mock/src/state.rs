//! What changes at run time: access keys, the count of report exports,
//! and the step of live data; under the state faults (`reads-write`,
//! `export-upsert`, `export-body-pooled`) the records they save. All of it
//! is bounded: a server shared by a team's CI for months does not grow.
//! Under `rotations-lost-update` the keys are one document, read whole and
//! written back whole ([`KeysDocument`]).

use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};

use aggpay::{AccessKeyId, ReportKind};
use jiff::{SignedDuration, Timestamp};

use crate::wire::{AccessKey, ReportExport};

use crate::data::Dataset;
use crate::fault::{Fault, Faults};

#[derive(Debug, Clone)]
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
    /// Rotations of each key (by index), whether or not they changed its
    /// secret or were lost: `rotation-error-commits` fails from a key's
    /// second on, and `rotations-lost-update` numbers secrets by it (kept
    /// out of the keys document, so a lost write never makes a later
    /// rotation hand out a secret again).
    rotated: RwLock<std::collections::BTreeMap<usize, u64>>,
    tick: AtomicU64,
    /// The updated_at the `reads-write` fault saved: of aliases (by
    /// index, at most one per alias) and of the aggregator.
    stamps: RwLock<Stamps>,
    /// The exports kept by scope for `export-upsert`, oldest first.
    upserts: RwLock<std::collections::VecDeque<(ExportScope, ReportExport)>>,
    /// The pooled export bodies of `export-body-pooled`, by connection
    /// (the newest kept).
    pool: RwLock<std::collections::BTreeMap<u64, ExportPool>>,
}

/// The records `reads-write` saved.
#[derive(Debug, Default)]
struct Stamps {
    aliases: std::collections::BTreeMap<u64, Timestamp>,
    aggregator: Option<Timestamp>,
}

/// What makes two report exports one under `export-upsert`: kind, batch
/// (its index) and merchant id.
pub(crate) type ExportScope = (ReportKind, u64, String);

/// Exports kept by scope for `export-upsert`.
const UPSERTS_KEPT: usize = 1_024;

/// The members of a report export body as the `export-body-pooled` fault
/// keeps them: the last value each was given (a string), never reset.
#[derive(Debug, Default, Clone)]
pub(crate) struct ExportPool {
    pub(crate) settlement_batch_id: Option<String>,
    pub(crate) kind: Option<String>,
    pub(crate) merchant_id: Option<String>,
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
            rotated: RwLock::default(),
            tick: AtomicU64::new(0),
            stamps: RwLock::default(),
            upserts: RwLock::default(),
            pool: RwLock::default(),
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
    /// With the key, how many rotations it has had, this one included.
    pub(crate) fn rotate(
        &self,
        data: &Dataset,
        id: &AccessKeyId,
        faults: &Faults,
    ) -> Option<(AccessKey, u64)> {
        let mut keys = write(&self.keys);
        let (index, slot) = keys
            .iter_mut()
            .enumerate()
            .find(|(_, s)| s.key.access_key_id() == Some(id))?;
        let generation = slot.generation + 1;
        rotate_slot(data, index, slot, generation, faults);
        Some((slot.key.clone(), self.count_rotation(index)))
    }

    /// The rotation of `rotations-lost-update`: key `id` rotated in a copy
    /// of the whole keys document read now, the state left as it is. The
    /// rotated key, its rotations so far, and the document to write back
    /// whole with [`State::put_keys`]; whatever another write changed in
    /// between is then put back as this read saw it.
    pub(crate) fn rotate_in_copy(
        &self,
        data: &Dataset,
        id: &AccessKeyId,
        faults: &Faults,
    ) -> Option<(AccessKey, u64, KeysDocument)> {
        let mut keys = read(&self.keys).clone();
        let (index, slot) = keys
            .iter_mut()
            .enumerate()
            .find(|(_, s)| s.key.access_key_id() == Some(id))?;
        let nth = self.count_rotation(index);
        // Numbered by the rotations counted, not by the copy's generation,
        // which a lost write may have set back.
        rotate_slot(data, index, slot, nth, faults);
        let key = slot.key.clone();
        Some((key, nth, KeysDocument(keys)))
    }

    /// Writes the keys document back whole (`rotations-lost-update`).
    pub(crate) fn put_keys(&self, document: KeysDocument) {
        *write(&self.keys) = document.0;
    }

    /// Counts a rotation of key `index`: its rotations so far.
    fn count_rotation(&self, index: usize) -> u64 {
        self.rotations.fetch_add(1, Ordering::SeqCst);
        let mut rotated = write(&self.rotated);
        let count = rotated.entry(index).or_default();
        *count += 1;
        *count
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

    /// Saves alias `index` as read now (`reads-write`): its new updated_at,
    /// the time of the read, and at least a second after the last one
    /// (`seeded`, the dataset's, before the first).
    pub(crate) fn stamp_alias(&self, index: u64, seeded: Timestamp) -> Timestamp {
        let mut stamps = write(&self.stamps);
        let last = stamps.aliases.get(&index).copied().unwrap_or(seeded);
        let stamp = next_stamp(last);
        stamps.aliases.insert(index, stamp);
        stamp
    }

    /// Saves the aggregator (`reads-write`, at a ledger read): its new
    /// updated_at, as [`State::stamp_alias`].
    pub(crate) fn stamp_aggregator(&self, seeded: Timestamp) -> Timestamp {
        let mut stamps = write(&self.stamps);
        let stamp = next_stamp(stamps.aggregator.unwrap_or(seeded));
        stamps.aggregator = Some(stamp);
        stamp
    }

    /// The aggregator's updated_at as `reads-write` saved it, if it did.
    pub(crate) fn aggregator_stamp(&self) -> Option<Timestamp> {
        read(&self.stamps).aggregator
    }

    /// The export kept for `scope` (`export-upsert`), its attempts raised
    /// by one; or, when there is none, the export `make` builds, kept.
    pub(crate) fn upsert_export(
        &self,
        scope: ExportScope,
        make: impl FnOnce() -> ReportExport,
    ) -> ReportExport {
        let mut upserts = write(&self.upserts);
        if let Some((_, kept)) = upserts.iter_mut().find(|(s, _)| *s == scope) {
            kept.attempts += 1;
            return kept.clone();
        }
        let export = make();
        if upserts.len() == UPSERTS_KEPT {
            upserts.pop_front();
        }
        upserts.push_back((scope, export.clone()));
        export
    }

    /// Decodes body members into connection `conn`'s pooled export body
    /// (`export-body-pooled`): each member given is kept, and the pool
    /// answers with every member's last value.
    pub(crate) fn pool_export(&self, conn: u64, given: ExportPool) -> ExportPool {
        let mut pools = write(&self.pool);
        if !pools.contains_key(&conn) && pools.len() == UPSERTS_KEPT {
            pools.pop_first();
        }
        let pool = pools.entry(conn).or_default();
        let ExportPool {
            settlement_batch_id,
            kind,
            merchant_id,
        } = given;
        if settlement_batch_id.is_some() {
            pool.settlement_batch_id = settlement_batch_id;
        }
        if kind.is_some() {
            pool.kind = kind;
        }
        if merchant_id.is_some() {
            pool.merchant_id = merchant_id;
        }
        pool.clone()
    }
}

/// The keys as one document, read whole to be written back whole
/// (`rotations-lost-update`).
#[derive(Debug)]
pub(crate) struct KeysDocument(Vec<KeySlot>);

/// Rotates `slot`, key `index`, to the secret of `generation` (unless
/// `rotate-same-secret` keeps the old one), stamping its updated_at.
fn rotate_slot(data: &Dataset, index: usize, slot: &mut KeySlot, generation: u64, faults: &Faults) {
    if !faults.has(Fault::RotateSameSecret) {
        slot.generation = generation;
        let old = std::mem::replace(
            &mut slot.key.secret,
            data.key_secret(index as u64, generation),
        );
        slot.retired.push(old);
        if slot.retired.len() > RETIRED_KEPT {
            slot.retired.remove(0);
        }
    }
    slot.key.updated_at = jiff::Timestamp::now();
}

/// The updated_at a read saves under `reads-write`: now (to the
/// millisecond, as the dataset's timestamps), and at least a second after
/// `last`, so that two reads within one second differ too.
fn next_stamp(last: Timestamp) -> Timestamp {
    let now = Timestamp::now();
    let now = Timestamp::from_millisecond(now.as_millisecond()).unwrap_or(now);
    let after = last
        .checked_add(SignedDuration::from_secs(1))
        .unwrap_or(last);
    now.max(after)
}

//! The dataset as a client sees it: fixed, or moving with live data.
//!
//! Live data moves in steps (ticks). At each step one new batch arrives as
//! `BATCH_CREATED`; a batch starts processing one step after it arrives and
//! gains transactions at every step while it processes; two steps later it
//! is `BATCH_COMPLETED` with all of them and its payouts. The batches that
//! are open when the server starts (created or processing) complete within
//! the first few steps the same way. Ids only grow: new batches and new
//! transactions come after every existing one, so cursors stay valid. A
//! transaction never changes once served; a batch's status, version and
//! file name change as it moves.
//!
//! Refunds move too: at each step one new refund arrives (created after
//! every other) as `R_INITIATED`, and two steps later it is `R_COMPLETED`
//! with its `settle_at` set.

use super::{BatchRows, Dataset};
use crate::synth::{Rng, at};
use crate::wire::{Refund, SettlementBatch};

/// Steps a live refund stays initiated.
const REFUND_SETTLE_STEPS: u64 = 2;

/// Steps a batch spends processing.
const PROCESSING_STEPS: u64 = 2;

/// Where a batch stands at a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Not live, or a batch that never moves: its generated status.
    Fixed,
    Created,
    Processing {
        step: u64,
        of: u64,
    },
    Completed {
        transitions: i64,
    },
}

/// The dataset at one moment.
#[derive(Debug, Clone, Copy)]
pub(crate) struct View<'a> {
    pub(crate) data: &'a Dataset,
    tick: Option<u64>,
}

impl<'a> View<'a> {
    /// The dataset as generated (no live data).
    pub(crate) fn fixed(data: &'a Dataset) -> Self {
        Self { data, tick: None }
    }

    /// Live data at step `tick`.
    pub(crate) fn live(data: &'a Dataset, tick: u64) -> Self {
        Self {
            data,
            tick: Some(tick),
        }
    }

    pub(crate) fn is_live(&self) -> bool {
        self.tick.is_some()
    }

    pub(crate) fn batch_count(&self) -> u64 {
        self.data.sizes.batches + self.tick.unwrap_or(0)
    }

    /// The steps at which a moving batch starts processing and completes.
    fn schedule(&self, index: u64) -> Option<(u64, u64)> {
        let n = self.data.sizes.batches;
        let jitter = Rng::new(self.data.seed, "live-schedule", index).below(3);
        if index >= n {
            let arrived = index - n + 1;
            return Some((arrived + 1, arrived + 1 + PROCESSING_STEPS));
        }
        match self.data.batch_status(index) {
            0 => Some((1 + jitter, 1 + jitter + PROCESSING_STEPS)),
            1 => Some((0, 1 + jitter)),
            _ => None,
        }
    }

    fn stage(&self, index: u64) -> Stage {
        let (Some(tick), Some((start, done))) = (self.tick, self.schedule(index)) else {
            return Stage::Fixed;
        };
        let began_created = index >= self.data.sizes.batches || self.data.batch_status(index) == 0;
        if tick < start {
            Stage::Created
        } else if tick < done {
            Stage::Processing {
                step: tick - start,
                of: done - start,
            }
        } else {
            Stage::Completed {
                transitions: if began_created { 2 } else { 1 },
            }
        }
    }

    /// The status filter integer of batch `index`.
    pub(crate) fn batch_status(&self, index: u64) -> u8 {
        match self.stage(index) {
            Stage::Fixed => self.data.batch_status(index),
            Stage::Created => 0,
            Stage::Processing { .. } => 1,
            Stage::Completed { .. } => 2,
        }
    }

    /// Transactions a moving batch ends with.
    fn final_count(&self, index: u64) -> u64 {
        if Some(index) == self.data.large_batch() {
            return self.data.sizes.large_batch_transactions;
        }
        let max = self.data.sizes.max_batch_transactions;
        if max == 0 {
            return 0;
        }
        1 + Rng::new(self.data.seed, "live-txn-count", index).below(max)
    }

    pub(crate) fn transaction_count(&self, index: u64) -> u64 {
        match self.stage(index) {
            Stage::Fixed => self.data.transaction_count(index),
            Stage::Created => 0,
            Stage::Processing { step, of } => self.final_count(index) * (step + 1) / (of + 1),
            Stage::Completed { .. } => self.final_count(index),
        }
    }

    /// Payouts appear when a batch completes.
    pub(crate) fn payout_count(&self, index: u64) -> u64 {
        match self.stage(index) {
            Stage::Fixed => self.data.payout_count(index),
            Stage::Completed { .. } => self.data.payouts_of(index, self.final_count(index)),
            _ => 0,
        }
    }

    pub(crate) fn batch(&self, index: u64) -> SettlementBatch {
        match self.stage(index) {
            Stage::Fixed => self.data.batch(index),
            Stage::Completed { transitions } => self.data.batch_as(index, 2, transitions),
            Stage::Processing { .. } => self.data.batch_as(
                index,
                1,
                i64::from(index >= self.data.sizes.batches || self.data.batch_status(index) == 0),
            ),
            Stage::Created => self.data.batch_as(index, 0, 0),
        }
    }

    pub(crate) fn batch_index(&self, token: &str) -> Option<u64> {
        self.data.batch_index(token, self.batch_count())
    }

    /// The rows of batch `index`: its transactions, or its payouts.
    pub(crate) fn rows(&self, index: u64, payouts: bool) -> BatchRows<'a> {
        BatchRows {
            data: self.data,
            batch: index,
            payouts,
            len: if payouts {
                self.payout_count(index)
            } else {
                self.transaction_count(index)
            },
        }
    }

    /// Refunds there are now.
    pub(crate) fn refund_count(&self) -> u64 {
        self.data.sizes.refunds + self.tick.unwrap_or(0)
    }

    /// Refund `index` as it is now: a refund that arrived live is
    /// initiated for its first steps, then completed.
    pub(crate) fn refund(&self, index: u64) -> Refund {
        let mut refund = self.data.refund(index);
        let (Some(tick), Some(arrived)) = (self.tick, index.checked_sub(self.data.sizes.refunds))
        else {
            return refund;
        };
        let created = refund.created_at.as_second();
        if tick < arrived + 1 + REFUND_SETTLE_STEPS {
            refund.status = aggpay::RefundStatus::Initiated;
            refund.settle_at = None;
            refund.updated_at = at(created + 120, 0);
        } else {
            refund.status = aggpay::RefundStatus::Completed;
            refund.settle_at = Some(at(created + 86_400, 0));
            refund.updated_at = at(created + 7_200, 0);
        }
        refund
    }

    /// The (batch, transaction) of a payment that exists now.
    pub(crate) fn payment_location(&self, id: &str) -> Option<(u64, u64)> {
        let (batch, txn) = self.data.payment_place(id)?;
        (batch < self.batch_count() && txn < self.transaction_count(batch)).then_some((batch, txn))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::MockConfig;

    #[test]
    fn live_data_only_grows_and_settles() {
        let data = Dataset::new(3, MockConfig::new().batches(12).sizes);
        let fixed = View::fixed(&data);
        let start = View::live(&data, 0);
        assert_eq!(start.batch_count(), 12);
        for i in 0..12 {
            let s = data.batch_status(i);
            if s >= 2 {
                assert_eq!(start.transaction_count(i), fixed.transaction_count(i));
            }
        }
        let mut previous: Vec<u64> = (0..12).map(|i| start.transaction_count(i)).collect();
        for tick in 1..10 {
            let view = View::live(&data, tick);
            assert_eq!(view.batch_count(), 12 + tick);
            for (i, before) in previous.iter().enumerate() {
                let now = view.transaction_count(i as u64);
                assert!(now >= *before, "batch {i} lost transactions at {tick}");
            }
            previous = (0..view.batch_count())
                .map(|i| view.transaction_count(i))
                .collect();
            // Ids grow with the index, so new batches sort after old ones.
            let newest = view.batch(view.batch_count() - 1);
            assert_eq!(newest.status, aggpay::BatchStatus::Created);
            assert!(newest.file_name.is_empty());
        }
        // Refunds arrive initiated and complete two steps later.
        let n = data.sizes.refunds;
        assert_eq!(View::live(&data, 1).refund_count(), n + 1);
        assert_eq!(
            View::live(&data, 1).refund(n).status,
            aggpay::RefundStatus::Initiated
        );
        let settled = View::live(&data, 3).refund(n);
        assert_eq!(settled.status, aggpay::RefundStatus::Completed);
        assert!(settled.settle_at.is_some());
        assert!(
            View::live(&data, 1).refund(n).created_at > data.refund(n - 1).created_at,
            "a new refund is the newest"
        );
        // By step 9 every batch but the three newest has completed.
        let late = View::live(&data, 9);
        for i in 0..late.batch_count() - 3 {
            assert!(late.batch_status(i) >= 2, "batch {i}");
        }
    }
}

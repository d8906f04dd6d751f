//! Settlement batches, their transactions and payouts, and payment charges.

use aggpay::{
    AggregatorMerchantId, BatchStatus, BatchToken, Currency, JobId, LedgerAccountId, NumericId,
    Paisa, PaymentId, PaymentType, PayoutStatus, PayoutToken, RailMerchantId, TransactionStatus,
    TransactionToken, TransactionType,
};

use std::sync::{Arc, PoisonError};

use super::{Dataset, parse_generated};
use crate::synth::{PROVINCES, Rng, at};
use crate::wire::{PaymentCharges, SettlementBatch, SettlementPayout, Transaction};

/// The 24 orders of the four batch statuses (filter integers 0..=3).
const PERMUTATIONS: [[u8; 4]; 24] = [
    [0, 1, 2, 3],
    [0, 1, 3, 2],
    [0, 2, 1, 3],
    [0, 2, 3, 1],
    [0, 3, 1, 2],
    [0, 3, 2, 1],
    [1, 0, 2, 3],
    [1, 0, 3, 2],
    [1, 2, 0, 3],
    [1, 2, 3, 0],
    [1, 3, 0, 2],
    [1, 3, 2, 0],
    [2, 0, 1, 3],
    [2, 0, 3, 1],
    [2, 1, 0, 3],
    [2, 1, 3, 0],
    [2, 3, 0, 1],
    [2, 3, 1, 0],
    [3, 0, 1, 2],
    [3, 0, 2, 1],
    [3, 1, 0, 2],
    [3, 1, 2, 0],
    [3, 2, 0, 1],
    [3, 2, 1, 0],
];

/// Every transaction index `j` with `j % 16 == 15` is a refund of payment `j - 1`.
const REFUND_EVERY: u64 = 16;

/// The seven amounts of a payment, a transaction or a payout, in paisa.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Amounts {
    gross: i64,
    fee: i64,
    net: i64,
    sales_tax_on_fee: i64,
    sales_tax_withholding: i64,
    income_tax_withholding: i64,
    digital_tax: i64,
}

impl Amounts {
    /// Adds `other` (`sign` -1: takes it away), amount by amount.
    fn add(&mut self, other: &Amounts, sign: i64) {
        self.gross += sign * other.gross;
        self.fee += sign * other.fee;
        self.net += sign * other.net;
        self.sales_tax_on_fee += sign * other.sales_tax_on_fee;
        self.sales_tax_withholding += sign * other.sales_tax_withholding;
        self.income_tax_withholding += sign * other.income_tax_withholding;
        self.digital_tax += sign * other.digital_tax;
    }
}
/// Numeric ids of one batch's rows start at `(batch + 1) * ID_SPACE`.
const ID_SPACE: u64 = 10_000_000_000;
/// Payout ids start this far into a batch's id space, after any transaction.
const PAYOUT_OFFSET: u64 = 9_000_000_000;

/// A batch's rows, transactions or payouts: the first `len` of them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BatchRows<'a> {
    pub(crate) data: &'a Dataset,
    pub(crate) batch: u64,
    pub(crate) payouts: bool,
    pub(crate) len: u64,
}

impl super::Seq for BatchRows<'_> {
    fn len(&self) -> u64 {
        self.len
    }

    fn id_at(&self, k: u64) -> u64 {
        let base = (self.batch + 1) * ID_SPACE + if self.payouts { PAYOUT_OFFSET } else { 0 };
        let tag = if self.payouts { "payout-id" } else { "txn-id" };
        base + 4 * k + Rng::new(self.data.seed, tag, (self.batch << 32) | k).below(4)
    }
}

impl Dataset {
    fn permutation(&self, block: u64) -> &'static [u8; 4] {
        &PERMUTATIONS[Rng::new(self.seed, "batch-perm", block).below(24) as usize]
    }

    /// Position of `status` inside block `block`.
    pub(crate) fn status_position(&self, block: u64, status: u8) -> u64 {
        self.permutation(block)
            .iter()
            .position(|s| *s == status)
            .unwrap_or(0) as u64
    }

    pub(crate) fn batch_status(&self, index: u64) -> u8 {
        self.permutation(index / 4)[(index % 4) as usize]
    }

    /// The batch that carries `large_batch_transactions`: the first
    /// completed batch, so that it is a realistic one to export or walk.
    pub(crate) fn large_batch(&self) -> Option<u64> {
        let index = self.status_position(0, 2);
        (self.sizes.large_batch_transactions > 0 && index < self.sizes.batches).then_some(index)
    }

    pub(crate) fn batch_numeric_id(&self, index: u64) -> u64 {
        1_000 + index * 5 + Rng::new(self.seed, "batch-id", index).below(5)
    }

    /// `sb_` and a UUID: 39 characters. The first 64 bits map back to the index.
    pub(crate) fn batch_token(&self, index: u64) -> BatchToken {
        let head = self.codecs.batch.encode(index);
        let tail = Rng::new(self.seed, "batch-token", index).hex(16);
        parse_generated(BatchToken::parse(format!(
            "sb_{}-{}-{}-{}-{}",
            &head[..8],
            &head[8..12],
            &head[12..16],
            &tail[..4],
            &tail[4..16]
        )))
    }

    /// The index of the batch `token` names, among the first `count`.
    pub(crate) fn batch_index(&self, token: &str, count: u64) -> Option<u64> {
        let body = token.strip_prefix("sb_")?;
        let head: String = body.get(..18)?.chars().filter(|c| *c != '-').collect();
        let index = self.codecs.batch.decode(&head)?;
        (index < count && self.batch_token(index).as_str() == token).then_some(index)
    }

    pub(crate) fn transaction_count(&self, batch: u64) -> u64 {
        if Some(batch) == self.large_batch() {
            return self.sizes.large_batch_transactions;
        }
        if self.batch_status(batch) == 0 || self.sizes.max_batch_transactions == 0 {
            return 0;
        }
        let mut rng = Rng::new(self.seed, "txn-count", batch);
        if rng.chance(12) {
            return 0;
        }
        1 + rng.below(self.sizes.max_batch_transactions)
    }

    /// Payouts of `batch` with its transactions settled: one per
    /// aggregator merchant that has some ([`Dataset::payout_plan`]).
    pub(crate) fn payout_count(&self, batch: u64) -> u64 {
        self.payouts_of(batch, self.transaction_count(batch))
    }

    /// Payouts of `batch` when its first `rows` transactions are settled.
    pub(crate) fn payouts_of(&self, batch: u64, rows: u64) -> u64 {
        if rows == 0 {
            return 0;
        }
        self.payout_plan(batch, rows).len() as u64
    }

    pub(crate) fn batch(&self, index: u64) -> SettlementBatch {
        self.batch_as(index, self.batch_status(index), 0)
    }

    /// Batch `index` in `status`, its version raised by `transitions`.
    pub(crate) fn batch_as(&self, index: u64, status: u8, transitions: i64) -> SettlementBatch {
        let mut rng = Rng::new(self.seed, "batch", index);
        let day = index as i64 * 86_400;
        let status = BatchStatus::from_filter_value(status).unwrap_or(BatchStatus::Created);
        let date = at(day, 0);
        let file_name = if status == BatchStatus::Created {
            String::new()
        } else {
            format!("settlement_{}_{:04}.csv", date.strftime("%Y%m%d"), index)
        };
        SettlementBatch {
            id: NumericId::new(self.batch_numeric_id(index)),
            token: self.batch_token(index),
            file_name,
            date,
            status,
            version: 1 + rng.below(3) as i64 + transitions,
            created_by_job_id: parse_generated(JobId::parse(rng.token("job_", 16))),
            partner_id: self.partner_id.clone(),
            created_at: at(
                day + 7_200 + rng.below(3_600) as i64,
                rng.below(1_000) as i64,
            ),
        }
    }

    fn payment_index(&self, batch: u64, txn: u64) -> u64 {
        (batch << 32) | txn
    }

    pub(crate) fn payment_id(&self, batch: u64, txn: u64) -> PaymentId {
        let index = self.payment_index(batch, txn);
        parse_generated(PaymentId::parse(self.codecs.payment.token("pm_", index)))
    }

    /// The (batch, transaction) a payment id would name; whether it
    /// exists is the view's business (`View::payment_location`).
    pub(crate) fn payment_place(&self, id: &str) -> Option<(u64, u64)> {
        let index = self.codecs.payment.decode(id.strip_prefix("pm_")?)?;
        let (batch, txn) = (index >> 32, index & 0xffff_ffff);
        (txn % REFUND_EVERY != REFUND_EVERY - 1).then_some((batch, txn))
    }

    /// A payment that exists, for sample inputs and refunds: the first
    /// transaction of the first batch at or after `start` that has one.
    pub(crate) fn some_payment(&self, start: u64) -> Option<(u64, u64)> {
        let n = self.sizes.batches;
        (0..n.min(512))
            .map(|step| (start + step) % n)
            .find(|b| self.transaction_count(*b) > 0)
            .map(|b| (b, 0))
    }

    pub(crate) fn charges(&self, batch: u64, txn: u64) -> PaymentCharges {
        let a = self.amounts(batch, txn);
        PaymentCharges {
            payment_id: self.payment_id(batch, txn),
            gross_amount: Paisa::new(a.gross),
            currency: Currency::PKR,
            fee_amount: Paisa::new(a.fee),
            net_amount: Paisa::new(a.net),
            sales_tax_on_fee_amount: Paisa::new(a.sales_tax_on_fee),
            sales_tax_withholding_amount: Paisa::new(a.sales_tax_withholding),
            income_tax_withholding_amount: Paisa::new(a.income_tax_withholding),
            digital_tax_amount: Paisa::new(a.digital_tax),
        }
    }

    /// The aggregator merchant of transaction `txn` of `batch`: a refund's
    /// is its payment's.
    fn merchant_of(&self, batch: u64, txn: u64) -> u64 {
        let payment_txn = if txn % REFUND_EVERY == REFUND_EVERY - 1 {
            txn - 1
        } else {
            txn
        };
        Rng::new(self.seed, "txn", self.payment_index(batch, payment_txn))
            .below(self.sizes.merchants)
    }

    /// The payouts of `batch` when its first `rows` transactions are
    /// settled: one per aggregator merchant with transactions among them,
    /// in merchant order, each the sums of that merchant's seven amounts
    /// (a refund takes away what its payment brought). Payouts then
    /// reconcile with the transactions exactly, as a real service's do.
    /// Derived once per (batch, rows) and kept.
    pub(crate) fn payout_plan(&self, batch: u64, rows: u64) -> Arc<super::PayoutPlan> {
        let mut plans = self
            .payout_plans
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(plan) = plans.get(&(batch, rows)) {
            return Arc::clone(plan);
        }
        let mut sums: std::collections::BTreeMap<u64, Amounts> = Default::default();
        for txn in 0..rows {
            let refund = txn % REFUND_EVERY == REFUND_EVERY - 1;
            let amounts = self.amounts(batch, if refund { txn - 1 } else { txn });
            sums.entry(self.merchant_of(batch, txn))
                .or_default()
                .add(&amounts, if refund { -1 } else { 1 });
        }
        let plan = Arc::new(sums.into_iter().collect::<Vec<_>>());
        // A bound on what is kept: plans are cheap to derive again.
        if plans.len() >= 1_024 {
            plans.clear();
        }
        plans.insert((batch, rows), Arc::clone(&plan));
        plan
    }

    /// A payment's seven amounts.
    fn amounts(&self, batch: u64, txn: u64) -> Amounts {
        let mut rng = Rng::new(self.seed, "charges", self.payment_index(batch, txn));
        let gross = 100 + rng.below(5_000_000) as i64;
        let fee = gross * (1 + rng.below(3) as i64) / 100;
        let sales_tax_on_fee = fee * 16 / 100;
        let sales_tax_withholding = if rng.chance(3) { gross / 100 } else { 0 };
        let income_tax_withholding = if rng.chance(2) { gross / 200 } else { 0 };
        let digital_tax = if rng.chance(5) { gross / 500 } else { 0 };
        let net = gross
            - fee
            - sales_tax_on_fee
            - sales_tax_withholding
            - income_tax_withholding
            - digital_tax;
        Amounts {
            gross,
            fee,
            net,
            sales_tax_on_fee,
            sales_tax_withholding,
            income_tax_withholding,
            digital_tax,
        }
    }

    /// A transaction of `batch`, whose token is given: a page of rows
    /// makes it once, not once a row.
    pub(crate) fn transaction_of<'a>(
        &'a self,
        batch: u64,
        token: &'a BatchToken,
        txn: u64,
    ) -> Transaction<'a> {
        let rows = BatchRows {
            data: self,
            batch,
            payouts: false,
            len: 0,
        };
        let id = super::Seq::id_at(&rows, txn);
        let mut rng = Rng::new(self.seed, "txn", self.payment_index(batch, txn));
        let is_refund = txn % REFUND_EVERY == REFUND_EVERY - 1;
        let payment_txn = if is_refund { txn - 1 } else { txn };
        let charges = self.charges(batch, payment_txn);
        // Drawn for every row, so that the row's other draws stay put; a
        // refund is its payment's merchant's.
        let drawn = rng.below(self.sizes.merchants);
        let merchant = if is_refund {
            self.merchant_of(batch, txn)
        } else {
            drawn
        };
        let label = &self.labels[merchant as usize];
        let status = match rng.below(20) {
            0 => TransactionStatus::LedgerPosted,
            1 => TransactionStatus::SettlementScheduled,
            2 => TransactionStatus::SettlementDispatched,
            3 => TransactionStatus::SettlementReversed,
            _ => TransactionStatus::SettlementConfirmed,
        };
        let created = batch as i64 * 86_400 - 86_400 + (txn % 86_400) as i64;
        Transaction {
            id: NumericId::new(id),
            token: parse_generated(TransactionToken::parse(rng.token("txn_", 20))),
            payment_id: charges.payment_id,
            refund_id: is_refund.then(|| rng.token("rfd_", 16)),
            transaction_type: if is_refund {
                TransactionType::Refund
            } else {
                TransactionType::Payment
            },
            payment_type: if rng.chance(4) {
                PaymentType::StaticQr
            } else {
                PaymentType::DynamicQr
            },
            status,
            aggregator_id: &self.aggregator_id,
            aggregator_name: &self.aggregator_name,
            aggregator_merchant_id: &label.token,
            aggregator_merchant_name: &label.name,
            rail_merchant_id: &label.rail_token,
            rail_merchant_name: &label.name,
            rail_merchant_ntn: &label.ntn,
            rail_merchant_province: PROVINCES[(merchant % PROVINCES.len() as u64) as usize],
            gross_amount: charges.gross_amount,
            fee_amount: charges.fee_amount,
            net_amount: charges.net_amount,
            sales_tax_on_fee_amount: charges.sales_tax_on_fee_amount,
            sales_tax_withholding_amount: charges.sales_tax_withholding_amount,
            income_tax_withholding_amount: charges.income_tax_withholding_amount,
            digital_tax_amount: charges.digital_tax_amount,
            currency: Currency::PKR,
            latest_batch_id: token,
            partner_id: &self.partner_id,
            created_at: at(created, 0),
            updated_at: at(
                created + 3_600 + rng.below(3_600) as i64,
                rng.below(1_000) as i64,
            ),
        }
    }

    /// Payout `k` of `batch` when its first `settled` transactions are
    /// settled: merchant `k` of the plan, with its sums.
    pub(crate) fn payout(&self, batch: u64, k: u64, settled: u64) -> SettlementPayout {
        let rows = BatchRows {
            data: self,
            batch,
            payouts: true,
            len: 0,
        };
        let id = super::Seq::id_at(&rows, k);
        let mut rng = Rng::new(self.seed, "payout", self.payment_index(batch, k));
        let plan = self.payout_plan(batch, settled);
        let (merchant, a) = usize::try_from(k)
            .ok()
            .and_then(|k| plan.get(k).copied())
            .unwrap_or((k % self.sizes.merchants.max(1), Amounts::default()));
        let created = batch as i64 * 86_400 + 10_800;
        let status = match rng.below(10) {
            0 => PayoutStatus::Pending,
            1 => PayoutStatus::Failed,
            _ => PayoutStatus::Posted,
        };
        let failure_reason = if status == PayoutStatus::Failed {
            "beneficiary account closed".to_owned()
        } else {
            String::new()
        };
        SettlementPayout {
            id: NumericId::new(id),
            token: parse_generated(PayoutToken::parse(rng.token("stxn_", 20))),
            settlement_batch_id: self.batch_token(batch),
            aggregator_id: self.aggregator_id.clone(),
            aggregator_merchant_id: self.merchant_token(merchant),
            rail_merchant_id: self.rail_merchant_token(merchant),
            status,
            attempt: 1 + rng.below(2) as i64,
            gross_amount: Paisa::new(a.gross),
            fee_amount: Paisa::new(a.fee),
            net_amount: Paisa::new(a.net),
            sales_tax_on_fee_amount: Paisa::new(a.sales_tax_on_fee),
            sales_tax_withholding_amount: Paisa::new(a.sales_tax_withholding),
            income_tax_withholding_amount: Paisa::new(a.income_tax_withholding),
            digital_tax_amount: Paisa::new(a.digital_tax),
            debitor_account_id: self.ledger_token(),
            creditor_account_id: parse_generated(LedgerAccountId::parse(
                Rng::new(self.seed, "merchant-ledger", merchant).token("acct_", 16),
            )),
            failure_reason,
            created_at: at(created, 0),
            updated_at: at(created + 600, rng.below(1_000) as i64),
        }
    }

    pub(crate) fn merchant_token(&self, index: u64) -> AggregatorMerchantId {
        parse_generated(AggregatorMerchantId::parse(
            self.codecs.merchant.token("am_", index),
        ))
    }

    pub(crate) fn merchant_index(&self, token: &str) -> Option<u64> {
        let index = self.codecs.merchant.decode(token.strip_prefix("am_")?)?;
        (index < self.sizes.merchants).then_some(index)
    }

    pub(crate) fn rail_merchant_token(&self, index: u64) -> RailMerchantId {
        parse_generated(RailMerchantId::parse(
            self.codecs.rail_merchant.token("mer_", index),
        ))
    }

    pub(crate) fn rail_merchant_index(&self, token: &str) -> Option<u64> {
        let index = self
            .codecs
            .rail_merchant
            .decode(token.strip_prefix("mer_")?)?;
        (index < self.rail_merchant_count()).then_some(index)
    }
}

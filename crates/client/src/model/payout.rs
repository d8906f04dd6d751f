use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::open_enum::open_enum;
use crate::{
    AggregatorId, AggregatorMerchantId, BatchToken, LedgerAccountId, NumericId, Paisa, PayoutToken,
    RailMerchantId,
};

open_enum! {
    /// The state of a settlement payout.
    PayoutStatus {
        /// Posted.
        Posted = "SETTLEMENT_TXN_POSTED",
        /// Pending.
        Pending = "SETTLEMENT_TXN_PENDING",
        /// Failed.
        Failed = "SETTLEMENT_TXN_FAILED",
    }
}

/// A settlement payout (element of `data.settlement_transactions`).
///
/// The API's documentation does not show this shape; the fields are those
/// the service sends. A missing `failure_reason` reads as empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SettlementPayout {
    /// Numeric id; the list is ordered on it.
    pub id: NumericId,
    /// Its token.
    pub token: PayoutToken,
    /// The batch.
    pub settlement_batch_id: BatchToken,
    /// The aggregator.
    pub aggregator_id: AggregatorId,
    /// The aggregator merchant paid out.
    pub aggregator_merchant_id: AggregatorMerchantId,
    /// The rail merchant paid out.
    pub rail_merchant_id: RailMerchantId,
    /// Payout state.
    pub status: PayoutStatus,
    /// Attempts made.
    pub attempt: i64,
    /// Total before deductions.
    pub gross_amount: Paisa,
    /// Fee charged.
    pub fee_amount: Paisa,
    /// Amount paid out.
    pub net_amount: Paisa,
    /// Sales tax on the fee.
    pub sales_tax_on_fee_amount: Paisa,
    /// Sales tax withheld.
    pub sales_tax_withholding_amount: Paisa,
    /// Income tax withheld.
    pub income_tax_withholding_amount: Paisa,
    /// Digital presence tax.
    pub digital_tax_amount: Paisa,
    /// Ledger account debited.
    pub debitor_account_id: LedgerAccountId,
    /// Ledger account credited.
    pub creditor_account_id: LedgerAccountId,
    /// Why the payout failed; empty otherwise.
    #[serde(default)]
    pub failure_reason: String,
    /// Creation time.
    pub created_at: Timestamp,
    /// Last change.
    pub updated_at: Timestamp,
}

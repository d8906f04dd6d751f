use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::open_enum::open_enum;
use crate::{
    AggregatorId, AggregatorMerchantId, BatchToken, Currency, NumericId, Paisa, PartnerId,
    PaymentId, RailMerchantId, RefundToken, Text, TransactionToken,
};

open_enum! {
    /// The type of a transaction.
    TransactionType {
        /// A payment.
        Payment = "TT_PAYMENT",
        /// A refund.
        Refund = "TT_REFUND",
    }
}

open_enum! {
    /// How a payment was made.
    PaymentType {
        /// A dynamic QR code.
        DynamicQr = "DYNAMIC_QR",
        /// A static QR code.
        StaticQr = "STATIC_QR",
    }
}

open_enum! {
    /// The state of a transaction.
    TransactionStatus {
        /// Posted to the ledger.
        LedgerPosted = "TXN_LEDGER_POSTED",
        /// Scheduled for settlement.
        SettlementScheduled = "TXN_SETTLEMENT_SCHEDULED",
        /// Dispatched for settlement.
        SettlementDispatched = "TXN_SETTLEMENT_DISPATCHED",
        /// Settlement confirmed.
        SettlementConfirmed = "TXN_SETTLEMENT_CONFIRMED",
        /// Settlement reversed.
        SettlementReversed = "TXN_SETTLEMENT_REVERSED",
    }
}

/// A payment or refund transaction of a batch (element of `data.transactions`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Transaction {
    /// Numeric id; the list is ordered on it.
    pub id: NumericId,
    /// `txn_` token.
    pub token: TransactionToken,
    /// The payment.
    pub payment_id: PaymentId,
    /// The refund; `None` for payment transactions.
    pub refund_id: Option<RefundToken>,
    /// Transaction type.
    pub transaction_type: TransactionType,
    /// Payment type.
    pub payment_type: PaymentType,
    /// Status.
    pub status: TransactionStatus,
    /// The aggregator.
    pub aggregator_id: AggregatorId,
    /// The aggregator's name.
    pub aggregator_name: Text,
    /// The aggregator merchant.
    pub aggregator_merchant_id: AggregatorMerchantId,
    /// The aggregator merchant's name.
    pub aggregator_merchant_name: Text,
    /// The rail merchant.
    pub rail_merchant_id: RailMerchantId,
    /// The rail merchant's name.
    pub rail_merchant_name: Text,
    /// The merchant's tax number.
    pub rail_merchant_ntn: Text,
    /// The merchant's province.
    pub rail_merchant_province: Text,
    /// Total before deductions.
    pub gross_amount: Paisa,
    /// Fee charged.
    pub fee_amount: Paisa,
    /// Amount credited: gross minus fee and the four taxes.
    pub net_amount: Paisa,
    /// Sales tax on the fee.
    pub sales_tax_on_fee_amount: Paisa,
    /// Sales tax withheld.
    pub sales_tax_withholding_amount: Paisa,
    /// Income tax withheld.
    pub income_tax_withholding_amount: Paisa,
    /// Digital presence tax.
    pub digital_tax_amount: Paisa,
    /// ISO 4217 code.
    pub currency: Currency,
    /// The batch that last carried the transaction.
    pub latest_batch_id: BatchToken,
    /// `partner_` identifier.
    pub partner_id: PartnerId,
    /// Creation time.
    pub created_at: Timestamp,
    /// Last change.
    pub updated_at: Timestamp,
}

impl Transaction {
    /// What `net_amount` must be, or `None` on overflow.
    pub fn expected_net(&self) -> Option<Paisa> {
        crate::amount::net_of(
            self.gross_amount,
            [
                self.fee_amount,
                self.sales_tax_on_fee_amount,
                self.sales_tax_withholding_amount,
                self.income_tax_withholding_amount,
                self.digital_tax_amount,
            ],
        )
    }
}

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::{
    AggregatorId, AggregatorMerchantId, BankAccountId, ExternalMerchantRef, NumericId,
    RailMerchantId, Text,
};

/// A merchant linked to the aggregator (element of `data.merchants`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AggregatorMerchant {
    /// Numeric id.
    pub id: NumericId,
    /// `am_` token.
    pub token: AggregatorMerchantId,
    /// Merchant name.
    pub name: Text,
    /// The aggregator.
    pub aggregator_id: AggregatorId,
    /// The rail merchant.
    pub merchant_id: RailMerchantId,
    /// External merchant reference.
    pub merchant_external_id: ExternalMerchantRef,
    /// Settlement bank account.
    pub bank_account_id: BankAccountId,
    /// Whether the merchant is enabled.
    pub enabled: bool,
    /// Creation time.
    pub created_at: Timestamp,
    /// Last change.
    pub updated_at: Timestamp,
}

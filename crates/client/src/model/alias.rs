use jiff::Timestamp;
use jiff::civil::Date;
use serde::{Deserialize, Serialize};

use crate::open_enum::open_enum;
use crate::{AggregatorMerchantId, AliasId, NumericId, RailMerchantId, RecordId};

open_enum! {
    /// The kind of an alias.
    AliasType {
        /// A till code.
        TillCode = "TILL_CODE",
        /// A mobile number.
        Mobile = "MOBILE",
    }
}

open_enum! {
    /// The state of an alias.
    AliasStatus {
        /// In use.
        Active = "Active",
        /// Suspended.
        Suspended = "Suspended",
    }
}

/// An alias (`data` of find-alias).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Alias {
    /// Its id: numeric on most servers, though API.md calls it only a
    /// string ([`RecordId`]).
    pub id: RecordId,
    /// `als_` token.
    pub token: AliasId,
    /// The rail merchant.
    pub merchant_id: RailMerchantId,
    /// The aggregator merchant.
    pub aggregator_merchant_id: AggregatorMerchantId,
    /// Alias kind.
    pub alias_type: AliasType,
    /// Alias value (a till code for `TILL_CODE`).
    pub alias_value: String,
    /// State.
    pub status: AliasStatus,
    /// First day of validity.
    pub start_date: Date,
    /// Last day of validity.
    pub expiration_date: Date,
    /// Opening date.
    pub opening_date: Date,
    /// Closing date.
    pub closing_date: Date,
    /// Creation time.
    pub created_at: Timestamp,
    /// Last change.
    pub updated_at: Timestamp,
    /// Numeric rail record id.
    pub alias_record_id: NumericId,
}

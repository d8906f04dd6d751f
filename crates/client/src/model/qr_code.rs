use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::open_enum::open_enum;
use crate::{AggregatorMerchantId, QrCodeToken, RecordId, Text};

open_enum! {
    /// The type of a QR code. The list filter defaults to `STATIC`.
    QrType {
        /// A reusable code.
        Static = "STATIC",
        /// A one-payment code.
        Dynamic = "DYNAMIC",
    }
}

/// A QR code (element of `data.qr_codes`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct QrCode {
    /// Its id: numeric on most servers, though API.md calls it only a
    /// string ([`RecordId`]).
    pub id: RecordId,
    /// `qr_` token.
    pub token: QrCodeToken,
    /// The aggregator merchant.
    pub aggregator_merchant_id: AggregatorMerchantId,
    /// `STATIC` or `DYNAMIC`.
    #[serde(rename = "type")]
    pub qr_type: QrType,
    /// The encoded payload text.
    pub code: Text,
    /// Terminal label; may be empty.
    pub terminal_label: Text,
    /// Reference label; may be empty.
    pub reference_label: Text,
    /// Whether the code was deleted.
    pub is_deleted: bool,
    /// Creation time.
    pub created_at: Timestamp,
}

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::open_enum::open_enum;
use crate::{Paisa, PaymentId, RefundToken, Text};

open_enum! {
    /// The state of a refund.
    RefundStatus {
        /// Initiated.
        Initiated = "R_INITIATED",
        /// Completed.
        Completed = "R_COMPLETED",
        /// Failed.
        Failed = "R_FAILED",
        /// Canceled.
        Canceled = "R_CANCELED",
    }
}

open_enum! {
    /// The type of a refund.
    RefundType {
        /// The whole payment.
        Full = "FULL_REFUND",
        /// Part of the payment.
        Partial = "PARTIAL_REFUND",
    }
}

/// A refund (element of `data.keys` in the refund list).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Refund {
    /// Refund token.
    pub token: RefundToken,
    /// The refunded payment.
    pub payment_id: PaymentId,
    /// Amount refunded.
    pub amount: Paisa,
    /// Refund type.
    #[serde(rename = "type")]
    pub refund_type: RefundType,
    /// Reason.
    pub reason: Text,
    /// Additional information.
    pub addtl_info: Text,
    /// State.
    pub status: RefundStatus,
    /// Rail trace reference.
    pub trace_reference: Text,
    /// Rail message id.
    pub msg_id: Text,
    /// Return id.
    pub return_id: Text,
    /// Client request id.
    pub request_id: Text,
    /// When the rail message was created.
    pub msg_created_at: Timestamp,
    /// When the refund settles; `None` until scheduled.
    pub settle_at: Option<Timestamp>,
    /// Creation time.
    pub created_at: Timestamp,
    /// Last change.
    pub updated_at: Timestamp,
}

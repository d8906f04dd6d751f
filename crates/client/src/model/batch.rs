use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::open_enum::open_enum;
use crate::{BatchToken, JobId, NumericId, PartnerId, Text};

open_enum! {
    /// The status of a settlement batch. Responses carry the name; the list
    /// filter takes the integer ([`BatchStatus::filter_value`]).
    BatchStatus {
        /// Created (filter 0).
        Created = "BATCH_CREATED",
        /// Processing (filter 1).
        Processing = "BATCH_PROCESSING",
        /// Completed (filter 2).
        Completed = "BATCH_COMPLETED",
        /// Failed (filter 3).
        Failed = "BATCH_FAILED",
    }
}

impl BatchStatus {
    /// The integer the API's status query filter uses for it (0 to 3);
    /// `None` for a value this crate does not know.
    pub fn filter_value(&self) -> Option<u8> {
        match self {
            BatchStatus::Created => Some(0),
            BatchStatus::Processing => Some(1),
            BatchStatus::Completed => Some(2),
            BatchStatus::Failed => Some(3),
            BatchStatus::Other(_) => None,
        }
    }

    /// True for a status a batch does not leave (the API documents no
    /// transition out of `BATCH_COMPLETED` or `BATCH_FAILED`): its rows
    /// will not change, and can be counted against the server's count.
    ///
    /// ```
    /// use aggpay::BatchStatus;
    ///
    /// assert!(BatchStatus::Completed.is_final());
    /// assert!(!BatchStatus::Processing.is_final());
    /// ```
    pub fn is_final(&self) -> bool {
        matches!(self, BatchStatus::Completed | BatchStatus::Failed)
    }

    /// The status a filter integer stands for.
    pub fn from_filter_value(value: u8) -> Option<Self> {
        match value {
            0 => Some(BatchStatus::Created),
            1 => Some(BatchStatus::Processing),
            2 => Some(BatchStatus::Completed),
            3 => Some(BatchStatus::Failed),
            _ => None,
        }
    }
}

/// A settlement batch (element of `data.batches`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SettlementBatch {
    /// Numeric id; the list is ordered on it.
    pub id: NumericId,
    /// The 39-character `sb_` token.
    pub token: BatchToken,
    /// File name; may be empty.
    pub file_name: Text,
    /// Settlement date.
    pub date: Timestamp,
    /// Status name.
    pub status: BatchStatus,
    /// Record version.
    pub version: i64,
    /// The `job_` that created the batch.
    pub created_by_job_id: JobId,
    /// `partner_` identifier.
    pub partner_id: PartnerId,
    /// Creation time.
    pub created_at: Timestamp,
}

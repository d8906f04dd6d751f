use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::model_util::{empty_as_none, numeric_string};
use crate::open_enum::open_enum;
use crate::{BatchToken, NumericId, PartnerId, RailMerchantId, ReportExportToken};

open_enum! {
    /// The kind of a report export.
    ReportKind {
        /// A seed export.
        Seed = "REPORT_KIND_SEED",
        /// A whole settlement batch.
        Batch = "REPORT_KIND_BATCH",
        /// One merchant's part of a batch.
        Merchant = "REPORT_KIND_MERCHANT",
    }
}

open_enum! {
    /// The state of a report export.
    ReportStatus {
        /// Waiting to run.
        Pending = "REPORT_STATUS_PENDING",
        /// Running.
        Running = "REPORT_STATUS_RUNNING",
        /// Produced.
        Succeeded = "REPORT_STATUS_SUCCEEDED",
        /// Failed.
        Failed = "REPORT_STATUS_FAILED",
        /// Newly created: attempts 1, `started_at` set, `finished_at` null.
        Seeded = "REPORT_STATUS_SEEDED",
        /// Being retried.
        Retrying = "REPORT_STATUS_RETRYING",
    }
}

/// An asynchronous settlement report export.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReportExport {
    /// Numeric id.
    pub id: NumericId,
    /// `rpt_` token.
    pub token: ReportExportToken,
    /// The exported batch.
    pub settlement_batch_id: BatchToken,
    /// The rail merchant of a merchant export; `None` (an empty string on
    /// the wire) for a batch export.
    #[serde(with = "empty_as_none")]
    pub merchant_id: Option<RailMerchantId>,
    /// Kind of export.
    pub kind: ReportKind,
    /// State of the export.
    pub status: ReportStatus,
    /// Attempts made so far.
    pub attempts: i64,
    /// Empty when no error.
    pub error_message: String,
    /// Location of the produced file; empty until produced.
    pub storage_key: String,
    /// Rows in the produced file (a numeric string on the wire).
    #[serde(with = "numeric_string")]
    pub record_count: u64,
    /// Size of the produced file in bytes (a numeric string on the wire).
    #[serde(with = "numeric_string")]
    pub file_size: u64,
    /// When work started.
    pub started_at: Timestamp,
    /// When work finished; `None` until then.
    pub finished_at: Option<Timestamp>,
    /// Creation time.
    pub created_at: Timestamp,
    /// Last change.
    pub updated_at: Timestamp,
    /// `partner_` identifier.
    pub partner_id: PartnerId,
    /// Record version.
    pub version: i64,
}

/// The body of the report-export creation.
///
/// ```
/// use aggpay::{BatchToken, NewReportExport};
///
/// let batch = BatchToken::parse("sb_0f8fad5b-d9cb-469f-a165-70867728950e")?;
/// let body = NewReportExport::batch(batch);
/// assert_eq!(
///     serde_json::to_string(&body)?,
///     r#"{"settlement_batch_id":"sb_0f8fad5b-d9cb-469f-a165-70867728950e","kind":"REPORT_KIND_BATCH","merchant_id":""}"#
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NewReportExport {
    /// The batch to export.
    pub settlement_batch_id: BatchToken,
    /// `REPORT_KIND_BATCH` or `REPORT_KIND_MERCHANT`.
    pub kind: ReportKind,
    /// The rail merchant for a merchant export; empty for a batch export.
    #[serde(with = "empty_as_none", default)]
    pub merchant_id: Option<RailMerchantId>,
}

impl NewReportExport {
    /// An export of a whole batch.
    pub fn batch(settlement_batch_id: BatchToken) -> Self {
        Self {
            settlement_batch_id,
            kind: ReportKind::Batch,
            merchant_id: None,
        }
    }

    /// An export of one rail merchant's part of a batch.
    pub fn merchant(settlement_batch_id: BatchToken, merchant_id: RailMerchantId) -> Self {
        Self {
            settlement_batch_id,
            kind: ReportKind::Merchant,
            merchant_id: Some(merchant_id),
        }
    }
}

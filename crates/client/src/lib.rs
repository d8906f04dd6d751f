//! A blocking client for the aggregator settlement and payments API.
//!
//! MODULE_DOCS_PLACEHOLDER
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod amount;
mod count;
mod error;
mod id;
mod model;
mod model_util;
mod open_enum;
mod secret;

pub mod rules;

pub use amount::{Currency, Paisa};
pub use count::{CursorCount, IntCount, StringCount};
pub use error::{ApiError, Error, ErrorShape};
pub use id::{
    AccessKeyId, AccessKeyToken, AggregatorId, AggregatorMerchantId, AliasId, BankAccountId,
    BatchToken, DepositorId, ExternalMerchantRef, JobId, KeyId, LedgerAccountId, NumericId,
    PartnerId, PaymentId, QrCodeToken, RailMerchantId, ReportExportToken, TransactionToken,
    VaultToken, WebhookToken,
};
pub use model::*;
pub use secret::Secret;

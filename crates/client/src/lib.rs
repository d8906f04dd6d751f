//! A blocking client for the aggregator settlement and payments API.
//!
//! Every operation of the API, typed: identifiers are newtypes validated on
//! parse ([`PaymentId`], [`BatchToken`], …), amounts are integer [`Paisa`],
//! timestamps are [`jiff::Timestamp`], enumerations are open (an unknown
//! value is kept, never an error). No async runtime: [`Client`] is built on
//! `ureq`, cheap to clone, `Send` and `Sync`.
//!
//! # Quick start
//!
//! ```no_run
//! use aggpay::{BatchQuery, BatchStatus, Client, Direction, TransactionQuery};
//!
//! // AGGPAY_BASE_URL, AGGPAY_AGGREGATOR_ID and AGGPAY_SECRET_KEY.
//! let client = Client::from_env()?;
//!
//! // Walk every completed batch and every transaction in it, one page in
//! // memory at a time.
//! for batch in client.settlement_batches(BatchQuery::new().status(BatchStatus::Completed)) {
//!     let batch = batch?;
//!     let query = TransactionQuery::new().limit(100).direction(Direction::Asc);
//!     for txn in client.batch_transactions(batch.token.clone(), query) {
//!         let txn = txn?;
//!         println!("{} {} {} {}", batch.token, txn.token, txn.net_amount, txn.currency);
//!     }
//! }
//! # Ok::<(), aggpay::Error>(())
//! ```
//!
//! # Behaviour
//!
//! - **Timeouts** are on by default: 10 s to connect, 30 s per attempt
//!   ([`ClientBuilder::timeout_connect`], [`ClientBuilder::timeout`]).
//! - **Retries** ([`RetryPolicy`]) apply to GET requests only, after a
//!   transport error, a timeout, 429 (honouring `Retry-After`, in seconds or
//!   as an HTTP date) or 500/502/503/504, with exponential backoff and full
//!   jitter. Key rotation and report-export creation are never retried.
//! - **Errors** are one [`Error`] enum: [`Error::Api`] carries the status,
//!   code and message of either error form of the API; other variants tell
//!   transport failures, timeouts, undecodable bodies (with status and a
//!   snippet), oversized bodies, invalid input and pagination faults apart.
//! - **Secrets** are [`Secret`]s: `Debug` and `Display` print `<redacted>`,
//!   and the key is scrubbed from anything the server echoes into an error.
//! - **Pagination**: every list has an iterator ([`Pages`]) that fetches
//!   lazily and stops as the API's rules say, turning a repeated cursor or
//!   a record served twice into [`Error::Pagination`] instead of looping.
//!
//! The [`rules`] module holds the textual rules of the API (prefixes, the
//! 39-character batch token, paisa strings, timestamps), shared with the
//! conformance harness.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod amount;
mod client;
mod config;
mod count;
mod error;
mod id;
mod model;
mod model_util;
mod open_enum;
mod paginate;
mod query;
mod secret;
mod transport;

pub mod rules;

pub use amount::{Currency, Paisa};
pub use client::{Client, ENV_AGGREGATOR_ID, ENV_BASE_URL, ENV_SECRET_KEY};
pub use config::{ClientBuilder, DEFAULT_MAX_BODY, RetryPolicy};
pub use count::{CursorCount, IntCount, StringCount};
pub use error::{ApiError, Error, ErrorShape};
pub use id::{
    AccessKeyId, AccessKeyToken, AggregatorId, AggregatorMerchantId, AliasId, BankAccountId,
    BatchToken, DepositorId, ExternalMerchantRef, JobId, KeyId, LedgerAccountId, NumericId,
    PartnerId, PaymentId, QrCodeToken, RailMerchantId, ReportExportToken, TransactionToken,
    VaultToken, WebhookToken,
};
pub use model::*;
pub use paginate::{ListRecord, Pages};
pub use query::{
    AccountQuery, BatchQuery, Direction, KeyQuery, MerchantQuery, QrCodeQuery, RailMerchantQuery,
    RefundQuery, TransactionQuery, WebhookQuery,
};
pub use secret::Secret;

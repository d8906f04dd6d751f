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
//! // AGGPAY_BASE_URL, AGGPAY_AGGREGATOR_ID, AGGPAY_SECRET_KEY (and
//! // AGGPAY_CA_CERT for a staging server behind a private CA).
//! let client = Client::from_env()?;
//!
//! // Walk every completed batch and every transaction in it, one page in
//! // memory at a time.
//! let completed = BatchQuery::new().status(BatchStatus::Completed);
//! for batch in client.settlement_batches(&completed) {
//!     let batch = batch?;
//!     let query = TransactionQuery::new().direction(Direction::Asc);
//!     for txn in client.batch_transactions(&batch.token, &query) {
//!         let txn = txn?;
//!         println!("{} {} {} {}", batch.token, txn.token, txn.net_amount, txn.currency);
//!     }
//! }
//! # Ok::<(), aggpay::Error>(())
//! ```
//!
//! # The shape of the API
//!
//! The same few conventions hold for all 17 operations, so that code
//! written against one reads like code written against any other:
//!
//! - **Names.** `get_*` reads one record ([`Client::get_aggregator`]),
//!   `list_*` fetches one page of a list ([`Client::list_refunds`]), the
//!   plural noun walks the whole list ([`Client::refunds`]). The two writes
//!   say what they do ([`Client::rotate_access_key`],
//!   [`Client::create_report_export`]).
//! - **Arguments.** Identifiers are typed and borrowed (`&BatchToken`);
//!   every list and lookup takes a borrowed query value built with setters
//!   ([`BatchQuery`], [`AccountQuery`], [`TillCodeQuery`], …). A bad
//!   identifier cannot be built, and a query that cannot be sent faithfully
//!   is refused with [`ErrorKind::InvalidInput`] before any request.
//! - **Results.** A `get_*` returns the model; a `list_*` returns a
//!   [`Page`] (records, counts, next cursor); a walk returns [`Pages`], an
//!   iterator of `Result<T, Error>` that also hands out whole pages and a
//!   [`WalkPosition`] to resume from.
//! - **Models** are plain structs with public fields, marked
//!   `#[non_exhaustive]`: new fields of the API become new fields here
//!   without breaking your code. Enumerations keep unknown values
//!   (`Other(String)`).
//! - **Errors** are one [`Error`] enum; the transport library's errors are
//!   wrapped ([`TransportError`]) and reachable only as a `source()`.
//!
//! # Behaviour
//!
//! - **Timeouts** are on by default: 10 s to connect, 30 s per attempt
//!   ([`ClientBuilder::timeout_connect`], [`ClientBuilder::timeout`]).
//! - **Retries** ([`RetryPolicy`]) apply to GET requests only, after a
//!   transport error, a timeout, 429 (honouring `Retry-After`, in seconds or
//!   as an HTTP date) or 500/502/503/504, with exponential backoff and full
//!   jitter. Key rotation and report-export creation are never retried.
//! - **Redirects** are never followed: the API does not redirect, and
//!   following one would send the key to another address. A 3xx answer is
//!   [`ErrorKind::Redirect`].
//! - **TLS** trusts the bundled Mozilla roots, or the CA certificates you
//!   give ([`ClientBuilder::ca_certificate_file`], `AGGPAY_CA_CERT`).
//!   **Proxies** come from `ALL_PROXY`, `HTTPS_PROXY`, `HTTP_PROXY` and
//!   `NO_PROXY` unless set otherwise ([`ProxyConfig`]).
//! - **Secrets** are [`Secret`]s: `Debug` and `Display` print `<redacted>`.
//!   The key, in any form, and every `secret` field are redacted from
//!   anything an error quotes, and control characters are escaped.
//! - **Pagination**: every list has an iterator ([`Pages`]) that fetches
//!   lazily (cursor walks ask for 100 rows a page), stops as the API's rules
//!   say, turns a repeated cursor or a record served twice into
//!   [`ErrorKind::Pagination`] instead of looping, and can be checkpointed
//!   ([`Pages::position`]) and resumed ([`Pages::resume_from`]).
//!
//! # Testing code built on this crate
//!
//! The models are `#[non_exhaustive]`: outside this crate they cannot be
//! written as struct literals. With the `test-util` feature (in your
//! `[dev-dependencies]`), every model has `example()`, a plausible record
//! as the service sends it; set the fields a test cares about (they are
//! public). Against a whole server, run `aggpay-mock`, this workspace's
//! mock of the API.
//!
//! ```toml
//! [dev-dependencies]
//! # The workspace is not published on crates.io: a checkout by path (as
//! # here), or the repository by git (`git = "<repository URL>"`).
//! aggpay = { path = "../aggpay/crates/client", features = ["test-util"] }
//! ```
//!
//! ```
//! # #[cfg(feature = "test-util")] {
//! use aggpay::{BatchStatus, Paisa, SettlementBatch, Transaction};
//!
//! let mut batch = SettlementBatch::example();
//! batch.status = BatchStatus::Failed;
//! let mut row = Transaction::example();
//! row.net_amount = Paisa::new(1_000);
//! assert!(batch.status.is_final());
//! # }
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod amount;
mod client;
mod config;
mod error;
mod id;
mod model;
mod model_util;
mod open_enum;
mod page;
mod paginate;
mod query;
mod retry;
mod secret;
mod transport;
mod wire;

// The API's textual rules and safe text, shared with the workspace's tools
// through an internal crate (not part of this crate's API).
use aggpay_internal::{cli, rules, text};

pub use amount::{Currency, Paisa};
pub use client::{Client, ClientStats};
pub use config::{
    ClientBuilder, DEFAULT_MAX_BODY, ENV_AGGREGATOR_ID, ENV_BASE_URL, ENV_CA_CERT, ENV_SECRET_KEY,
    ProxyConfig,
};
pub use error::{ApiError, Error, ErrorKind, ErrorShape, TransportError};
pub use id::{
    AccessKeyId, AccessKeyToken, AggregatorId, AggregatorMerchantId, AliasId, BankAccountId,
    BatchToken, DepositorId, ExternalMerchantRef, JobId, KeyId, LedgerAccountId, NumericId,
    PartnerId, PaymentId, PayoutToken, QrCodeToken, RailMerchantId, RefundToken, ReportExportToken,
    TransactionToken, VaultToken, WebhookToken,
};
pub use model::*;
pub use page::Page;
pub use paginate::{ListRecord, Pages, WalkPosition};
pub use query::{
    AccountQuery, BatchQuery, Direction, KeyQuery, MerchantQuery, QrCodeQuery, RailMerchantQuery,
    RefundQuery, TillCodeQuery, TransactionQuery, WebhookQuery,
};
pub use retry::{RetryPolicy, RetryPolicyBuilder};
pub use secret::{Exposed, Secret};

/// The date and time library of the models' timestamps, re-exported so
/// that a user's code names the same `jiff` as this crate.
pub use jiff;

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
//!   (`Other(String)`). The free text of records that come in lists is a
//!   [`Text`], which reads as a `&str` and holds short values inline, and
//!   identifiers do the same: a page of a hundred transactions decodes
//!   without a heap allocation per field.
//! - **Errors** are one [`Error`] type, small to move (a box), whose
//!   [`Error::kind`] is the [`ErrorKind`] enum to match on. The transport
//!   library's errors are not part of the API: their words (secrets
//!   redacted) and I/O error kind are kept as a [`TransportError`],
//!   reachable as the `source()`.
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
//! # Embedding in a job that runs unattended
//!
//! What a nightly job can count on, and set:
//!
//! - **Patience.** The default policy (4 attempts, 200 ms base, 10 s cap,
//!   `Retry-After` up to 60 s) gives up within seconds of a server going
//!   away; a batch job takes [`RetryPolicy::batch_job`] (12 attempts,
//!   backoff from 1 s doubling to 60 s, about 5 minutes of waiting at
//!   most, `Retry-After` up to 5 minutes). [`RetryPolicyBuilder::deadline`]
//!   bounds one call whole, its timeouts included;
//!   [`RetryPolicyBuilder::max_total_wait`] bounds the waits of a client
//!   and its clones together. [`Client::stats`] counts requests, retries
//!   and bytes for a job's summary.
//! - **Is the setup right?** [`Client::check`] reads the aggregator record
//!   once and, when it fails, says which of the base URL, the key and the
//!   aggregator id to fix ([`ErrorKind::Config`]); a job calls it first. A
//!   404 says what it was about: the record the call named, or the
//!   aggregator.
//! - **Errors for an operator.** An [`Error`] says the operation, the
//!   identifier and the attempts made (`list_batch_transactions sb_…:
//!   could not reach the server (after 4 attempts)`), its cause only as its
//!   `source()`: print the chain (anyhow's `{:#}`, or a walk of
//!   `source()`, as the examples do) and each cause shows once. Branch on
//!   [`Error::is_not_found`], [`Error::is_unauthorized`],
//!   [`Error::is_network`], [`Error::is_retryable`] or [`Error::kind`].
//! - **Never retried:** the key rotation (a second rotation would replace
//!   the secret of the first, which you never saw: a rotation whose answer
//!   holds the new secret but does not decode in full still hands it over,
//!   [`Error::rotated_secret`]), the report-export creation (a second POST
//!   makes a second export), other 4xx, redirects, TLS failures, bodies
//!   that do not decode.
//! - **Checkpoint and resume.** Walk page by page ([`Pages::next_page`])
//!   and commit each page's rows with [`Pages::position`] in one
//!   transaction; after a crash a new client resumes from the saved
//!   [`WalkPosition`] ([`Pages::resume_from`]) with no row lost or
//!   repeated. A position taken at the end of an ascending walk also picks
//!   up rows added since. After a whole walk, [`Pages::reported_count`] is
//!   the server's count: compare it with the rows you kept. Walks end on
//!   the API's rules (a short or empty page, an empty cursor), never on the
//!   count alone, so a list whose size is a multiple of the page costs one
//!   more, empty, page.
//! - **TLS and proxies.** For a staging server behind a private CA, trust
//!   its PEM file (`AGGPAY_CA_CERT`, [`ClientBuilder::ca_certificate_file`];
//!   like `curl --cacert`, it replaces the bundled roots), or build with
//!   the `platform-verifier` feature to use the operating system's store.
//!   HTTPS goes through a proxy in a `CONNECT` tunnel: the proxy never sees
//!   the key. [`ProxyConfig::Direct`] ignores the environment.
//! - **Pacing and memory.** [`ClientBuilder::rate_limit`] spaces every
//!   request of a client and its clones, retries included; a walk holds
//!   one page (a million-row walk stays under 10 MB).
//!
//! # Examples
//!
//! In `crates/client/examples/`, each against a server named by the
//! environment, or an in-process mock when `AGGPAY_BASE_URL` is unset;
//! each prints the error's whole chain and exits 1 on failure:
//!
//! ```sh
//! cargo run -p aggpay --example batches_to_csv > transactions.csv  # every transaction of every completed batch
//! cargo run -p aggpay --example payment_charges -- pm_…           # a payment's fee and tax breakdown
//! cargo run -p aggpay --example rotate_key -- new-secret.txt ak_…  # rotate a key, store the new secret safely
//! cargo run -p aggpay --example checkpoint -- state.txt            # a checkpointed walk, crashed and resumed, verified
//! ```
//!
//! `rotate_key` checks the destination before it rotates anything (the
//! folder exists, the file does not unless `--force`, no symbolic link),
//! writes a 0600 temporary file beside it, fsyncs it and moves it into
//! place; if storing fails after the rotation it says the key **was
//! rotated**, and prints the new secret only with
//! `--print-secret-on-failure`. `aggpay-sync`, in this workspace, is all
//! of this put to work.
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
use aggpay_internal::{cli, syntax, text, url};

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
    PartnerId, PaymentId, PayoutToken, QrCodeToken, RailMerchantId, RecordId, RefundToken,
    ReportExportToken, TransactionToken, VaultToken, WebhookToken,
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

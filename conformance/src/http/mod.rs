//! The harness's own HTTP: raw exchanges judged as bytes and JSON, bounded
//! in time and size, paced, within the run's budget, shown only through a
//! redactor that knows every secret seen.
//!
//! A transient failure (429, 502, 503, 504, a reset, a timeout) is not
//! the server's answer to a rule's question: reads and probes are sent
//! again with backoff (`retry`), and an exchange whose every attempt was
//! transient is marked so, which makes the rules that see it
//! inconclusive, never failed. Writes are sent once, each on a fresh
//! connection; what to do when their answer is lost is the caller's
//! business (`model::writes`).

mod client;
mod exchange;
pub mod h1;
mod json;
mod no_answer;
mod request;
mod retry;

pub use client::{Http, HttpConfig, Watch};
pub use exchange::{Exchange, show};
pub use no_answer::NoAnswer;
pub use request::{Auth, KeyPlace, Request};

pub use h1::get_once as raw_get;

pub(crate) use aggpay_internal::url::encode_component as encode;
pub use json::Duplicate;

pub use retry::Transient;

/// Largest body read; a larger one fails the exchange (an endless body
/// cannot hang the harness).
pub const MAX_BODY: u64 = 16 * 1024 * 1024;
/// The harness's `User-Agent`.
pub const USER_AGENT: &str = concat!("aggpay-conformance/", env!("CARGO_PKG_VERSION"));
/// How many characters of a body evidence quotes.
pub const SNIPPET: usize = 300;
/// What a request not sent because the run budget ran out says.
pub const BUDGET_SPENT: &str = "not sent: the run budget (--max-duration) ran out";

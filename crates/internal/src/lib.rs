//! What the aggpay workspace shares below its crates: the textual rules of
//! the API, safe text, one hash, the retry schedule, command-line values
//! and HTTP helpers.
//!
//! An implementation detail of `aggpay`, `aggpay-mock`,
//! `aggpay-conformance` and `aggpay-sync`, kept in one place so that they
//! never grow diverging copies. It makes no stability promise and is not
//! meant for use outside the workspace: the client's API is `aggpay`'s.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod backoff;
pub mod cli;
pub mod coding;
pub mod http;
pub mod json;
pub mod mix;
#[cfg(feature = "tools")]
pub mod preflight;
pub mod resolve;
#[cfg(feature = "tools")]
pub mod setup;
pub mod syntax;
pub mod text;
pub mod url;

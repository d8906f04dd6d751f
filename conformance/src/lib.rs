//! The conformance harness of the aggregator settlement API: property-based
//! rules, judged on the wire JSON, against any server or the built-in mock.
//!
//! The binary is a thin shell over [`run`]; tests drive the same function.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod baseline;
mod cli;
mod contract;
mod coverage;
mod ctx;
mod explore;
mod http;
mod model;
mod openapi;
mod pool;
mod report;
mod rules;
mod runner;
mod sampling;

pub use cli::{Args, Command, Format, mock_arguments};
pub use openapi::document as openapi_document;
pub use rules::{Cases, Kind, Level, Rule, Run, catalogue};
pub use runner::{EXIT_FAILED, EXIT_OK, EXIT_UNUSABLE, report_refused, run};

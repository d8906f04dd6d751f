//! A faithful mock server of the aggregator settlement and payments API.
//!
//! Every operation of API.md, with the wire choices of WIRE.md, over real
//! HTTP on loopback. The dataset is generated from a seed, row by row, so a
//! batch of a million transactions costs no memory and any page at any
//! cursor costs O(log n).
//!
//! ```no_run
//! use aggpay_mock::{MockConfig, MockServer};
//!
//! let server = MockServer::start(MockConfig::new().seed(7))?;
//! let info = server.info();
//! println!("GET {}/v1/aggregators/{}", info.base_url, info.aggregator_id);
//! # Ok::<(), aggpay_mock::Error>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod chaos;
mod config;
mod corrupt;
mod data;
mod fault;
mod handlers;
mod legal;
mod query;
mod reply;
mod router;
mod server;
mod state;
mod synth;
mod wire;

pub use chaos::{Chaos, ChaosError, Latency};
pub use config::{
    DEFAULT_HOST, DEFAULT_SEED, Limits, MAX_ROWS, MockConfig, Sizes, TlsIdentity, default_workers,
};
pub use fault::{Fault, FaultLayer, UnknownFault};
pub use legal::{Legal, UnknownLegal};
pub use router::Served;
pub use server::{Error, MockInfo, MockServer, MockWrites};

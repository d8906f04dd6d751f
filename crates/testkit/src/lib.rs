//! Test fixtures shared by the aggpay crates' tests, so that each exists
//! once: a certificate authority made for the test, blocking TLS servers
//! on loopback, an HTTP `CONNECT` proxy that records what it carries, a
//! hand-written HTTP server for hostile answers, temporary folders, the
//! test process stopped and continued on purpose, and a real PostgreSQL
//! cluster per test binary, and the CPU time of processes and the
//! figures' record (`bench`) for the benches.
//! Never a dependency of anything but tests.
//!
//! Every thread here ends on its own: servers stop when dropped, and
//! every read and wait is bounded.
#![forbid(unsafe_code)]

pub mod bench;
mod ca;
mod cpu;
mod pg;
mod proxy;
mod raw;
mod read;
mod signals;
mod temp;
mod tls;

pub use ca::{Identity, TestCa};
pub use cpu::{cpu_seconds, threads_cpu_seconds, tree_cpu_seconds};
pub use pg::{PgCluster, SKIP_POSTGRES};
pub use proxy::ConnectProxy;
pub use raw::{Act, RawRequest, RawServer, Scripted, json, respond, silence};
pub use read::{End, read_until_closed};
pub use signals::Interruptions;
pub use temp::TempDir;
pub use tls::{TlsServer, server_config};

//! The conformance harness, end to end, against the mock and against
//! servers written by hand.

mod baseline;
mod docs;
mod families;
mod hostile;
mod legal;
mod mutation;
mod names;
mod openapi;
mod reports;
mod runs;
mod setup;
mod support;
mod tls;
mod transient;

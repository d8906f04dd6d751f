//! The client against `aggpay-mock` in-process, against small scripted
//! servers on loopback where the mock cannot misbehave, through TLS and a
//! proxy, and its examples run as a user would.

mod examples;
mod operations;
mod proxy;
mod redirects;
mod responses;
mod retries;
mod secrets;
mod setup;
mod support;
mod tls;
mod walks;

//! aggpay-sync end to end: the binary against the mock, killed, throttled,
//! lied to, and against live data.

mod basics;
mod chaos;
mod crash;
mod integrity;
mod isolation;
mod live;
mod pg;
mod setup;
mod support;

//! aggpay-sync end to end: the binary against the mock, killed, throttled,
//! lied to, and against live data.

mod basics;
mod crash;
mod integrity;
mod live;
mod support;

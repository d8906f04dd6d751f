//! The mock over real HTTP on loopback: every operation, the attacks a
//! shared server must survive, chaos and live data, TLS, the command
//! line, and the answers' bytes read raw. One test binary, one module per
//! concern.

mod attacks;
mod chaos;
mod cli;
mod cursor;
mod errors;
mod journal;
mod legal;
mod live;
mod offset;
mod operations;
mod robustness;
mod state_faults;
mod support;
mod tls;
mod wire_faults;
mod writes;

//! The aggregator record and its ledger account.

use crate::reply::{self, Reply};
use crate::router::App;

impl App {
    pub(crate) fn aggregator(&self) -> Reply {
        let keys = if self.faults.has(crate::fault::Fault::AggregatorKeysStale) {
            self.data.initial_keys()
        } else {
            self.state.keys()
        };
        reply::ok(&self.data.aggregator(keys))
    }

    pub(crate) fn ledger(&self) -> Reply {
        reply::ok(&self.data.ledger_account())
    }
}

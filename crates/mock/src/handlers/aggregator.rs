//! The aggregator record and its ledger account.

use crate::fault::Fault;
use crate::reply::{self, Reply};
use crate::router::App;

impl App {
    pub(crate) fn aggregator(&self) -> Reply {
        let keys = if self.faults.has(Fault::AggregatorKeysStale) {
            self.data.initial_keys()
        } else {
            self.state.keys()
        };
        let mut aggregator = self.data.aggregator(keys);
        // Saved by a ledger read under `reads-write`.
        if self.faults.has(Fault::ReadsWrite)
            && let Some(stamp) = self.state.aggregator_stamp()
        {
            aggregator.updated_at = stamp;
        }
        reply::ok(&aggregator)
    }

    pub(crate) fn ledger(&self) -> Reply {
        // A read that writes: the ledger read saves the aggregator.
        if self.faults.has(Fault::ReadsWrite) {
            let seeded = self.data.aggregator(Vec::new()).updated_at;
            self.state.stamp_aggregator(seeded);
        }
        reply::ok(&self.data.ledger_account())
    }
}

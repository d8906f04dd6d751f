//! The aggregator record and its ledger account.

use crate::reply::{self, Reply};
use crate::router::App;

impl App {
    pub(crate) fn aggregator(&self) -> Reply {
        reply::ok(&self.data.aggregator(self.state.keys()))
    }

    pub(crate) fn ledger(&self) -> Reply {
        reply::ok(&self.data.ledger_account())
    }
}

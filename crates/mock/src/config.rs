//! Configuration of the mock server.

use crate::fault::{Fault, Faults};

/// How many records of each kind the mock serves. Rows are generated on
/// demand, so large sizes cost no memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sizes {
    pub(crate) batches: u64,
    pub(crate) max_batch_transactions: u64,
    pub(crate) large_batch_transactions: u64,
    pub(crate) merchants: u64,
    pub(crate) qr_codes: u64,
    pub(crate) refunds: u64,
    pub(crate) webhooks: u64,
}

impl Default for Sizes {
    fn default() -> Self {
        Self {
            batches: 240,
            max_batch_transactions: 150,
            large_batch_transactions: 0,
            merchants: 24,
            qr_codes: 60,
            refunds: 45,
            webhooks: 9,
        }
    }
}

/// Configuration of a [`MockServer`](crate::MockServer), built with setters.
///
/// ```
/// use aggpay_mock::MockConfig;
///
/// let config = MockConfig::new().seed(42).batches(10).large_batch_transactions(1_000_000);
/// assert_eq!(config.get_seed(), 42);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MockConfig {
    pub(crate) seed: u64,
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) workers: usize,
    pub(crate) path_prefix: String,
    pub(crate) sizes: Sizes,
    pub(crate) faults: Faults,
}

impl Default for MockConfig {
    fn default() -> Self {
        Self {
            seed: 1,
            host: "127.0.0.1".to_owned(),
            port: 0,
            workers: 4,
            path_prefix: String::new(),
            sizes: Sizes::default(),
            faults: Faults::default(),
        }
    }
}

/// The most rows one list may have: keeps every numeric id inside the id
/// ranges the generator reserves for it.
pub const MAX_ROWS: u64 = 1_000_000_000;

impl MockConfig {
    /// The defaults: seed 1, 127.0.0.1, an ephemeral port, 4 workers.
    pub fn new() -> Self {
        Self::default()
    }

    /// The dataset seed: the same seed serves the same data.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The address to listen on (default `127.0.0.1`).
    pub fn host(mut self, host: impl Into<String>) -> Self {
        self.host = host.into();
        self
    }

    /// The port (0, the default, picks a free one).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Threads answering requests (at least 1).
    pub fn workers(mut self, workers: usize) -> Self {
        self.workers = workers.max(1);
        self
    }

    /// A path prefix the service lives under, such as `/api` (default none):
    /// API.md's base URL "includes the service's own path prefix".
    pub fn path_prefix(mut self, prefix: impl Into<String>) -> Self {
        let prefix = prefix.into();
        let trimmed = prefix.trim_matches('/');
        self.path_prefix = if trimmed.is_empty() {
            String::new()
        } else {
            format!("/{trimmed}")
        };
        self
    }

    /// Number of settlement batches (at least 1).
    pub fn batches(mut self, n: u64) -> Self {
        self.sizes.batches = n.clamp(1, MAX_ROWS);
        self
    }

    /// Upper bound of transactions in an ordinary batch.
    pub fn max_batch_transactions(mut self, n: u64) -> Self {
        self.sizes.max_batch_transactions = n.min(MAX_ROWS);
        self
    }

    /// Transactions in the oldest batch, which is always completed; 0 (the
    /// default) gives it an ordinary size.
    pub fn large_batch_transactions(mut self, n: u64) -> Self {
        self.sizes.large_batch_transactions = n.min(MAX_ROWS);
        self
    }

    /// Number of aggregator merchants (at least 1); rail merchants, aliases
    /// and accounts follow.
    pub fn merchants(mut self, n: u64) -> Self {
        self.sizes.merchants = n.clamp(1, 100_000);
        self
    }

    /// Number of QR codes.
    pub fn qr_codes(mut self, n: u64) -> Self {
        self.sizes.qr_codes = n.min(1_000_000);
        self
    }

    /// Number of refunds.
    pub fn refunds(mut self, n: u64) -> Self {
        self.sizes.refunds = n.min(1_000_000);
        self
    }

    /// Number of webhook endpoints.
    pub fn webhooks(mut self, n: u64) -> Self {
        self.sizes.webhooks = n.min(100_000);
        self
    }

    /// Turns a fault on (repeatable): the server then breaks the contract
    /// in that one way. For proving the conformance harness.
    pub fn fault(mut self, fault: Fault) -> Self {
        self.faults.insert(fault);
        self
    }

    /// The seed in use.
    pub fn get_seed(&self) -> u64 {
        self.seed
    }
}

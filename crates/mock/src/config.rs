//! Configuration of the mock server. Every default lives here once; the
//! command line derives its defaults from these constants.

use std::time::Duration;

use crate::chaos::{Chaos, Latency};
use crate::fault::{Fault, Faults};
use crate::legal::{Choices, Legal};

/// How many records of each kind the mock serves. Rows are generated on
/// demand, so large sizes cost no memory. Set them with the
/// [`MockConfig`] setters, which check their ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Sizes {
    /// Settlement batches.
    pub batches: u64,
    /// Most transactions in an ordinary batch.
    pub max_batch_transactions: u64,
    /// Transactions in the oldest completed batch (0: an ordinary size).
    pub large_batch_transactions: u64,
    /// Aggregator merchants.
    pub merchants: u64,
    /// QR codes.
    pub qr_codes: u64,
    /// Refunds.
    pub refunds: u64,
    /// Webhook endpoints.
    pub webhooks: u64,
}

impl Sizes {
    /// The default dataset.
    pub const DEFAULT: Sizes = Sizes {
        batches: 240,
        max_batch_transactions: 150,
        large_batch_transactions: 0,
        merchants: 24,
        qr_codes: 60,
        refunds: 45,
        webhooks: 9,
    };
}

/// The limits and timeouts that keep one client from holding the server:
/// every one of them is on everything a client controls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Connections open at once. At the cap, idle connections (between
    /// requests, or still sending a request head) are closed, oldest
    /// first, to make room; a new connection that finds no room within
    /// half a second is answered 503 with `Retry-After` and closed. On
    /// Linux the cap is also kept below the process's file limit.
    pub max_connections: usize,
    /// Bytes of one request head (request line and headers); more is
    /// answered 431 by the HTTP layer and the connection closed.
    pub max_header_bytes: usize,
    /// Header fields in one request head.
    pub max_headers: usize,
    /// Bytes of one request body; a larger `Content-Length` is refused
    /// with 400 before anything is read, a larger chunked body once the
    /// limit is passed.
    pub max_body_bytes: u64,
    /// Time from the first byte of a request head to its last.
    pub header_read_timeout: Duration,
    /// Time to receive a whole request body.
    pub body_read_timeout: Duration,
    /// Time a kept-alive connection may wait for its next request.
    pub idle_timeout: Duration,
    /// Time to write one response to a client that reads too slowly.
    pub response_timeout: Duration,
}

impl Limits {
    /// The defaults.
    pub const DEFAULT: Limits = Limits {
        max_connections: 1_024,
        max_header_bytes: 64 * 1024,
        max_headers: 100,
        max_body_bytes: 1024 * 1024,
        header_read_timeout: Duration::from_secs(10),
        body_read_timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(30),
        response_timeout: Duration::from_secs(60),
    };
}

impl Default for Limits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A server identity for HTTPS: a certificate chain and its private key,
/// both in PEM.
#[derive(Clone, PartialEq, Eq)]
pub struct TlsIdentity {
    pub(crate) cert_pem: Vec<u8>,
    pub(crate) key_pem: Vec<u8>,
}

impl std::fmt::Debug for TlsIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsIdentity")
            .field("cert_pem", &format_args!("{} bytes", self.cert_pem.len()))
            .field("key_pem", &"<redacted>")
            .finish()
    }
}

impl TlsIdentity {
    /// An identity from PEM text: the certificate chain, leaf first, and
    /// its private key.
    pub fn from_pem(cert_pem: impl Into<Vec<u8>>, key_pem: impl Into<Vec<u8>>) -> Self {
        Self {
            cert_pem: cert_pem.into(),
            key_pem: key_pem.into(),
        }
    }
}

/// The default seed.
pub const DEFAULT_SEED: u64 = 1;
/// The default address.
pub const DEFAULT_HOST: &str = "127.0.0.1";

/// Configuration of a [`MockServer`](crate::MockServer), built with setters.
///
/// ```
/// use aggpay_mock::MockConfig;
///
/// let config = MockConfig::new().seed(42).batches(10).large_batch_transactions(1_000_000);
/// # let _ = config;
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct MockConfig {
    pub(crate) seed: u64,
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) workers: usize,
    pub(crate) path_prefix: String,
    pub(crate) sizes: Sizes,
    pub(crate) faults: Faults,
    pub(crate) legal: Choices,
    pub(crate) limits: Limits,
    pub(crate) chaos: Chaos,
    pub(crate) latency: Latency,
    pub(crate) live: bool,
    pub(crate) live_every: Option<Duration>,
    pub(crate) tls: Option<TlsIdentity>,
    pub(crate) journal: Option<usize>,
}

impl Default for MockConfig {
    fn default() -> Self {
        Self {
            seed: DEFAULT_SEED,
            host: DEFAULT_HOST.to_owned(),
            port: 0,
            workers: default_workers(),
            path_prefix: String::new(),
            sizes: Sizes::DEFAULT,
            faults: Faults::default(),
            legal: Choices::default(),
            limits: Limits::DEFAULT,
            chaos: Chaos::default(),
            latency: Latency::default(),
            live: false,
            live_every: None,
            tls: None,
            journal: None,
        }
    }
}

/// Threads serving requests by default: one per core, at least two.
pub fn default_workers() -> usize {
    std::thread::available_parallelism()
        .map(usize::from)
        .unwrap_or(2)
        .max(2)
}

/// The most rows one list may have: keeps every numeric id inside the id
/// ranges the generator reserves for it.
pub const MAX_ROWS: u64 = 1_000_000_000;

impl MockConfig {
    /// The defaults: seed 1, 127.0.0.1, an ephemeral port, one worker
    /// thread per core.
    pub fn new() -> Self {
        Self::default()
    }

    /// The dataset seed: the same seed serves the same data (and, with
    /// chaos, the same decisions for the same sequence of requests).
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

    /// Threads serving requests (at least 1).
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

    /// Takes a legal choice (repeatable): the server then answers with
    /// another reading of API.md than its own, still honouring it.
    /// See [`Legal`].
    pub fn legal(mut self, legal: Legal) -> Self {
        self.legal.insert(legal);
        self
    }

    /// Limits and timeouts (default [`Limits::DEFAULT`]).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Transport chaos: a share of requests answered with errors, resets,
    /// truncated or slow bodies (default none). See [`Chaos`].
    pub fn chaos(mut self, chaos: Chaos) -> Self {
        self.chaos = chaos;
        self
    }

    /// Latency added before every answer (default none).
    pub fn latency(mut self, latency: Latency) -> Self {
        self.latency = latency;
        self
    }

    /// Live data: batches arrive, complete and fill while the server runs,
    /// advanced by [`MockServer::advance`](crate::MockServer::advance) or
    /// `POST {base}/_mock/advance` (see docs/mock.md, "Live data").
    pub fn live(mut self, live: bool) -> Self {
        self.live = live;
        self
    }

    /// With live data, advance it on a timer as well (one step each
    /// `every`).
    pub fn live_every(mut self, every: Duration) -> Self {
        self.live = true;
        self.live_every = Some(every.max(Duration::from_millis(10)));
        self
    }

    /// Serves HTTPS with this identity instead of HTTP.
    pub fn tls(mut self, identity: TlsIdentity) -> Self {
        self.tls = Some(identity);
        self
    }

    /// Keeps the last `capacity` answers, each with its request's method
    /// and target, for [`MockServer::journal`](crate::MockServer::journal):
    /// what a client under test was told. Off by default.
    pub fn journal(mut self, capacity: usize) -> Self {
        self.journal = Some(capacity.max(1));
        self
    }
}

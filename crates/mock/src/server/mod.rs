//! The HTTP side: a hyper server on a tokio runtime the mock owns.
//!
//! - `listen`: the accept loop, the connection cap and its shedding.
//! - `conn`: one connection: framing checks, timeouts, TLS.
//! - `service`: one request: latency, chaos, body limits, the answer.
//! - `body`: response bodies, whole or broken on purpose.
//! - `byte_layer`: the byte layer, for the bytes of an answer hyper will not
//!   write itself (faults and legal choices of the wire).

mod body;
mod byte_layer;
mod conn;
mod listen;
mod scanner;
mod service;
mod state;
mod tls;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use aggpay::{AccessKeyId, AggregatorId, AliasId, BatchToken, PaymentId, RailMerchantId, Secret};
use serde::Serialize;
use tokio::sync::watch;

use crate::config::MockConfig;
use crate::data::Dataset;
use crate::router::App;
use crate::state::State;

/// Errors of the mock server. `Display` says what failed; the operating
/// system's or the TLS library's own error is the `source()` (its type is
/// not part of the API: a reporter walks the chain, as the CLI does).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The listening socket could not be opened, or the server's runtime
    /// could not start.
    #[error("listen on {addr}")]
    Listen {
        /// The address asked for.
        addr: String,
        /// Why it failed.
        #[source]
        source: Cause,
    },
    /// The TLS identity could not be used.
    #[error("set up tls: {what}")]
    Tls {
        /// What could not be used.
        what: &'static str,
        /// Why.
        #[source]
        source: Cause,
    },
    /// The configuration cannot be served.
    #[error("configure the mock: {0}")]
    Config(String),
}

/// The cause under an [`Error`], kept whole as its source.
#[derive(Debug)]
pub struct Cause(Box<dyn std::error::Error + Send + Sync>);

impl Cause {
    pub(crate) fn new(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Cause(e.into())
    }
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Cause {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// The most batches live data moves (its status filter lists matches).
const LIVE_MAX_BATCHES: u64 = 100_000;

/// A running mock server, shut down when dropped.
///
/// ```no_run
/// use aggpay_mock::{MockConfig, MockServer};
///
/// let server = MockServer::start(MockConfig::new())?;
/// println!("{} {}", server.url(), server.aggregator_id());
/// # Ok::<(), aggpay_mock::Error>(())
/// ```
pub struct MockServer {
    app: Arc<App>,
    addr: SocketAddr,
    url: String,
    shutdown: watch::Sender<bool>,
    runtime: Option<tokio::runtime::Runtime>,
}

/// The writes a mock carried out ([`MockServer::writes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct MockWrites {
    /// Key rotations.
    pub rotations: u64,
    /// Report exports created.
    pub exports: u64,
}

/// Sample inputs a user needs to try every operation, as `--info-file`
/// writes them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct MockInfo {
    /// The base URL, path prefix included.
    pub base_url: String,
    /// The aggregator every path names.
    pub aggregator_id: AggregatorId,
    /// An active key's secret, in clear: this is what a user needs to paste.
    pub secret_key: String,
    /// A payment with charges.
    pub payment_id: Option<PaymentId>,
    /// An alias find-alias resolves.
    pub alias_id: AliasId,
    /// A rail merchant.
    pub rail_merchant_id: RailMerchantId,
    /// An active key other than `secret_key`'s, safe to rotate.
    pub access_key_id: Option<AccessKeyId>,
    /// Another active key, other than `secret_key`'s and than
    /// `access_key_id`, also safe to rotate: for two rotations of
    /// different keys at once.
    pub second_access_key_id: Option<AccessKeyId>,
    /// An IBAN account-info resolves.
    pub iban: String,
    /// A mobile number account-info resolves with `alias_type=MOBILE`.
    pub mobile: String,
    /// A till code title-fetch resolves.
    pub till_code: String,
    /// The batch holding `large_batch_transactions` rows, when some were
    /// asked for: the one a test or a benchmark of long walks wants.
    pub large_batch: Option<BatchToken>,
}

impl std::fmt::Debug for MockServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockServer")
            .field("url", &self.url)
            .field("aggregator_id", &self.app.data.aggregator_id)
            .finish_non_exhaustive()
    }
}

impl MockServer {
    /// Starts the server on the configured host and port, on a runtime of
    /// its own (the caller needs none).
    ///
    /// # Errors
    ///
    /// [`Error::Listen`] when the address cannot be bound, [`Error::Tls`]
    /// for an unusable identity, [`Error::Config`] for live data over more
    /// than 100,000 batches.
    pub fn start(config: MockConfig) -> Result<Self, Error> {
        if config.live && config.sizes.batches > LIVE_MAX_BATCHES {
            return Err(Error::Config(format!(
                "live data moves at most {LIVE_MAX_BATCHES} batches"
            )));
        }
        let tls = config.tls.as_ref().map(tls::acceptor).transpose()?;
        let addr = format!("{}:{}", config.host, config.port);
        let listen_error = |e: std::io::Error| Error::Listen {
            addr: addr.clone(),
            source: Cause::new(e),
        };
        let listener = listen::bind(&addr).map_err(listen_error)?;
        let bound = listener.local_addr().map_err(listen_error)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(config.workers)
            .thread_name("aggpay-mock")
            .enable_all()
            .build()
            .map_err(listen_error)?;
        let listener = {
            let _entered = runtime.enter();
            tokio::net::TcpListener::from_std(listener).map_err(listen_error)?
        };
        let data = Dataset::new(config.seed, config.sizes.clone());
        let state = State::new(&data);
        let app = Arc::new(App::new(data, state, &config));
        let host = if bound.is_ipv6() {
            format!("[{}]", bound.ip())
        } else {
            bound.ip().to_string()
        };
        let scheme = if tls.is_some() { "https" } else { "http" };
        let url = format!("{scheme}://{host}:{}{}", bound.port(), app.prefix);
        let (shutdown, stopped) = watch::channel(false);
        let limits = listen::effective_limits(config.limits);
        runtime.spawn(listen::serve(
            listener,
            app.clone(),
            limits,
            tls,
            stopped.clone(),
        ));
        if let Some(every) = config.live_every {
            runtime.spawn(tick_every(app.clone(), every, stopped));
        }
        Ok(Self {
            app,
            addr: bound,
            url,
            shutdown,
            runtime: Some(runtime),
        })
    }

    /// The base URL, path prefix included, without a trailing slash.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The bound socket address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The aggregator every path must name.
    pub fn aggregator_id(&self) -> &AggregatorId {
        &self.app.data.aggregator_id
    }

    /// The current secret of the first access key (active, never rotated by
    /// the harness).
    pub fn secret_key(&self) -> Secret {
        self.app
            .state
            .key(0)
            .map(|k| k.secret)
            .unwrap_or_else(|| Secret::new(""))
    }

    /// Advances live data by `steps` (see [`MockConfig::live`]) and returns
    /// the new step; without live data nothing moves and 0 is returned.
    pub fn advance(&self, steps: u64) -> u64 {
        self.app.advance(steps)
    }

    /// The step live data is at (0 without live data).
    pub fn live_step(&self) -> u64 {
        self.app.state.tick()
    }

    /// The writes carried out so far: key rotations and report exports
    /// created (a tool that must never repeat a write can be checked).
    pub fn writes(&self) -> MockWrites {
        MockWrites {
            rotations: self.app.state.rotations(),
            exports: self.app.state.exports(),
        }
    }

    /// The answers kept by [`MockConfig::journal`], oldest first (empty
    /// without it).
    pub fn journal(&self) -> Vec<crate::Served> {
        self.app.journal()
    }

    /// Sample inputs for every operation.
    pub fn info(&self) -> MockInfo {
        let d = &self.app.data;
        // The active keys other than the first (whose secret is
        // `secret_key`), in the dataset's order.
        let mut rotatable = self
            .app
            .state
            .keys()
            .into_iter()
            .skip(1)
            .filter(|k| k.is_active)
            .filter_map(|k| k.access_key_id().cloned());
        let access_key_id = rotatable.next();
        let second_access_key_id = rotatable.next();
        let view = self.app.view();
        MockInfo {
            base_url: self.url.clone(),
            aggregator_id: d.aggregator_id.clone(),
            secret_key: self.secret_key().expose().to_owned(),
            payment_id: d
                .some_payment(0)
                .filter(|(b, j)| view.transaction_count(*b) > *j)
                .map(|(b, j)| d.payment_id(b, j)),
            alias_id: d.alias_token(0),
            rail_merchant_id: d.rail_merchant_token(0),
            access_key_id,
            second_access_key_id,
            iban: d.merchant_iban(0),
            mobile: d.rail_mobile(0),
            till_code: d.till_code(0),
            large_batch: d.large_batch().map(|i| d.batch_token(i)),
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
        if let Some(runtime) = self.runtime.take() {
            // Open connections are cut: a test's server goes away at once.
            runtime.shutdown_timeout(Duration::from_millis(500));
        }
    }
}

/// Advances live data on a timer until the server stops.
async fn tick_every(app: Arc<App>, every: Duration, mut stopped: watch::Receiver<bool>) {
    let mut interval = tokio::time::interval(every);
    interval.tick().await;
    loop {
        tokio::select! {
            _ = interval.tick() => {
                app.advance(1);
            }
            _ = stopped.changed() => return,
        }
    }
}

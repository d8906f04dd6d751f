//! The HTTP side: a tiny_http listener and a pool of worker threads.

use std::io::Read;
use std::net::SocketAddr;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use aggpay::rules::KEY_HEADER;
use aggpay::{AccessKeyId, AggregatorId, AliasId, PaymentId, RailMerchantId, Secret};
use serde::Serialize;

use crate::config::MockConfig;
use crate::data::Dataset;
use crate::fault::{Fault, Faults};
use crate::reply::{self, Reply};
use crate::router::{App, Incoming};
use crate::state::State;

/// Largest request body read; a larger one gets a 400.
const MAX_BODY: u64 = 1024 * 1024;
/// How often an idle worker looks at the shutdown flag.
const POLL: Duration = Duration::from_millis(50);

/// Errors of the mock server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The listening socket could not be opened.
    #[error("listen on {addr}: {reason}")]
    Listen {
        /// The address asked for.
        addr: String,
        /// Why it failed.
        reason: String,
    },
}

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
    stop: Arc<AtomicBool>,
    server: Arc<tiny_http::Server>,
    workers: Vec<JoinHandle<()>>,
}

/// Sample inputs a user needs to try every operation, as `--info-file`
/// writes them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
    /// An IBAN account-info resolves.
    pub iban: String,
    /// A mobile number account-info resolves with `alias_type=MOBILE`.
    pub mobile: String,
    /// A till code title-fetch resolves.
    pub till_code: String,
}

impl std::fmt::Debug for MockServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockServer")
            .field("url", &self.url)
            .field("aggregator_id", &self.app.data.aggregator_id)
            .field("workers", &self.workers.len())
            .finish_non_exhaustive()
    }
}

impl MockServer {
    /// Starts the server on the configured host and port.
    ///
    /// # Errors
    ///
    /// [`Error::Listen`] when the address cannot be bound.
    pub fn start(config: MockConfig) -> Result<Self, Error> {
        let addr = format!("{}:{}", config.host, config.port);
        let listen_error = |reason: String| Error::Listen {
            addr: addr.clone(),
            reason,
        };
        let listener = listener(&addr).map_err(|e| listen_error(e.to_string()))?;
        let server = tiny_http::Server::from_listener(listener, None)
            .map_err(|e| listen_error(e.to_string()))?;
        let bound = server.server_addr().to_ip().ok_or_else(|| Error::Listen {
            addr: addr.clone(),
            reason: "not an IP socket".into(),
        })?;
        let data = Dataset::new(config.seed, config.sizes.clone());
        let state = State::new(&data);
        let prefix = config.path_prefix.trim_end_matches('/').to_owned();
        let faults = config.faults.clone();
        let app = Arc::new(App {
            data,
            state,
            prefix,
            faults,
        });
        let server = Arc::new(server);
        let stop = Arc::new(AtomicBool::new(false));
        let workers = (0..config.workers)
            .map(|_| {
                let (app, server, stop) = (app.clone(), server.clone(), stop.clone());
                std::thread::spawn(move || serve(&app, &server, &stop))
            })
            .collect();
        let host = if bound.is_ipv6() {
            format!("[{}]", bound.ip())
        } else {
            bound.ip().to_string()
        };
        let url = format!("http://{host}:{}{}", bound.port(), app.prefix);
        Ok(Self {
            app,
            addr: bound,
            url,
            stop,
            server,
            workers,
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

    /// Sample inputs for every operation.
    pub fn info(&self) -> MockInfo {
        let d = &self.app.data;
        let rotatable = self
            .app
            .state
            .keys()
            .into_iter()
            .skip(1)
            .find(|k| k.is_active)
            .and_then(|k| k.access_key_id().cloned());
        MockInfo {
            base_url: self.url.clone(),
            aggregator_id: d.aggregator_id.clone(),
            secret_key: self.secret_key().expose().to_owned(),
            payment_id: d.some_payment(0).map(|(b, j)| d.payment_id(b, j)),
            alias_id: d.alias_token(0),
            rail_merchant_id: d.rail_merchant_token(0),
            access_key_id: rotatable,
            iban: d.merchant_iban(0),
            mobile: d.rail_mobile(0),
            till_code: d.till_code(0),
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for _ in &self.workers {
            self.server.unblock();
        }
        for worker in self.workers.drain(..) {
            // A worker that panicked has nothing left to clean up.
            let _ = worker.join();
        }
    }
}

/// A listening socket with TCP_NODELAY, which accepted connections inherit.
/// tiny_http writes a response's head and body in two writes; with Nagle's
/// algorithm on, the body then waits for the client's delayed ACK (about
/// 40 ms on Linux) on every response larger than its 1 KiB buffer.
fn listener(addr: &str) -> std::io::Result<std::net::TcpListener> {
    use std::net::ToSocketAddrs;
    let sock_addr = addr
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "no address"))?;
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(sock_addr),
        socket2::Type::STREAM,
        None,
    )?;
    socket.set_reuse_address(true)?;
    socket.set_tcp_nodelay(true)?;
    socket.bind(&sock_addr.into())?;
    socket.listen(1024)?;
    Ok(socket.into())
}

fn serve(app: &App, server: &tiny_http::Server, stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        // An accept error concerns one connection; the listener goes on.
        if let Ok(Some(request)) = server.recv_timeout(POLL) {
            answer(app, request);
        }
    }
}

fn answer(app: &App, mut request: tiny_http::Request) {
    let mut body = Vec::new();
    let too_large = request
        .as_reader()
        .take(MAX_BODY + 1)
        .read_to_end(&mut body)
        .map(|n| n as u64 > MAX_BODY);
    let reply = match too_large {
        Ok(false) => {
            let key = request
                .headers()
                .iter()
                .find(|h| h.field.equiv(KEY_HEADER))
                .map(|h| h.value.as_str().to_owned());
            let incoming = Incoming {
                method: request.method().as_str(),
                url: request.url(),
                key: key.as_deref(),
                body: &body,
            };
            // A panic is a bug, but it must cost one request, not a worker.
            catch_unwind(AssertUnwindSafe(|| app.handle(&incoming)))
                .unwrap_or_else(|_| reply::internal("the mock failed to answer this request"))
        }
        Ok(true) => reply::bad_request(format!("body larger than {MAX_BODY} bytes")),
        Err(_) => reply::bad_request("body could not be read"),
    };
    // The client may have gone away; there is nobody left to tell.
    let _ = request.respond(to_response(reply, &app.faults));
}

fn header(name: &str, value: &str) -> Option<tiny_http::Header> {
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).ok()
}

fn to_response(reply: Reply, faults: &Faults) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    // Always a Content-Length, never chunked (API.md conventions 4).
    let threshold = if faults.has(Fault::Chunked) {
        0
    } else {
        usize::MAX
    };
    let mut response = tiny_http::Response::from_data(reply.body)
        .with_status_code(reply.status)
        .with_chunked_threshold(threshold);
    if let Some(h) = header("Content-Type", reply.content_type) {
        response.add_header(h);
    }
    if faults.has(Fault::BadDateHeader)
        && let Some(h) = header("Date", "yesterday, around noon")
    {
        response.add_header(h);
    }
    if let Some(h) = reply.allow.and_then(|allow| header("Allow", allow)) {
        response.add_header(h);
    }
    response
}

//! The harness's own HTTP: raw exchanges judged as bytes and JSON, bounded
//! in time and size, paced, within the run's budget, shown only through a
//! redactor that knows every secret seen.
//!
//! A transient failure (429, 502, 503, 504, a reset, a timeout) is not
//! the server's answer to a rule's question: reads and probes are sent
//! again with backoff (`retry`), and an exchange whose every attempt was
//! transient is marked so, which makes the rules that see it
//! inconclusive, never failed. Writes are sent once, each on a fresh
//! connection; what to do when their answer is lost is the caller's
//! business (`model::writes`).

mod json;
mod raw;
mod retry;

pub use raw::get as raw_get;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use aggpay_internal::coding;
use aggpay_internal::rules::KEY_HEADER;
pub(crate) use aggpay_internal::rules::encode_component as encode;
use aggpay_internal::text::Redactor;
use serde_json::Value;

use crate::contract::{Op, OpId};
use crate::pool::Pool;
pub use json::Duplicate;
pub use retry::Transient;

/// Largest body read; a larger one fails the exchange (an endless body
/// cannot hang the harness).
pub const MAX_BODY: u64 = 16 * 1024 * 1024;
/// The harness's `User-Agent`.
pub const USER_AGENT: &str = concat!("aggpay-conformance/", env!("CARGO_PKG_VERSION"));
/// How many offending exchanges an exchange rule keeps as evidence.
const KEEP: usize = 5;
/// How many characters of a body evidence quotes.
pub const SNIPPET: usize = 300;
/// What a request not sent because the run budget ran out says.
pub const BUDGET_SPENT: &str = "not sent: the run budget (--max-duration) ran out";

/// Why a request got no answer: what a caller branches on, and the words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoAnswer {
    /// What kind of failure.
    pub kind: NoAnswerKind,
    /// What happened, fit to show (secrets redacted, controls escaped).
    pub message: String,
}

/// The kinds of [`NoAnswer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoAnswerKind {
    /// Not sent: the run budget ran out.
    Budget,
    /// TLS failed (most often a certificate the harness does not trust).
    Tls,
    /// No answer within the timeout.
    Timeout,
    /// The connection could not be made or broke.
    Transport,
}

impl NoAnswer {
    fn budget() -> Self {
        Self {
            kind: NoAnswerKind::Budget,
            message: BUDGET_SPENT.to_owned(),
        }
    }

    /// The kind of a transport failure (the client's own classification).
    fn kind_of(error: &ureq::Error) -> NoAnswerKind {
        match error {
            _ if aggpay_internal::http::is_tls(error) => NoAnswerKind::Tls,
            ureq::Error::Timeout(_) => NoAnswerKind::Timeout,
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
                NoAnswerKind::Timeout
            }
            _ => NoAnswerKind::Transport,
        }
    }
}

impl std::fmt::Display for NoAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Which key a request carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    /// The configured key.
    Key,
    /// No header at all.
    Missing,
    /// A real credential other than the configured key (an old secret
    /// after a rotation): never shown.
    Secret(String),
    /// A made-up value (an empty or generated wrong key): shown, so a
    /// failure can be reproduced.
    Probe(String),
    /// The configured key, offered somewhere API.md does not put it, and
    /// no key header: never shown.
    Elsewhere(Place),
    /// The configured key in the key header, its name spelled exactly
    /// this way (sent byte for byte: the HTTP client would lower it).
    Spelled(&'static str),
}

impl Auth {
    /// How the request carries its key, without the key: what orders two
    /// requests of one URL.
    fn kind(&self) -> String {
        match self {
            Auth::Key => "key".to_owned(),
            Auth::Missing => "missing".to_owned(),
            Auth::Secret(_) => "secret".to_owned(),
            Auth::Probe(v) => format!("probe {v}"),
            Auth::Elsewhere(place) => format!("elsewhere {place:?}"),
            Auth::Spelled(name) => format!("spelled {name}"),
        }
    }
}

/// Where a key may be offered besides the key header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A query parameter of this name.
    Query(&'static str),
    /// A header of this name, the key after this prefix (`Bearer `…).
    Header(&'static str, &'static str),
    /// A cookie of this name.
    Cookie(&'static str),
}

impl Place {
    /// Where, in words.
    pub fn shown(self) -> String {
        match self {
            Place::Query(name) => format!("in the query parameter {name}"),
            Place::Header(name, "") => format!("in the header {name}"),
            Place::Header(name, prefix) => format!("in the header {name}: {}…", prefix.trim()),
            Place::Cookie(name) => format!("in the cookie {name}"),
        }
    }
}

/// A request as the reports show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// HTTP method.
    pub method: &'static str,
    /// Path below `/v1/aggregators/{aggregator-id}` (starting with `/` or
    /// empty), segments already encoded.
    pub path: String,
    /// Query parameters, unencoded.
    pub query: Vec<(String, String)>,
    /// JSON body, for POST.
    pub body: Option<String>,
    /// Which key is sent.
    pub auth: Auth,
    /// Another aggregator in the path than the configured one.
    pub aggregator: Option<String>,
}

impl Request {
    /// A GET with the configured key.
    pub fn get(path: impl Into<String>) -> Self {
        Self {
            method: "GET",
            path: path.into(),
            query: Vec::new(),
            body: None,
            auth: Auth::Key,
            aggregator: None,
        }
    }

    /// A PUT with the configured key.
    pub fn put(path: impl Into<String>) -> Self {
        Self {
            method: "PUT",
            ..Self::get(path)
        }
    }

    /// A POST of a JSON body with the configured key.
    pub fn post(path: impl Into<String>, body: impl Into<String>) -> Self {
        Self {
            method: "POST",
            body: Some(body.into()),
            ..Self::get(path)
        }
    }

    /// The request of operation `id`, which has no path id: its method and
    /// path from the contract table (a POST with the body `{}` until
    /// [`Request::json`] gives another).
    pub fn to(id: OpId) -> Self {
        Self::of(Op::get(id), None)
    }

    /// The request of operation `id` for the path id `path_id` (encoded).
    pub fn to_one(id: OpId, path_id: &str) -> Self {
        Self::of(Op::get(id), Some(path_id))
    }

    /// The request of `op`, with its path id when it has one.
    pub fn of(op: &Op, path_id: Option<&str>) -> Self {
        let path = match path_id {
            Some(id) => op.path_with(id),
            None => op.path.to_owned(),
        };
        Self {
            method: op.method,
            body: (op.method == "POST").then(|| "{}".to_owned()),
            ..Self::get(path)
        }
    }

    /// Sends `body` as the JSON body.
    pub fn json(mut self, body: impl Into<String>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// Adds a query parameter.
    pub fn q(mut self, name: &str, value: impl ToString) -> Self {
        self.query.push((name.to_owned(), value.to_string()));
        self
    }

    /// Adds query parameters.
    pub fn with_query<K: AsRef<str>, V: AsRef<str>>(mut self, pairs: &[(K, V)]) -> Self {
        for (k, v) in pairs {
            self.query
                .push((k.as_ref().to_owned(), v.as_ref().to_owned()));
        }
        self
    }

    /// Sends another key (or none).
    pub fn auth(mut self, auth: Auth) -> Self {
        self.auth = auth;
        self
    }

    /// Names another aggregator in the path.
    pub fn for_aggregator(mut self, aggregator: impl Into<String>) -> Self {
        self.aggregator = Some(aggregator.into());
        self
    }

    /// True for a write the server must carry out: a PUT or POST with the
    /// configured key on the configured aggregator. Everything else
    /// (reads, and writes the server must refuse: another key, another
    /// aggregator) is safe to send again.
    pub fn is_write(&self) -> bool {
        self.method != "GET" && self.auth == Auth::Key && self.aggregator.is_none()
    }

    /// The value of a query parameter (the first, when repeated).
    pub fn query_value(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One request and what came back.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// What was sent.
    pub request: Request,
    /// The full URL (query encoded), without the key.
    pub url: String,
    /// HTTP status, or why there is none.
    pub outcome: Result<u16, NoAnswer>,
    /// Response headers (lowercase names).
    pub headers: Vec<(String, String)>,
    /// Response body, its content codings undone (the bytes every rule
    /// judges); as received when they could not be.
    pub body: Vec<u8>,
    /// Bytes of the body as received, before its content codings were
    /// undone (what Content-Length counts).
    pub received: usize,
    /// Why the body's content coding could not be undone, when it could
    /// not.
    pub undecodable: Option<String>,
    /// The body as JSON, when it is JSON (read strictly: `json::read`).
    pub json: Option<Value>,
    /// Members an object of the body names more than once.
    pub duplicates: Vec<Duplicate>,
    /// Attempts made (1 when the first answer was kept).
    pub attempts: u32,
    /// Set when every attempt met a transient failure: this is not the
    /// server's answer to the question, and proves nothing either way.
    pub transient: Option<Transient>,
}

impl Exchange {
    /// The status, if the server answered.
    pub fn status(&self) -> Option<u16> {
        self.outcome.as_ref().ok().copied()
    }

    /// True for a 2xx answer.
    pub fn success(&self) -> bool {
        self.status().is_some_and(|s| (200..300).contains(&s))
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// `data` of a success envelope.
    pub fn data(&self) -> Option<&Value> {
        self.json
            .as_ref()
            .filter(|_| self.success())
            .and_then(|v| v.get("data"))
    }

    /// The rows under `data[key]` of a success answer.
    pub fn rows(&self, key: &str) -> Option<&Vec<Value>> {
        self.data()
            .and_then(|d| d.get(key))
            .and_then(Value::as_array)
    }

    /// The operation the request exercised, by the contract table.
    pub fn op(&self) -> Option<&'static crate::contract::Op> {
        crate::contract::Op::route(self.request.method, &self.request.path)
    }
}

/// A rule that judges every exchange of the run as it happens: the id of
/// the rule and its verdict on one exchange (`Some(why)` when broken).
pub type Observer = (&'static str, fn(&Exchange) -> Option<String>);

/// What the exchange rules found, per rule: evidence kept and the count.
#[derive(Debug, Default)]
pub struct Log {
    /// Answered exchanges judged (transient ones are not).
    pub answered: u64,
    /// Successful exchanges.
    pub successes: u64,
    violations: Vec<Violations>,
}

/// One exchange rule's violations: evidence kept (at most [`KEEP`]) and
/// how many there were in all. The evidence kept is the first by URL and
/// message, not by arrival: the report is the same whatever `--jobs`.
#[derive(Debug)]
struct Violations {
    rule: &'static str,
    kept: Vec<(String, Exchange)>,
    total: u64,
}

impl Log {
    fn note(&mut self, rule: &'static str, message: String, exchange: &Exchange) {
        let at = match self.violations.iter().position(|v| v.rule == rule) {
            Some(i) => i,
            None => {
                self.violations.push(Violations {
                    rule,
                    kept: Vec::new(),
                    total: 0,
                });
                self.violations.len() - 1
            }
        };
        let entry = &mut self.violations[at];
        entry.total += 1;
        // By URL, message, then how the request carried its key (two
        // rules may send one URL with two headers): never by arrival.
        let key = |(m, e): &(String, Exchange)| (e.url.clone(), m.clone(), e.request.auth.kind());
        let here = (
            exchange.url.clone(),
            message.clone(),
            exchange.request.auth.kind(),
        );
        let at = entry.kept.partition_point(|k| key(k) < here);
        if at < KEEP {
            entry.kept.insert(at, (message, exchange.clone()));
            entry.kept.truncate(KEEP);
        }
    }

    /// The violations of one rule and their total.
    pub fn of(&self, rule: &str) -> (Vec<(String, Exchange)>, u64) {
        self.violations
            .iter()
            .find(|v| v.rule == rule)
            .map(|v| (v.kept.clone(), v.total))
            .unwrap_or_default()
    }
}

/// Status, headers (lowercase names) and body of an answer.
type Answer = (u16, Vec<(String, String)>, Vec<u8>);

/// How the harness reaches the server.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// The base URL, its path prefix included.
    pub base: String,
    /// The aggregator of every path.
    pub aggregator: String,
    /// The key.
    pub key: String,
    /// Per request.
    pub timeout: Duration,
    /// The least time between two requests.
    pub interval: Option<Duration>,
    /// A PEM file of CA certificates to trust.
    pub ca_cert: Option<std::path::PathBuf>,
    /// When the run must end.
    pub deadline: Option<Instant>,
    /// Requests in flight at once.
    pub jobs: usize,
}

/// The harness's HTTP client of one server. `Sync`: rules share it.
pub struct Http {
    agent: ureq::Agent,
    agent_config: ureq::config::Config,
    base: String,
    aggregator: String,
    key: String,
    timeout: Duration,
    /// At most so many requests a second (the client's pacer).
    pacer: Option<aggpay_internal::http::Pacer>,
    deadline: Option<Instant>,
    /// The CA file, for requests sent byte for byte.
    ca_cert: Option<std::path::PathBuf>,
    spent: AtomicBool,
    pool: Arc<Pool>,
    redactor: RwLock<Redactor>,
    observers: Vec<Observer>,
    log: Mutex<Log>,
    sent: AtomicU64,
    retries: AtomicU64,
}

impl std::fmt::Debug for Http {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Http")
            .field("base", &self.base)
            .field("key", &"<redacted>")
            .finish_non_exhaustive()
    }
}

impl Http {
    /// A client of `config.base`, judging every exchange with `observers`.
    ///
    /// # Errors
    ///
    /// Why the CA file cannot be used.
    pub fn new(
        config: HttpConfig,
        pool: Arc<Pool>,
        observers: Vec<Observer>,
    ) -> Result<Self, aggpay_internal::http::CaError> {
        let mut tls = ureq::tls::TlsConfig::builder();
        if let Some(path) = &config.ca_cert {
            let roots = aggpay_internal::http::ca_file(path)?;
            tls = tls.root_certs(ureq::tls::RootCerts::new_with_certs(&roots));
        }
        let agent_config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(config.timeout))
            .timeout_connect(Some(config.timeout.min(Duration::from_secs(10))))
            // Never follow a redirect: the key goes to the base URL only.
            .max_redirects(0)
            .tls_config(tls.build())
            .user_agent(USER_AGENT)
            .build();
        let agent = agent_config.clone().new_agent();
        let mut redactor = Redactor::new();
        redactor.add(&config.key);
        Ok(Self {
            agent,
            agent_config,
            base: config.base.trim_end_matches('/').to_owned(),
            aggregator: config.aggregator,
            key: config.key,
            timeout: config.timeout,
            pacer: config.interval.map(aggpay_internal::http::Pacer::new),
            deadline: config.deadline,
            ca_cert: config.ca_cert.clone(),
            spent: AtomicBool::new(false),
            pool,
            redactor: RwLock::new(redactor),
            observers,
            log: Mutex::new(Log::default()),
            sent: AtomicU64::new(0),
            retries: AtomicU64::new(0),
        })
    }

    /// The pool the requests go through.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// Requests sent so far, retries included.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::SeqCst)
    }

    /// Requests sent again after a transient failure.
    pub fn retries(&self) -> u64 {
        self.retries.load(Ordering::SeqCst)
    }

    /// True once a request was held back because the budget ran out.
    pub fn budget_spent(&self) -> bool {
        self.spent.load(Ordering::SeqCst)
    }

    /// The exchange rules' evidence so far.
    pub fn log(&self) -> std::sync::MutexGuard<'_, Log> {
        self.log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The configured key, for comparisons only.
    pub fn key_matches(&self, secret: &str) -> bool {
        secret == self.key
    }

    /// The configured aggregator.
    pub fn aggregator(&self) -> &str {
        &self.aggregator
    }

    /// Learns a secret to redact from everything shown.
    pub fn learn_secret(&self, secret: &str) {
        self.redactor
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .add(secret);
    }

    fn redactor(&self) -> std::sync::RwLockReadGuard<'_, Redactor> {
        self.redactor
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The URL of a request, query encoded, key never included.
    pub fn url(&self, request: &Request) -> String {
        let aggregator = request.aggregator.as_deref().unwrap_or(&self.aggregator);
        let mut url =
            aggpay_internal::rules::aggregator_url(&self.base, aggregator) + &request.path;
        for (i, (k, v)) in request.query.iter().enumerate() {
            url.push(if i == 0 { '?' } else { '&' });
            url.push_str(&encode(k));
            url.push('=');
            url.push_str(&encode(v));
        }
        if let Auth::Elsewhere(Place::Query(name)) = request.auth {
            url.push(if request.query.is_empty() { '?' } else { '&' });
            url.push_str(&format!("{}=<redacted>", encode(name)));
        }
        url
    }

    /// The URL sent: [`Http::url`] with the key where a request offers it
    /// in the query.
    fn url_sent(&self, request: &Request, url: &str) -> String {
        match request.auth {
            Auth::Elsewhere(Place::Query(name)) => url.replace(
                &format!("{}=<redacted>", encode(name)),
                &format!("{}={}", encode(name), encode(&self.key)),
            ),
            _ => url.to_owned(),
        }
    }

    /// A `curl` command reproducing the request; every credential shown
    /// as `<redacted>`.
    pub fn curl(&self, request: &Request) -> String {
        let mut cmd = format!(
            "curl -sS -X {} {}",
            request.method,
            shell_quote(&self.url(request))
        );
        match &request.auth {
            Auth::Key | Auth::Secret(_) => {
                cmd.push_str(&format!(" -H '{KEY_HEADER}: <redacted>'"));
            }
            Auth::Missing | Auth::Elsewhere(Place::Query(_)) => {}
            Auth::Probe(v) => {
                cmd.push_str(&format!(
                    " -H {}",
                    shell_quote(&format!("{KEY_HEADER}: {v}"))
                ));
            }
            Auth::Elsewhere(Place::Header(name, prefix)) => {
                cmd.push_str(&format!(" -H '{name}: {prefix}<redacted>'"));
            }
            Auth::Elsewhere(Place::Cookie(name)) => {
                cmd.push_str(&format!(" -H 'Cookie: {name}=<redacted>'"));
            }
            Auth::Spelled(name) => cmd.push_str(&format!(" -H '{name}: <redacted>'")),
        }
        if let Some(body) = &request.body {
            cmd.push_str(&format!(
                " -H 'Content-Type: application/json' --data {}",
                shell_quote(body)
            ));
        }
        self.text(&cmd, usize::MAX)
    }

    /// Text fit to show: every secret redacted, control characters
    /// escaped, at most `max_chars` characters.
    pub fn text(&self, text: &str, max_chars: usize) -> String {
        self.redactor().text(text, max_chars)
    }

    /// The start of a body, fit to show.
    pub fn snippet(&self, body: &[u8]) -> String {
        self.redactor().snippet(body, SNIPPET)
    }

    /// The time left before the deadline (`None`: no deadline).
    fn left(&self) -> Option<Duration> {
        self.deadline
            .map(|d| d.saturating_duration_since(Instant::now()))
    }

    /// An exchange that was never answered.
    fn unanswered(request: Request, url: String, why: NoAnswer, attempts: u32) -> Exchange {
        Exchange {
            request,
            url,
            outcome: Err(why),
            headers: Vec::new(),
            body: Vec::new(),
            received: 0,
            undecodable: None,
            json: None,
            duplicates: Vec::new(),
            attempts,
            transient: None,
        }
    }

    /// One attempt on `agent`, within the budget; `None` when the budget
    /// ran out before it could be sent.
    fn attempt(
        &self,
        agent: &ureq::Agent,
        request: &Request,
        url: &str,
    ) -> Option<Result<Answer, ureq::Error>> {
        let _slot = self.pool.slot();
        // A turn of the pacer past the deadline is not waited for: the
        // budget bounds the whole run, pacing included.
        if let Some(pacer) = &self.pacer
            && !pacer.wait_before(self.deadline)
        {
            self.spent.store(true, Ordering::SeqCst);
            return None;
        }
        let timeout = match self.left() {
            Some(left) if left.is_zero() => {
                self.spent.store(true, Ordering::SeqCst);
                return None;
            }
            Some(left) => self.timeout.min(left),
            None => self.timeout,
        };
        self.sent.fetch_add(1, Ordering::SeqCst);
        let result = self.call(agent, request, url, timeout);
        match &result {
            Ok(_) => self.pool.succeeded(),
            Err(e) if retry::is_connection_failure(e) => self.pool.connection_failed(),
            Err(_) => {}
        }
        Some(result)
    }

    /// Sends a request and lets the exchange rules judge what came back.
    /// A read, or a probe the server must refuse, is sent again after a
    /// transient failure, with backoff, within the run budget; a write is
    /// sent once, on a fresh connection (see [`Http::write`]).
    pub fn send(&self, request: Request) -> Exchange {
        if request.is_write() {
            let op = crate::contract::Op::route(request.method, &request.path);
            return match op.map(|o| o.effect) {
                Some(crate::contract::Effect::NewJob) => self.repeatable_write(request),
                _ => self.write(request),
            };
        }
        let url = self.url(&request);
        let mut schedule = retry::Schedule::new();
        loop {
            let Some(result) = self.attempt(&self.agent, &request, &url) else {
                return Self::unanswered(request, url, NoAnswer::budget(), schedule.attempts());
            };
            let verdict = retry::classify(&result);
            match schedule.next(verdict, self.left()) {
                retry::Next::Keep { transient } => {
                    return self.finish(request, url, result, schedule.attempts(), transient);
                }
                retry::Next::Wait(wait) => {
                    self.retries.fetch_add(1, Ordering::SeqCst);
                    std::thread::sleep(wait);
                }
            }
        }
    }

    /// Sends a write once, on a connection of its own: a pooled
    /// connection the server has already closed would lose it. A lost
    /// answer is marked transient; the caller decides whether the write
    /// may be repeated or how to recover what it did.
    pub fn write(&self, request: Request) -> Exchange {
        let url = self.url(&request);
        let agent = self.agent_config.clone().new_agent();
        let Some(result) = self.attempt(&agent, &request, &url) else {
            return Self::unanswered(request, url, NoAnswer::budget(), 0);
        };
        let transient = retry::classify(&result).transient();
        self.finish(request, url, result, 1, transient)
    }

    /// A write that makes something new each time (an export job), so
    /// that one more is harmless: a 429 or a 503 is waited out (the server
    /// says it did not handle the request), another lost answer (a reset,
    /// a timeout, a gateway's 502 or 504) is repeated once.
    pub fn repeatable_write(&self, request: Request) -> Exchange {
        let mut answer = self.write(request.clone());
        let (mut throttled, mut repeated) = (0, false);
        while answer.transient.is_some() {
            let refused = matches!(answer.status(), Some(429 | 503));
            let again = if refused && throttled < retry::THROTTLED {
                throttled += 1;
                true
            } else if !repeated {
                repeated = true;
                true
            } else {
                false
            };
            if !again || !self.wait_before_rewrite(&answer) {
                break;
            }
            self.count_retry();
            answer = self.write(request.clone());
        }
        answer
    }

    /// Counts a write sent again (its answer was lost or refused for now).
    pub fn count_retry(&self) {
        self.retries.fetch_add(1, Ordering::SeqCst);
    }

    /// Waits before a write is sent again: `Retry-After` if the answer
    /// had one, else a short backoff; `false` when the budget does not
    /// allow it.
    pub fn wait_before_rewrite(&self, e: &Exchange) -> bool {
        let mut schedule = retry::Schedule::new();
        let wait = retry::retry_after(&e.headers)
            .map_or(retry::WRITE_PAUSE, |w| w.min(retry::MAX_RETRY_AFTER));
        if !schedule.allows(wait, self.left()) {
            return false;
        }
        std::thread::sleep(wait);
        true
    }

    fn finish(
        &self,
        request: Request,
        url: String,
        result: Result<Answer, ureq::Error>,
        attempts: u32,
        transient: Option<Transient>,
    ) -> Exchange {
        let (outcome, headers, body) = match result {
            Ok((status, headers, body)) => (Ok(status), headers, body),
            Err(e) => (
                Err(NoAnswer {
                    kind: NoAnswer::kind_of(&e),
                    message: self.text(&format!("no answer: {e}"), 500),
                }),
                Vec::new(),
                Vec::new(),
            ),
        };
        let received = body.len();
        let coding = headers
            .iter()
            .find(|(k, _)| k == "content-encoding")
            .map(|(_, v)| v.as_str());
        let (body, undecodable) = match coding::decode(coding, body.clone(), MAX_BODY) {
            Ok(decoded) => (decoded, None),
            Err(why) => (body, Some(why)),
        };
        let (json, duplicates) = match undecodable
            .is_none()
            .then(|| json::read(&body).ok())
            .flatten()
        {
            Some((json, duplicates)) => (Some(json), duplicates),
            None => (None, Vec::new()),
        };
        if let Some(value) = &json {
            self.learn_secrets(value);
        }
        let exchange = Exchange {
            request,
            url,
            outcome,
            headers,
            body,
            received,
            undecodable,
            json,
            duplicates,
            attempts,
            transient,
        };
        self.observe(&exchange);
        exchange
    }

    /// Every `secret` member of a body becomes a secret to redact.
    fn learn_secrets(&self, value: &Value) {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    match (k.as_str(), v) {
                        ("secret", Value::String(s)) => self.learn_secret(s),
                        _ => self.learn_secrets(v),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| self.learn_secrets(v)),
            _ => {}
        }
    }

    fn call(
        &self,
        agent: &ureq::Agent,
        request: &Request,
        url: &str,
        timeout: Duration,
    ) -> Result<Answer, ureq::Error> {
        if let Auth::Spelled(name) = request.auth {
            return raw::get(
                url,
                &[(name, self.key.as_str())],
                self.ca_cert.as_deref(),
                timeout,
            )
            .map_err(ureq::Error::Io);
        }
        let mut builder = ureq::http::Request::builder()
            .method(request.method)
            .uri(self.url_sent(request, url))
            .header("Accept", "application/json")
            .header("Accept-Encoding", coding::ACCEPTED);
        match &request.auth {
            Auth::Key => builder = builder.header(KEY_HEADER, &self.key),
            Auth::Secret(v) | Auth::Probe(v) => builder = builder.header(KEY_HEADER, v),
            Auth::Missing | Auth::Elsewhere(Place::Query(_)) | Auth::Spelled(_) => {}
            Auth::Elsewhere(Place::Header(name, prefix)) => {
                builder = builder.header(*name, format!("{prefix}{}", self.key));
            }
            Auth::Elsewhere(Place::Cookie(name)) => {
                builder = builder.header("Cookie", format!("{name}={}", self.key));
            }
        }
        if request.body.is_some() {
            builder = builder.header("Content-Type", "application/json");
        }
        let body = request.body.as_deref().unwrap_or("");
        let http_request = builder.body(body).map_err(ureq::Error::Http)?;
        let configured = agent
            .configure_request(http_request)
            .timeout_global(Some(timeout))
            .build();
        let mut response = agent.run(configured)?;
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_ascii_lowercase(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let body = response
            .body_mut()
            .with_config()
            .limit(MAX_BODY)
            .read_to_vec()?;
        Ok((status, headers, body))
    }

    /// The exchange rules judge every answer that is the server's answer:
    /// a transient failure is not.
    fn observe(&self, e: &Exchange) {
        let Some(status) = e.status() else { return };
        if e.transient.is_some() {
            return;
        }
        let mut log = self.log();
        log.answered += 1;
        if (200..300).contains(&status) {
            log.successes += 1;
        }
        for (rule, judge) in &self.observers {
            if let Some(why) = judge(e) {
                log.note(rule, why, e);
            }
        }
    }
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A JSON value for a message, shortened.
pub fn show(v: Option<&Value>) -> String {
    match v {
        None => "missing".to_owned(),
        Some(v) => aggpay_internal::text::excerpt(&v.to_string(), 80),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http() -> Http {
        Http::new(
            HttpConfig {
                base: "http://127.0.0.1:1/".into(),
                aggregator: "agg_1".into(),
                key: "topsecret".into(),
                timeout: Duration::from_secs(1),
                interval: None,
                ca_cert: None,
                deadline: None,
                jobs: 1,
            },
            Arc::new(Pool::new(1)),
            Vec::new(),
        )
        .unwrap()
    }

    #[test]
    fn urls_and_curl_lines_never_show_a_credential() {
        let http = http();
        let r = Request::get("/keys").q("names", "a b,c");
        assert_eq!(
            http.url(&r),
            "http://127.0.0.1:1/v1/aggregators/agg_1/keys?names=a%20b%2Cc"
        );
        http.learn_secret("old-secret-1");
        for auth in [Auth::Key, Auth::Secret("old-secret-1".into())] {
            let curl = http.curl(&r.clone().auth(auth));
            assert!(curl.contains("<redacted>"), "{curl}");
            assert!(
                !curl.contains("topsecret") && !curl.contains("old-secret"),
                "{curl}"
            );
        }
        let probe = http.curl(&r.clone().auth(Auth::Probe("made-up".into())));
        assert!(probe.contains("made-up"), "{probe}");
        // A probe that happens to be a known secret is redacted all the same.
        let probe = http.curl(&r.auth(Auth::Probe("old-secret-1".into())));
        assert!(!probe.contains("old-secret-1"), "{probe}");
        let s = http.snippet(br#"{"secret": "other", "x": "topsecret"}"#);
        assert!(!s.contains("other") && !s.contains("topsecret"), "{s}");
    }

    #[test]
    fn a_spent_budget_sends_nothing() {
        let mut config = http();
        config.deadline = Some(Instant::now());
        let e = config.send(Request::get("/keys"));
        assert_eq!(e.outcome, Err(NoAnswer::budget()));
        assert!(config.budget_spent());
        assert_eq!(config.sent(), 0);
    }

    #[test]
    fn only_keyed_puts_and_posts_are_writes() {
        assert!(!Request::get("/keys").is_write());
        assert!(Request::put("/keys/ak_1/rotate").is_write());
        assert!(
            !Request::put("/keys/ak_1/rotate")
                .auth(Auth::Missing)
                .is_write()
        );
        assert!(Request::post("/settlements/report-exports", "{}").is_write());
    }
}

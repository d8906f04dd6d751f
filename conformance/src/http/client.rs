//! The harness's client of one server: sends requests within the run's
//! budget and pace, retries what is transient, keeps every secret it sees
//! out of what it shows, and hands every answer to the rules' log.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use aggpay_internal::coding;
use aggpay_internal::syntax::KEY_HEADER;
use aggpay_internal::text::Redactor;

use serde_json::Value;

use super::h1::{self, Answer, Transport};
use super::{
    Auth, Exchange, KeyPlace, MAX_BODY, NoAnswer, Request, SNIPPET, Transient, USER_AGENT, encode,
    json, retry,
};
use crate::contract::Op;
use crate::pool::Pool;

/// What sees every answer the server gives, as it is made (the rules'
/// log, which judges it).
pub trait Watch: Send + Sync {
    /// An exchange the server answered (a transient failure is not one).
    fn answered(&self, e: &Exchange);
}

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
    /// The names the server is held to where API.md gives a parameter
    /// by purpose only, and the server's own names for some.
    pub names: crate::contract::ServerNames,
}

/// The harness's HTTP client of one server. `Sync`: rules share it.
pub struct Http {
    transport: Transport,
    base: String,
    aggregator: String,
    key: String,
    timeout: Duration,
    /// At most so many requests a second (the client's pacer).
    pacer: Option<aggpay_internal::http::Pacer>,
    deadline: Option<Instant>,
    spent: AtomicBool,
    pool: Arc<Pool>,
    redactor: RwLock<Redactor>,
    watch: Arc<dyn Watch>,
    sent: AtomicU64,
    retries: AtomicU64,
    names: crate::contract::ServerNames,
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
    /// A client of `config.base`, showing every answer to `watch`.
    ///
    /// # Errors
    ///
    /// Why the base URL's origin or the CA file cannot be used.
    pub fn new(
        config: HttpConfig,
        pool: Arc<Pool>,
        watch: Arc<dyn Watch>,
    ) -> Result<Self, std::io::Error> {
        let origin = h1::Origin::of(&config.base, config.ca_cert.as_deref())?;
        let mut redactor = Redactor::new();
        redactor.add(&config.key);
        Ok(Self {
            // As many idle connections as requests go at once, and a few
            // for the forms that take one of their own.
            transport: Transport::new(origin, config.jobs.max(1) * 2),
            base: config.base.trim_end_matches('/').to_owned(),
            aggregator: config.aggregator,
            key: config.key,
            timeout: config.timeout,
            pacer: config.interval.map(aggpay_internal::http::Pacer::new),
            deadline: config.deadline,
            spent: AtomicBool::new(false),
            pool,
            redactor: RwLock::new(redactor),
            watch,
            sent: AtomicU64::new(0),
            retries: AtomicU64::new(0),
            names: config.names,
        })
    }

    /// The pool the requests go through.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// The names the server is held to where API.md gives a parameter by
    /// purpose only.
    pub fn names(&self) -> &crate::contract::ServerNames {
        &self.names
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

    /// The configured key, for comparisons only.
    pub fn key_matches(&self, secret: &str) -> bool {
        secret == self.key
    }

    /// `f` of the configured key: for values derived from it (its near
    /// misses), which stay as secret as the key (`learn_secret` them).
    pub fn with_key<R>(&self, f: impl FnOnce(&str) -> R) -> R {
        f(&self.key)
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
            aggpay_internal::syntax::aggregator_url(&self.base, aggregator) + &request.path;
        let query = self
            .names
            .on_the_wire(request.method, &request.path, &request.query);
        for (i, (k, v)) in query.iter().enumerate() {
            url.push(if i == 0 { '?' } else { '&' });
            url.push_str(&encode(k));
            url.push('=');
            url.push_str(&encode(v));
        }
        if let Auth::Elsewhere(KeyPlace::Query(name)) = request.auth {
            url.push(if request.query.is_empty() { '?' } else { '&' });
            url.push_str(&format!("{}=<redacted>", encode(name)));
        }
        url
    }

    /// The URL sent: [`Http::url`] with the key where a request offers it
    /// in the query.
    fn url_sent(&self, request: &Request, url: &str) -> String {
        match request.auth {
            Auth::Elsewhere(KeyPlace::Query(name)) => url.replace(
                &format!("{}=<redacted>", encode(name)),
                &format!("{}={}", encode(name), encode(&self.key)),
            ),
            _ => url.to_owned(),
        }
    }

    /// A `curl` command reproducing the request; every credential shown
    /// as `<redacted>`.
    pub fn curl(&self, request: &Request) -> String {
        let method = match request.method {
            "HEAD" => "--head".to_owned(),
            m => format!("-X {m}"),
        };
        let mut cmd = format!("curl -sS {method} {}", shell_quote(&self.url(request)));
        let form = &request.form;
        if form.http10 {
            cmd.push_str(" --http1.0");
        }
        if form.close {
            cmd.push_str(" -H 'Connection: close'");
        }
        if form.chunked {
            cmd.push_str(" -H 'Transfer-Encoding: chunked'");
        }
        if form.expect_continue {
            cmd.push_str(" -H 'Expect: 100-continue'");
        }
        if let Some(tag) = &form.if_none_match {
            cmd.push_str(&format!(
                " -H {}",
                shell_quote(&format!("If-None-Match: {tag}"))
            ));
        }
        match &request.auth {
            Auth::Key | Auth::Secret(_) => {
                cmd.push_str(&format!(" -H '{KEY_HEADER}: <redacted>'"));
            }
            Auth::Missing | Auth::Elsewhere(KeyPlace::Query(_)) => {}
            Auth::Probe(v) => {
                cmd.push_str(&format!(
                    " -H {}",
                    shell_quote(&format!("{KEY_HEADER}: {v}"))
                ));
            }
            Auth::Elsewhere(KeyPlace::Header(name, prefix)) => {
                cmd.push_str(&format!(" -H '{name}: {prefix}<redacted>'"));
            }
            Auth::Elsewhere(KeyPlace::Cookie(name)) => {
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
            op: Op::route(request.method, &request.path),
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
            wire: None,
        }
    }

    /// One attempt, on a kept connection when `reuse` allows, within the
    /// budget; `None` when the budget ran out before it could be sent.
    fn attempt(
        &self,
        reuse: bool,
        request: &Request,
        url: &str,
    ) -> Option<Result<Answer, ureq::Error>> {
        let _slot = self.pool.slot();
        self.attempt_holding(reuse, request, url)
    }

    /// [`Http::attempt`], its slot already held.
    fn attempt_holding(
        &self,
        reuse: bool,
        request: &Request,
        url: &str,
    ) -> Option<Result<Answer, ureq::Error>> {
        // A turn of the pacer past the deadline is not waited for: the
        // budget bounds the whole run, pacing included.
        let timeout = self.turn()?;
        let result = self
            .call(reuse, request, url, timeout)
            .map_err(ureq::Error::Io);
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
            let Some(result) = self.attempt(true, &request, &url) else {
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
        let _slot = self.pool.slot();
        self.write_holding(request)
    }

    /// [`Http::write`], its slot already held.
    fn write_holding(&self, request: Request) -> Exchange {
        let url = self.url(&request);
        let Some(result) = self.attempt_holding(false, &request, &url) else {
            return Self::unanswered(request, url, NoAnswer::budget(), 0);
        };
        let transient = retry::classify(&result).transient();
        self.finish(request, url, result, 1, transient)
    }

    /// Writes sent at the same time, each once on a connection of its
    /// own (as [`Http::write`]): their slots are taken together, so that
    /// every one is in flight before any answer is read. When fewer
    /// requests than these may be in flight (`--jobs`), they are sent
    /// one after another instead, and the second value is false.
    pub fn writes_at_once(&self, requests: &[Request]) -> (Vec<Exchange>, bool) {
        let slots = self.pool.slots(requests.len());
        if slots.len() < requests.len() {
            drop(slots);
            return (
                requests.iter().map(|r| self.write(r.clone())).collect(),
                false,
            );
        }
        let answers = std::thread::scope(|scope| {
            let sent: Vec<_> = requests
                .iter()
                .map(|request| scope.spawn(move || self.write_holding(request.clone())))
                .collect();
            sent.into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        drop(slots);
        (answers, true)
    }

    /// A write that makes something new each time (an export job), or
    /// names no record, so that one more is harmless: a 429 or a 503 is
    /// waited out (the server says it did not handle the request), another
    /// lost answer (a reset, a timeout, a gateway's 502 or 504) is sent
    /// again up to [`retry::LOST_WRITE_REPEATS`] times.
    pub fn repeatable_write(&self, request: Request) -> Exchange {
        let mut answer = self.write(request.clone());
        let (mut throttled, mut repeated) = (0, 0);
        while answer.transient.is_some() {
            let refused = answer
                .status()
                .is_some_and(aggpay_internal::http::is_not_handled_status);
            let again = if refused && throttled < retry::THROTTLED {
                throttled += 1;
                true
            } else if repeated < retry::LOST_WRITE_REPEATS {
                repeated += 1;
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

    /// Sends `requests` one after another on one new connection, each
    /// once the answer before it is read, each once: their exchanges, up
    /// to the first after which the connection does not persist (the
    /// requests after it are not sent; a client would open another
    /// connection). How the answers to different methods on one
    /// connection frame each other (a HEAD's, then a GET's) shows only
    /// this way.
    pub fn on_one_connection(&self, requests: &[Request]) -> Vec<Exchange> {
        let _slot = self.pool.slot();
        let mut out = Vec::new();
        let mut conn = None;
        for request in requests {
            let url = self.url(request);
            let Some(timeout) = self.turn() else {
                out.push(Self::unanswered(
                    request.clone(),
                    url,
                    NoAnswer::budget(),
                    0,
                ));
                break;
            };
            let deadline = Instant::now() + timeout;
            let conn = match &mut conn {
                Some(conn) => conn,
                None => match self.transport.connect(deadline) {
                    Ok(c) => conn.insert(c),
                    Err(e) => {
                        let result = Err(ureq::Error::Io(e));
                        out.push(self.finish_once(request.clone(), url, result));
                        break;
                    }
                },
            };
            conn.set_deadline(deadline);
            let bytes = self.bytes(request, &url);
            let result = self
                .transport
                .on(conn, &bytes, &request.form, request.method == "HEAD")
                .map_err(ureq::Error::Io);
            let persists = matches!(&result, Ok(a) if a.persists(&request.form));
            out.push(self.finish_once(request.clone(), url, result));
            if !persists {
                break;
            }
        }
        out
    }

    /// Sends every request of `requests` at once on one new connection
    /// (pipelined, RFC 9112 section 9.3.2), then reads their answers in
    /// order: each request's exchange, or `None` for a request left
    /// unanswered because the connection closed after an earlier answer
    /// (which a server may do: a client sends it again).
    pub fn pipelined(&self, requests: &[Request]) -> Vec<Option<Exchange>> {
        let _slot = self.pool.slot();
        let urls: Vec<String> = requests.iter().map(|r| self.url(r)).collect();
        let Some(timeout) = self.turn() else {
            return requests
                .iter()
                .zip(urls)
                .map(|(r, url)| Some(Self::unanswered(r.clone(), url, NoAnswer::budget(), 0)))
                .collect();
        };
        let bytes: Vec<h1::Bytes> = requests
            .iter()
            .zip(&urls)
            .map(|(r, url)| self.bytes(r, url))
            .collect();
        let answers = match self.transport.pipelined(&bytes, Instant::now() + timeout) {
            Ok(answers) => answers,
            Err(e) => {
                let first = self.finish_once(
                    requests[0].clone(),
                    urls[0].clone(),
                    Err(ureq::Error::Io(e)),
                );
                return std::iter::once(Some(first))
                    .chain(requests[1..].iter().map(|_| None))
                    .collect();
            }
        };
        requests
            .iter()
            .zip(urls)
            .zip(answers)
            .map(|((request, url), answer)| {
                answer.map(|a| self.finish_once(request.clone(), url, a.map_err(ureq::Error::Io)))
            })
            .collect()
    }

    /// The exchange of a request sent once: transient when its one
    /// attempt met a transient failure.
    fn finish_once(
        &self,
        request: Request,
        url: String,
        result: Result<Answer, ureq::Error>,
    ) -> Exchange {
        let transient = retry::classify(&result).transient();
        self.finish(request, url, result, 1, transient)
    }

    /// The pacer's turn and the timeout of a request sent now, counted as
    /// sent; `None` when the budget ran out.
    fn turn(&self) -> Option<Duration> {
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
        Some(timeout)
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
        let (outcome, headers, body, wire) = match result {
            Ok(answer) => (
                Ok(answer.wire.head.status),
                answer.headers(),
                answer.body,
                Some(Box::new(answer.wire)),
            ),
            Err(e) => (
                Err(NoAnswer {
                    kind: NoAnswer::kind_of(&e),
                    message: self.text(&format!("no answer: {e}"), 500),
                }),
                Vec::new(),
                Vec::new(),
                None,
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
            op: Op::route(request.method, &request.path),
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
            wire,
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

    /// The fields of a request beside those of its form: who asks, what
    /// it accepts, and its key where the request carries it.
    fn fields(&self, request: &Request) -> Vec<(String, String)> {
        let mut fields = vec![
            ("User-Agent".to_owned(), USER_AGENT.to_owned()),
            ("Accept".to_owned(), "application/json".to_owned()),
            ("Accept-Encoding".to_owned(), coding::ACCEPTED.to_owned()),
        ];
        let key = |name: &str, value: String| (name.to_owned(), value);
        match &request.auth {
            Auth::Key => fields.push(key(KEY_HEADER, self.key.clone())),
            Auth::Secret(v) | Auth::Probe(v) => fields.push(key(KEY_HEADER, v.clone())),
            Auth::Missing | Auth::Elsewhere(KeyPlace::Query(_)) => {}
            Auth::Spelled(name) => fields.push(key(name, self.key.clone())),
            Auth::Elsewhere(KeyPlace::Header(name, prefix)) => {
                fields.push(key(name, format!("{prefix}{}", self.key)));
            }
            Auth::Elsewhere(KeyPlace::Cookie(name)) => {
                fields.push(key("Cookie", format!("{name}={}", self.key)));
            }
        }
        fields
    }

    /// The bytes of `request` (to `url`, key included where it goes).
    fn bytes(&self, request: &Request, url: &str) -> h1::Bytes {
        let sent = self.url_sent(request, url);
        let target = h1::target_of(&sent);
        h1::Bytes::request(
            request.method,
            &target,
            self.transport.authority(),
            &self.fields(request),
            request.body.as_deref().map(str::as_bytes),
            &request.form,
        )
    }

    fn call(
        &self,
        reuse: bool,
        request: &Request,
        url: &str,
        timeout: Duration,
    ) -> std::io::Result<Answer> {
        let bytes = self.bytes(request, url);
        self.transport.exchange(
            &bytes,
            &request.form,
            request.method == "HEAD",
            reuse && request.form.is_plain(),
            Instant::now() + timeout,
        )
    }

    /// The rules' log sees every answer that is the server's answer: a
    /// transient failure is not.
    fn observe(&self, e: &Exchange) {
        if e.status().is_some() && e.transient.is_none() {
            self.watch.answered(e);
        }
    }
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Nothing;

    impl Watch for Nothing {
        fn answered(&self, _: &Exchange) {}
    }

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
                names: Default::default(),
            },
            Arc::new(Pool::new(1)),
            Arc::new(Nothing),
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

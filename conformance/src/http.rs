//! The harness's own HTTP: raw exchanges judged as bytes and JSON, bounded
//! in time and size, paced, logged for the header rules, never printing the
//! key.

use std::cell::{Cell, RefCell};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use regex::Regex;
use serde_json::Value;

pub use aggpay::rules::{KEY_HEADER, encode_component as encode};
/// Largest body read; a larger one fails the exchange (an endless body
/// cannot hang the harness).
pub const MAX_BODY: u64 = 16 * 1024 * 1024;
/// How many offending exchanges a header rule keeps as evidence.
const KEEP: usize = 5;

/// Which key a request carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    /// The configured key.
    Key,
    /// No header at all.
    Missing,
    /// This value instead of the key.
    Other(String),
}

/// A request as the reports show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// HTTP method.
    pub method: &'static str,
    /// Path below `/v1/aggregators/{aggregator-id}` (starting with `/` or empty).
    pub path: String,
    /// Query parameters, unencoded.
    pub query: Vec<(String, String)>,
    /// JSON body, for POST.
    pub body: Option<String>,
    /// Which key is sent.
    pub auth: Auth,
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
        }
    }

    /// Adds a query parameter.
    pub fn q(mut self, name: &str, value: impl ToString) -> Self {
        self.query.push((name.to_owned(), value.to_string()));
        self
    }

    /// Sends another key (or none).
    pub fn auth(mut self, auth: Auth) -> Self {
        self.auth = auth;
        self
    }
}

/// One request and what came back.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// What was sent.
    pub request: Request,
    /// The full URL (query encoded), without the key.
    pub url: String,
    /// HTTP status, or the transport error.
    pub outcome: Result<u16, String>,
    /// Response headers (lowercase names).
    pub headers: Vec<(String, String)>,
    /// Response body.
    pub body: Vec<u8>,
    /// The body as JSON, when it is JSON.
    pub json: Option<Value>,
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
}

/// A violation of a header-level rule, kept as evidence.
#[derive(Debug, Clone)]
pub struct Violation {
    /// What was wrong.
    pub message: String,
    /// The exchange.
    pub exchange: Exchange,
}

/// What the header-level rules learn from every exchange of the run.
#[derive(Debug, Default)]
pub struct Log {
    /// Answered exchanges.
    pub answered: u64,
    /// Successful exchanges.
    pub successes: u64,
    /// Per rule id: violations kept and how many there were.
    pub violations: Vec<(&'static str, Vec<Violation>, u64)>,
}

impl Log {
    fn note(&mut self, rule: &'static str, message: String, exchange: &Exchange) {
        let entry = match self.violations.iter().position(|(r, _, _)| *r == rule) {
            Some(i) => &mut self.violations[i],
            None => {
                self.violations.push((rule, Vec::new(), 0));
                let last = self.violations.len() - 1;
                &mut self.violations[last]
            }
        };
        entry.2 += 1;
        if entry.1.len() < KEEP {
            entry.1.push(Violation {
                message,
                exchange: exchange.clone(),
            });
        }
    }

    /// The violations of one rule and their total.
    pub fn of(&self, rule: &str) -> (Vec<Violation>, u64) {
        self.violations
            .iter()
            .find(|(r, _, _)| *r == rule)
            .map(|(_, v, n)| (v.clone(), *n))
            .unwrap_or_default()
    }
}

/// Status, headers (lowercase names) and body of an answer.
type Answer = (u16, Vec<(String, String)>, Vec<u8>);

/// The harness's HTTP client of one server.
pub struct Http {
    agent: ureq::Agent,
    base: String,
    aggregator: String,
    key: String,
    min_interval: Option<Duration>,
    next_slot: Cell<Instant>,
    log: RefCell<Log>,
    sent: Cell<u64>,
}

/// A `"secret": "…"` member of a JSON body: access key lists carry secrets
/// in clear, and no report may show one.
static SECRET_FIELD: LazyLock<Regex> = LazyLock::new(|| {
    // A literal pattern; the unit test `scrubbing_and_curl` compiles it.
    Regex::new(r#""secret"\s*:\s*"(?:[^"\\]|\\.)*""#).unwrap_or_else(|e| unreachable!("{e}"))
});

impl std::fmt::Debug for Http {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Http")
            .field("base", &self.base)
            .field("key", &"<redacted>")
            .finish_non_exhaustive()
    }
}

impl Http {
    /// A client of `base` for `aggregator`, with a per-request timeout and
    /// an optional request rate.
    pub fn new(
        base: &str,
        aggregator: &str,
        key: &str,
        timeout: Duration,
        rate: Option<f64>,
    ) -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(timeout))
            .timeout_connect(Some(timeout.min(Duration::from_secs(10))))
            .max_redirects(0)
            .user_agent(concat!("aggpay-conformance/", env!("CARGO_PKG_VERSION")))
            .build()
            .new_agent();
        let min_interval = rate
            .filter(|r| *r > 0.0)
            .map(|r| Duration::from_secs_f64(1.0 / r));
        Self {
            agent,
            base: base.trim_end_matches('/').to_owned(),
            aggregator: aggregator.to_owned(),
            key: key.to_owned(),
            min_interval,
            next_slot: Cell::new(Instant::now()),
            log: RefCell::new(Log::default()),
            sent: Cell::new(0),
        }
    }

    /// Requests sent so far.
    pub fn sent(&self) -> u64 {
        self.sent.get()
    }

    /// The header-level evidence gathered so far.
    pub fn log(&self) -> std::cell::Ref<'_, Log> {
        self.log.borrow()
    }

    /// The configured key, for comparisons only.
    pub fn key_matches(&self, secret: &str) -> bool {
        secret == self.key
    }

    /// The URL of a request, query encoded, key never included.
    pub fn url(&self, request: &Request) -> String {
        let mut url = format!(
            "{}/v1/aggregators/{}{}",
            self.base,
            encode(&self.aggregator),
            request.path
        );
        for (i, (k, v)) in request.query.iter().enumerate() {
            url.push(if i == 0 { '?' } else { '&' });
            url.push_str(&encode(k));
            url.push('=');
            url.push_str(&encode(v));
        }
        url
    }

    /// A `curl` command reproducing the request, the key shown as `<redacted>`.
    pub fn curl(&self, request: &Request) -> String {
        let mut cmd = format!(
            "curl -sS -X {} {}",
            request.method,
            shell_quote(&self.url(request))
        );
        match &request.auth {
            Auth::Key => cmd.push_str(&format!(" -H '{KEY_HEADER}: <redacted>'")),
            Auth::Missing => {}
            Auth::Other(v) => {
                cmd.push_str(&format!(
                    " -H {}",
                    shell_quote(&format!("{KEY_HEADER}: {}", self.scrub(v)))
                ));
            }
        }
        if let Some(body) = &request.body {
            cmd.push_str(&format!(
                " -H 'Content-Type: application/json' --data {}",
                shell_quote(body)
            ));
        }
        cmd
    }

    /// Removes the key, and every `secret` field, from text shown to users.
    pub fn scrub(&self, text: &str) -> String {
        let text = if self.key.is_empty() {
            text.to_owned()
        } else {
            text.replace(&self.key, "<redacted>")
        };
        SECRET_FIELD
            .replace_all(&text, r#""secret":"<redacted>""#)
            .into_owned()
    }

    /// The start of a body, scrubbed, for reports.
    pub fn snippet(&self, body: &[u8]) -> String {
        let text = String::from_utf8_lossy(&body[..body.len().min(2_000)]);
        aggpay::util::truncate(&self.scrub(&text), 300).into_owned()
    }

    fn pace(&self) {
        if let Some(interval) = self.min_interval {
            let now = Instant::now();
            let slot = self.next_slot.get().max(now);
            if slot > now {
                std::thread::sleep(slot - now);
            }
            self.next_slot.set(slot + interval);
        }
    }

    /// Sends a request and records what the header rules need.
    pub fn send(&self, request: Request) -> Exchange {
        self.pace();
        self.sent.set(self.sent.get() + 1);
        let url = self.url(&request);
        let result = self.call(&request, &url);
        let (outcome, headers, body) = match result {
            Ok(parts) => (Ok(parts.0), parts.1, parts.2),
            Err(e) => (Err(self.scrub(&e)), Vec::new(), Vec::new()),
        };
        let json = serde_json::from_slice::<Value>(&body).ok();
        let exchange = Exchange {
            request,
            url,
            outcome,
            headers,
            body,
            json,
        };
        self.observe(&exchange);
        exchange
    }

    fn call(&self, request: &Request, url: &str) -> Result<Answer, String> {
        let with_key = |mut headers: Vec<(&'static str, String)>| {
            match &request.auth {
                Auth::Key => headers.push((KEY_HEADER, self.key.clone())),
                Auth::Other(v) => headers.push((KEY_HEADER, v.clone())),
                Auth::Missing => {}
            }
            headers
        };
        let headers = with_key(vec![("Accept", "application/json".to_owned())]);
        let response = match request.method {
            "GET" => {
                let mut r = self.agent.get(url);
                for (k, v) in &headers {
                    r = r.header(*k, v);
                }
                r.call()
            }
            method => {
                let mut r = if method == "PUT" {
                    self.agent.put(url)
                } else {
                    self.agent.post(url)
                };
                for (k, v) in &headers {
                    r = r.header(*k, v);
                }
                match &request.body {
                    Some(b) => r
                        .header("Content-Type", "application/json")
                        .send(b.as_bytes()),
                    None => r.send_empty(),
                }
            }
        };
        let mut response = response.map_err(|e| format!("no answer: {e}"))?;
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
            .read_to_vec()
            .map_err(|e| format!("body could not be read: {e}"))?;
        Ok((status, headers, body))
    }

    /// The header-level rules judge every exchange as it happens.
    fn observe(&self, e: &Exchange) {
        let mut log = self.log.borrow_mut();
        let Some(status) = e.status() else { return };
        log.answered += 1;
        match e
            .header("content-length")
            .map(|v| v.trim().parse::<usize>())
        {
            None => log.note(
                "headers.content-length",
                "no Content-Length header".into(),
                e,
            ),
            Some(Ok(n)) if n == e.body.len() => {}
            Some(_) => log.note(
                "headers.content-length",
                format!(
                    "Content-Length {:?} but the body has {} bytes",
                    e.header("content-length"),
                    e.body.len()
                ),
                e,
            ),
        }
        match e.header("date") {
            None => log.note("headers.date", "no Date header".into(), e),
            Some(d) if is_http_date(d) => {}
            Some(d) => log.note("headers.date", format!("Date {d:?} is not an HTTP date"), e),
        }
        if e.json.is_none() {
            log.note("body.json", "the body is not JSON".into(), e);
        }
        let content_type = e.header("content-type").unwrap_or("");
        if !content_type
            .to_ascii_lowercase()
            .starts_with("application/json")
        {
            log.note(
                "wire.content-type-json",
                format!("Content-Type {content_type:?}"),
                e,
            );
        }
        if (200..300).contains(&status) {
            log.successes += 1;
            if status != 200 {
                log.note(
                    "wire.success-200",
                    format!("success answered {status}, not 200"),
                    e,
                );
            }
            match &e.json {
                Some(v) if v.get("api_version") != Some(&Value::from("v1")) => {
                    log.note(
                        "envelope.success",
                        format!("api_version is {}, not \"v1\"", show(v.get("api_version"))),
                        e,
                    );
                }
                Some(v) if !v.get("data").is_some_and(Value::is_object) => {
                    log.note(
                        "envelope.success",
                        format!("data is {}, not an object", show(v.get("data"))),
                        e,
                    );
                }
                Some(_) => {}
                None => log.note(
                    "envelope.success",
                    "a success body that is not JSON".into(),
                    e,
                ),
            }
        }
    }
}

/// A JSON value for a message, shortened.
pub fn show(v: Option<&Value>) -> String {
    match v {
        None => "missing".to_owned(),
        Some(v) => aggpay::util::truncate(&v.to_string(), 80).into_owned(),
    }
}

fn is_http_date(value: &str) -> bool {
    static PARSER: jiff::fmt::rfc2822::DateTimeParser = jiff::fmt::rfc2822::DateTimeParser::new();
    value.trim().ends_with("GMT") && PARSER.parse_timestamp(value.trim()).is_ok()
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrubbing_and_curl() {
        let http = Http::new(
            "http://127.0.0.1:1/",
            "agg_1",
            "topsecret",
            Duration::from_secs(1),
            None,
        );
        let r = Request::get("/keys").q("names", "a b,c");
        assert_eq!(
            http.url(&r),
            "http://127.0.0.1:1/v1/aggregators/agg_1/keys?names=a%20b%2Cc"
        );
        let curl = http.curl(&r);
        assert!(
            curl.contains("<redacted>") && !curl.contains("topsecret"),
            "{curl}"
        );
        let s = http.snippet(br#"{"secret": "other", "x": "topsecret"}"#);
        assert!(!s.contains("other") && !s.contains("topsecret"), "{s}");
        assert!(is_http_date("Wed, 25 Nov 2026 22:40:55 GMT"));
        assert!(!is_http_date("yesterday"));
    }
}

//! Before a tool judges or copies anything: does the setup work?
//!
//! The check reads the aggregator record and the access-key list with the
//! given key. When the server answers either with data, the setup works
//! (whatever else the server gets wrong is for the tool to find). When
//! both are refused or not found in a way that points at the setup, or
//! the server cannot be reached as configured, the check says the likely
//! cause and its fix: the key refused, the aggregator unknown to it, a
//! path prefix that matches nothing (probing the base URL's parents), TLS
//! spoken to a plain-HTTP server or the reverse (probing the other scheme
//! without the key: credentials go only to the configured origin), a
//! certificate not trusted, a redirect. The server's own words are quoted
//! as the server's.
//!
//! Transient answers (429, 502, 503, 504, a reset, a timeout) are waited
//! out within the patience given.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::http::{TlsFailure, TransportFailure};
use crate::syntax::KEY_HEADER;
use crate::text::{Redactor, excerpt};

/// A preflight: the setup to check before a tool judges or writes anything.
#[derive(Debug, Clone)]
pub struct Preflight<'a> {
    /// The base URL, normalised ([`crate::syntax::parse_base_url`]).
    pub base: &'a str,
    /// The aggregator id.
    pub aggregator: &'a str,
    /// The key secret (never shown).
    pub key: &'a str,
    /// A PEM file of CA certificates to trust.
    pub ca_cert: Option<&'a Path>,
    /// Per request.
    pub timeout: Duration,
    /// How long transient failures are waited out, all together.
    pub patience: Duration,
    /// The tool's `User-Agent`.
    pub user_agent: &'a str,
}

/// Why the setup does not work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Cause {
    /// The CA file cannot be used.
    CaFile,
    /// Nothing answers at the host and port.
    Unreachable,
    /// TLS spoken to a plain-HTTP server, or plain HTTP to a TLS one.
    Scheme,
    /// The server's certificate is not trusted or not for its name.
    Certificate,
    /// The key is refused.
    Key,
    /// The aggregator is not found with this key.
    Aggregator,
    /// The base URL's path prefix matches nothing.
    Prefix,
    /// The server redirects elsewhere.
    Redirect,
    /// Only transient failures came back within the patience.
    Transient,
    /// Another refusal.
    Refused,
}

/// A setup that does not work: the cause, and a message with the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The likely cause.
    pub cause: Cause,
    /// What was seen and what to do, fit to print.
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Problem {}

fn problem(cause: Cause, message: impl Into<String>) -> Problem {
    Problem {
        cause,
        message: message.into(),
    }
}

/// An answer: status, `Location`, body.
#[derive(Debug, Clone)]
struct Answer {
    status: u16,
    location: Option<String>,
    body: Vec<u8>,
}

impl Answer {
    fn success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// The API's error code, in either documented form.
    fn code(&self) -> Option<String> {
        let json = self.json()?;
        let code = json
            .pointer("/error/code")
            .or_else(|| json.get("code"))?
            .as_str()?;
        Some(code.to_owned())
    }
}

type Got = Result<Answer, ureq::Error>;

/// What the check of a setup saw of a server that works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Checked {
    /// The time of one request on an open connection (the key list read
    /// after the aggregator record): about one round trip and the
    /// server's own time. `None` when that read was not made.
    pub round_trip: Option<Duration>,
}

/// Checks the setup; `Ok` when the server answers the aggregator's data
/// with the key (or fails in a way only the server can be blamed for).
///
/// # Errors
///
/// The [`Problem`] that keeps the setup from working.
pub fn check(c: &Preflight<'_>) -> Result<Checked, Problem> {
    let agent = agent(c, true)?;
    let mut redactor = Redactor::new();
    redactor.add(c.key);
    let until = Instant::now() + c.patience;
    let record_url = crate::syntax::aggregator_url(c.base, c.aggregator);
    let list_url = format!("{record_url}/keys");
    let record = patient_get(&agent, &record_url, Some(c.key), until);
    let record = match record {
        Ok(a) => a,
        Err(e) => return Err(no_answer(c, &record_url, &e, &redactor)),
    };
    if record.success() {
        // The list on the connection the record opened: a round trip
        // without the connection's own set-up. Its answer is the rules'
        // to judge.
        let sent = Instant::now();
        let round_trip = get(&agent, &list_url, Some(c.key))
            .is_ok()
            .then(|| sent.elapsed());
        return Ok(Checked { round_trip });
    }
    if record.status >= 500 && record.status != 503 {
        return Ok(Checked { round_trip: None });
    }
    if (300..400).contains(&record.status) {
        return Err(problem(
            Cause::Redirect,
            format!(
                "GET {record_url} answered {} redirecting to {}: give the final address as the base URL (the tools never follow a redirect, so that the key goes only where it was meant to)",
                record.status,
                excerpt(record.location.as_deref().unwrap_or("nowhere"), 200)
            ),
        ));
    }
    let list = patient_get(&agent, &list_url, Some(c.key), until)
        .map_err(|e| no_answer(c, &list_url, &e, &redactor))?;
    if list.success() || list.status >= 500 && list.status != 503 {
        return Ok(Checked { round_trip: None });
    }
    if crate::http::is_not_handled_status(record.status)
        || crate::http::is_not_handled_status(list.status)
    {
        return Err(problem(
            Cause::Transient,
            format!(
                "the server kept answering {} for {} s (GET {record_url}): try again later, or give the run more time",
                record.status.max(list.status),
                c.patience.as_secs()
            ),
        ));
    }
    let said = said(&record, &redactor);
    Err(match (record.status, list.status) {
        (401, _) | (_, 401) if record.status != 404 => problem(
            Cause::Key,
            format!(
                "the key was refused for aggregator {agg} ({} on GET {record_url}){said}: either {agg} is not the aggregator the key belongs to, or the key is wrong, inactive or rotated since; check the aggregator id and the key",
                record.status,
                agg = c.aggregator
            ),
        ),
        (403, _) => problem(
            Cause::Key,
            format!(
                "the key is not allowed to read aggregator {} (403 on GET {record_url}){said}: use a key of that aggregator",
                c.aggregator
            ),
        ),
        (404, _) => not_found(c, &agent, &record, &record_url, &said, until),
        (400, _) => problem(
            Cause::Aggregator,
            format!(
                "the server refused the aggregator id {} as malformed (400 on GET {record_url}){said}: check the aggregator id",
                c.aggregator
            ),
        ),
        (status, _) => problem(
            Cause::Refused,
            format!(
                "GET {record_url} answered {status}{said}: the server does not serve the API there with this key; check the base URL, key and aggregator id"
            ),
        ),
    })
}

/// A 404 for the aggregator record: a path prefix that matches nothing
/// (a parent of the base URL answers the API), or an aggregator unknown
/// with this key.
fn not_found(
    c: &Preflight<'_>,
    agent: &ureq::Agent,
    record: &Answer,
    record_url: &str,
    said: &str,
    until: Instant,
) -> Problem {
    let (origin, path) = split_base(c.base);
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    for keep in (0..segments.len()).rev() {
        let parent = format!(
            "{origin}{}",
            segments[..keep]
                .iter()
                .map(|s| format!("/{s}"))
                .collect::<String>()
        );
        let url = crate::syntax::aggregator_url(&parent, c.aggregator);
        // The parent is the same origin: the key may go there.
        if let Ok(a) = patient_get(agent, &url, Some(c.key), until)
            && (a.success() || a.status == 401)
        {
            let dropped = &segments[keep..].join("/");
            return problem(
                Cause::Prefix,
                format!(
                    "nothing serves the API under {} (404 on GET {record_url}), but {parent} does ({} on GET {url}): drop /{dropped} from the base URL (every path already begins with {}/)",
                    c.base,
                    a.status,
                    crate::syntax::AGGREGATORS_ROOT
                ),
            );
        }
    }
    if record.code().as_deref() == Some("error.not_found") {
        return problem(
            Cause::Aggregator,
            format!(
                "aggregator {} was not found with this key (404 on GET {record_url}){said}: check the aggregator id; it must be the one the key belongs to",
                c.aggregator
            ),
        );
    }
    let ends_in_v1 = segments
        .last()
        .is_some_and(|s| s.eq_ignore_ascii_case("v1"));
    let hint = if ends_in_v1 {
        "the base URL ends in /v1, which every path adds again: drop it"
    } else {
        "the base URL must include the service's own path prefix (for example https://host/api), and no /v1"
    };
    problem(
        Cause::Prefix,
        format!(
            "nothing serves the API at {} (404 on GET {record_url}{}){said}: {hint}",
            c.base,
            if record.code().is_some() {
                ""
            } else {
                ", not the API's error form"
            }
        ),
    )
}

/// Why a request got no answer, with the fix; probes the other scheme
/// (without the key) when TLS and plain HTTP may be mixed up.
fn no_answer(c: &Preflight<'_>, url: &str, e: &ureq::Error, redactor: &Redactor) -> Problem {
    let (origin, _) = split_base(c.base);
    let authority = origin.split_once("://").map_or(origin, |(_, a)| a);
    let https = c.base.starts_with("https://");
    let shown = redactor.text(&e.to_string(), 300);
    match (e, crate::http::tls_failure(e)) {
        (ureq::Error::HostNotFound, _) => problem(
            Cause::Unreachable,
            format!(
                "the host of {} cannot be resolved: check the base URL",
                c.base
            ),
        ),
        (e, _) if is_refused(e) => problem(
            Cause::Unreachable,
            format!(
                "nothing accepts connections at {authority} (connection refused): check the base URL's host and port, and that the server runs"
            ),
        ),
        (_, Some(kind)) if https => {
            let plain = format!("http://{}", with_port(authority, 443));
            if other_scheme_answers(c, &plain) {
                return problem(
                    Cause::Scheme,
                    format!(
                        "{authority} speaks plain HTTP, not TLS (GET {url}: {shown}): use {plain}{} as the base URL, or the server's TLS port",
                        split_base(c.base).1
                    ),
                );
            }
            match kind {
                TlsFailure::Untrusted => problem(
                    Cause::Certificate,
                    format!(
                        "the certificate of {authority} is not trusted ({shown}): if it comes from a private CA, give that CA's certificate with --ca-cert PEM (or AGGPAY_CA_CERT)"
                    ),
                ),
                TlsFailure::WrongName => problem(
                    Cause::Certificate,
                    format!(
                        "the certificate of {authority} is for another name ({shown}): use the host name the certificate names"
                    ),
                ),
                TlsFailure::Expired => problem(
                    Cause::Certificate,
                    format!(
                        "the certificate of {authority} has expired or is not valid yet ({shown})"
                    ),
                ),
                TlsFailure::NotTls | TlsFailure::Other => problem(
                    Cause::Scheme,
                    format!(
                        "TLS with {authority} failed ({shown}): check that the port speaks TLS"
                    ),
                ),
            }
        }
        (e, _) if is_timeout(e) => problem(
            Cause::Transient,
            format!(
                "{authority} did not answer within {} s (GET {url}): check the base URL, or give a longer --timeout",
                c.timeout.as_secs_f64()
            ),
        ),
        _ => {
            let tls = format!("https://{}", with_port(authority, 80));
            if !https && other_scheme_answers(c, &tls) {
                return problem(
                    Cause::Scheme,
                    format!(
                        "{authority} speaks TLS, not plain HTTP (GET {url}: {shown}): use {tls}{} as the base URL",
                        split_base(c.base).1
                    ),
                );
            }
            problem(
                Cause::Unreachable,
                format!("no answer from {authority} (GET {url}): {shown}"),
            )
        }
    }
}

/// True when `origin` (another scheme on the same host and port) answers
/// HTTP at all. Sent without the key: it is not the configured origin.
fn other_scheme_answers(c: &Preflight<'_>, origin: &str) -> bool {
    let Ok(agent) = agent(c, false) else {
        return false;
    };
    let url = crate::syntax::aggregator_url(origin, c.aggregator);
    get(&agent, &url, None).is_ok()
}

/// The agent of the check: no redirects, the CA file when given;
/// `verify: false` only for the key-less probe of the other scheme.
fn agent(c: &Preflight<'_>, verify: bool) -> Result<ureq::Agent, Problem> {
    let mut tls = ureq::tls::TlsConfig::builder().disable_verification(!verify);
    if let Some(path) = c.ca_cert {
        let roots =
            crate::http::ca_file(path).map_err(|e| problem(Cause::CaFile, e.to_string()))?;
        tls = tls.root_certs(ureq::tls::RootCerts::new_with_certs(&roots));
    }
    Ok(crate::resolve::agent(
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(c.timeout))
            .timeout_connect(Some(c.timeout.min(Duration::from_secs(10))))
            .max_redirects(0)
            .tls_config(tls.build())
            .user_agent(c.user_agent)
            .build(),
    ))
}

/// The body is read up to this: the check needs an error's code and
/// message, nothing large.
const MAX_BODY: u64 = 1024 * 1024;

fn get(agent: &ureq::Agent, url: &str, key: Option<&str>) -> Got {
    let mut request = agent
        .get(url)
        .header("Accept", "application/json")
        .header("Accept-Encoding", crate::coding::ACCEPTED);
    if let Some(key) = key {
        request = request.header(KEY_HEADER, key);
    }
    let mut response = request.call()?;
    let status = response.status().as_u16();
    let location = response
        .headers()
        .get("location")
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let body = response
        .body_mut()
        .with_config()
        .limit(MAX_BODY)
        .read_to_vec()?;
    let coding = response
        .headers()
        .get("content-encoding")
        .and_then(|v| v.to_str().ok());
    // A body that cannot be decoded is kept as received: the check then
    // says it is not the API's answer, quoting it.
    let body = crate::coding::decode(coding, body.clone(), MAX_BODY).unwrap_or(body);
    Ok(Answer {
        status,
        location,
        body,
    })
}

/// A GET whose transient answers (429, 502, 503, 504) are waited out
/// until `until`; a request with no answer at all (refused, reset, cut
/// short, timed out) is tried three times only (a server restarting, a
/// lost packet, a flaky network): more is a setup that does not answer.
fn patient_get(agent: &ureq::Agent, url: &str, key: Option<&str>, until: Instant) -> Got {
    let mut unanswered = 0;
    for retry in 1.. {
        let got = get(agent, url, key);
        let transient = match &got {
            Ok(a) => crate::http::is_transient_status(a.status),
            Err(ureq::Error::HostNotFound) => false,
            Err(e) if crate::http::is_tls(e) => false,
            Err(e) if TransportFailure::of(e).is_transient() => {
                unanswered += 1;
                unanswered < 3
            }
            // A protocol error (bytes that are not HTTP, a TLS port spoken
            // to in plain text) says the same each time.
            Err(_) => false,
        };
        let left = until.saturating_duration_since(Instant::now());
        if !transient || left.is_zero() {
            return got;
        }
        // The tools' one schedule: capped exponential backoff with full
        // jitter, so that tools started together do not knock in step.
        let wait = crate::backoff::full_jitter(
            Duration::from_millis(200),
            Duration::from_secs(4),
            retry,
            crate::backoff::random(),
        );
        std::thread::sleep(wait.min(left));
    }
    unreachable!("the loop returns before its counter runs out")
}

fn is_timeout(e: &ureq::Error) -> bool {
    TransportFailure::of(e) == TransportFailure::Timeout
}

fn is_refused(e: &ureq::Error) -> bool {
    TransportFailure::of(e) == TransportFailure::Refused
}

/// ` (the server said: "…")` from an error body, in the server's words,
/// redacted and escaped; empty when the body says nothing.
fn said(answer: &Answer, redactor: &Redactor) -> String {
    let words = match answer.json() {
        Some(json) => json
            .pointer("/error/message")
            .or_else(|| json.get("message"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        None if answer.body.is_empty() => None,
        None => Some(String::from_utf8_lossy(&answer.body).into_owned()),
    };
    match words {
        Some(w) if !w.trim().is_empty() => {
            format!("; the server said: \"{}\"", redactor.text(w.trim(), 160))
        }
        _ => String::new(),
    }
}

/// `scheme://authority` and the path of a base URL.
fn split_base(base: &str) -> (&str, &str) {
    let after = base.find("://").map_or(0, |i| i + 3);
    match base[after..].find('/') {
        Some(i) => base.split_at(after + i),
        None => (base, ""),
    }
}

/// `authority` with `default` as its port when it names none.
fn with_port(authority: &str, default: u16) -> String {
    let has_port = match authority.rfind(':') {
        Some(i) => !authority[i..].contains(']'),
        None => false,
    };
    if has_port {
        authority.to_owned()
    } else {
        format!("{authority}:{default}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bases_split_into_origin_and_path() {
        assert_eq!(split_base("http://h:1/api/v1"), ("http://h:1", "/api/v1"));
        assert_eq!(split_base("https://h"), ("https://h", ""));
        assert_eq!(with_port("h", 443), "h:443");
        assert_eq!(with_port("h:8", 443), "h:8");
        assert_eq!(with_port("[::1]", 80), "[::1]:80");
        assert_eq!(with_port("[::1]:9", 80), "[::1]:9");
    }

    #[test]
    fn the_servers_words_are_quoted_redacted() {
        let mut r = Redactor::new();
        r.add("k3y");
        let a = Answer {
            status: 401,
            location: None,
            body: br#"{"api_version":"v1","error":{"code":"error.unauthorized_access","message":"bad key k3y\u001b"}}"#.to_vec(),
        };
        let s = said(&a, &r);
        assert!(
            s.starts_with("; the server said: \"bad key <redacted>"),
            "{s}"
        );
        assert!(!s.contains('\u{1b}'), "{s}");
        assert_eq!(a.code().as_deref(), Some("error.unauthorized_access"));
    }
}

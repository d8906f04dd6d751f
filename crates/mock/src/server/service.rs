//! One request: the control endpoints, latency and chaos, the body and
//! its limits, then the answer with the wire faults applied.

use std::convert::Infallible;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming as IncomingBody;
use hyper::header::{
    ALLOW, CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, DATE, HeaderValue, RETRY_AFTER,
};
use hyper::{Request, Response};

use super::body::MockBody;
use super::scanner::Framing;
use super::state::{Busy, ConnState};
use crate::chaos::Mishap;
use crate::config::Limits;
use crate::fault::Fault;
use crate::legal::Legal;
use crate::reply::{self, Reply};
use crate::router::{App, Incoming};

/// How the answer goes out besides its bytes.
#[derive(Debug, Default)]
struct Delivery {
    /// Close the connection after this answer.
    close: bool,
    /// `Retry-After` in seconds.
    retry_after: Option<u64>,
    /// A chaos mishap that breaks the body.
    mishap: Option<Mishap>,
}

/// Answers one request. Never fails: every problem is an answer.
pub(super) async fn answer(
    request: Request<IncomingBody>,
    app: Arc<App>,
    conn: Arc<ConnState>,
    limits: Limits,
) -> Result<Response<MockBody>, Infallible> {
    let busy = conn.begin();
    let framing = conn.next_framing();
    let key_name = conn.next_key_name();
    let (parts, body) = request.into_parts();
    let target = parts
        .uri
        .path_and_query()
        .map_or_else(|| parts.uri.path().to_owned(), |p| p.as_str().to_owned());
    if let Some(reply) = app.control(parts.method.as_str(), &target) {
        return Ok(respond(&app, reply, Delivery::default(), &conn, busy, None));
    }
    let method = parts.method.as_str().to_owned();
    let gzip = app.legal.has(Legal::CodedBodies) && accepts_gzip(&parts.headers);
    let (reply, delivery) = match admit(&app, &parts, framing, limits).await {
        Err(refused) => refused,
        Ok(mut delivery) => match read_body(body, limits).await {
            Err(reply) => {
                delivery.close = true;
                (reply, delivery)
            }
            Ok(body) => (
                handle(&app, &parts, &target, &body, key_name.as_deref()),
                delivery,
            ),
        },
    };
    Ok(respond(
        &app,
        reply,
        delivery,
        &conn,
        busy,
        Some((&method, &target, gzip)),
    ))
}

/// Whether a request's `Accept-Encoding` admits gzip: it names none (any
/// coding is then acceptable, RFC 9110 section 12.5.3), or names gzip or
/// `*` without `q=0`.
fn accepts_gzip(headers: &hyper::HeaderMap) -> bool {
    let mut named = false;
    let mut star = None;
    for value in headers.get_all(hyper::header::ACCEPT_ENCODING) {
        named = true;
        for item in value.to_str().unwrap_or("").split(',') {
            let mut parts = item.split(';').map(str::trim);
            let coding = parts.next().unwrap_or("").to_ascii_lowercase();
            let refused = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q == 0.0)
            });
            match coding.as_str() {
                "gzip" | "x-gzip" => return !refused,
                "*" => star = Some(!refused),
                _ => {}
            }
        }
    }
    !named || star == Some(true)
}

/// A list body whose `data` names `count` twice: first as a string, then
/// as it was (`duplicate-count`: a parser that keeps the first member
/// sees a string where API.md states an integer).
fn count_twice(body: &[u8]) -> Vec<u8> {
    let count = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v["data"]["count"].as_u64());
    let (Some(count), Some(at)) = (count, find(body, b"\"data\":{")) else {
        return body.to_vec();
    };
    let at = at + b"\"data\":{".len();
    let mut out = body[..at].to_vec();
    out.extend_from_slice(format!("\"count\":\"{count}\",").as_bytes());
    out.extend_from_slice(&body[at..]);
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// `body` coded with gzip.
fn gzip(body: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    // Writing to a Vec cannot fail.
    let _ = encoder.write_all(body);
    encoder.finish().unwrap_or_default()
}

/// Before the body is read: the latency, the chaos, the framing and the
/// declared length. How to deliver the answer, or the answer at once.
async fn admit(
    app: &App,
    parts: &hyper::http::request::Parts,
    framing: Framing,
    limits: Limits,
) -> Result<Delivery, (Reply, Delivery)> {
    let n = app.next_request();
    let latency = app.latency.delay(app.data.seed, n);
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let mut delivery = Delivery::default();
    match app.chaos.decide(app.data.seed, n) {
        Some(Mishap::Status(status)) => {
            delivery.close = true;
            return Err((reply::chaos_status(status), delivery));
        }
        Some(Mishap::TooMany) => {
            delivery.close = true;
            delivery.retry_after = Some(app.chaos.retry_after_secs());
            return Err((reply::too_many_requests(), delivery));
        }
        // A lost write is a reset, after the write is carried out.
        Some(Mishap::LostWrite) if parts.method != hyper::Method::GET => {
            delivery.mishap = Some(Mishap::Reset);
        }
        Some(Mishap::LostWrite) => {}
        mishap => delivery.mishap = mishap,
    }
    if framing == Framing::Ambiguous {
        delivery.close = true;
        let reply = reply::bad_request("Content-Length together with Transfer-Encoding");
        return Err((reply, delivery));
    }
    delivery.close = framing == Framing::Chunked;
    let declared = parts
        .headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limits.max_body_bytes) {
        // Refused unread: the connection closes instead of draining it.
        delivery.close = true;
        let reply = reply::bad_request(format!("body larger than {} bytes", limits.max_body_bytes));
        return Err((reply, delivery));
    }
    Ok(delivery)
}

/// The request body, within its size and time limits; or the 400 that
/// says which was broken.
async fn read_body(body: IncomingBody, limits: Limits) -> Result<Bytes, Reply> {
    let limit = usize::try_from(limits.max_body_bytes).unwrap_or(usize::MAX);
    let read = tokio::time::timeout(
        limits.body_read_timeout,
        Limited::new(body, limit).collect(),
    );
    match read.await {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(_)) => Err(reply::bad_request(format!(
            "body larger than {} bytes, or broken",
            limits.max_body_bytes
        ))),
        Err(_) => Err(reply::bad_request(format!(
            "body not received within {} s",
            limits.body_read_timeout.as_secs_f64()
        ))),
    }
}

/// The API's answer to a whole request.
/// `key_name`: the key header's name as the request spelled it.
fn handle(
    app: &App,
    parts: &hyper::http::request::Parts,
    target: &str,
    body: &[u8],
    key_name: Option<&str>,
) -> Reply {
    let spelled_exactly = key_name == Some(aggpay_internal::syntax::KEY_HEADER);
    let key = parts
        .headers
        .get(aggpay_internal::syntax::KEY_HEADER)
        .filter(|_| spelled_exactly || !app.faults.has(Fault::KeyHeaderCaseSensitive))
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let incoming = Incoming {
        method: parts.method.as_str(),
        url: target,
        key: key.as_deref(),
        body,
    };
    // A panic is a bug, but it must cost one request, not the connection.
    catch_unwind(AssertUnwindSafe(|| app.handle(&incoming)))
        .unwrap_or_else(|_| reply::internal("the mock failed to answer this request"))
}

/// The response: the reply with the wire faults, and the chaos body.
fn respond(
    app: &App,
    mut reply: Reply,
    delivery: Delivery,
    conn: &Arc<ConnState>,
    busy: Busy,
    request: Option<(&str, &str, bool)>,
) -> Response<MockBody> {
    let faults = &app.faults;
    let success = (200..300).contains(&reply.status);
    if !success && faults.has(Fault::TextErrors) {
        reply.body = format!("error {}", reply.status).into_bytes();
        reply.content_type = "text/plain";
    }
    if success && faults.has(Fault::ContentTypeText) {
        reply.content_type = "text/plain";
    }
    if success && faults.has(Fault::Success201) && reply.status == 200 {
        reply.status = 201;
    }
    let refunds = request.is_some_and(|(_, target, _)| {
        target
            .split('?')
            .next()
            .is_some_and(|p| p.ends_with("/refunds"))
    });
    if success && refunds && faults.has(Fault::RefundsTextPlain) {
        reply.content_type = "text/plain; charset=utf-8";
    }
    if success && refunds && faults.has(Fault::DuplicateCount) {
        reply.body = count_twice(&reply.body);
    }
    let mut coded = false;
    if let Some((method, target, gzip_it)) = request {
        app.record(method, target, &reply);
        if gzip_it && !reply.body.is_empty() {
            reply.body = gzip(&reply.body);
            coded = true;
        }
    }
    let body = match delivery.mishap {
        Some(Mishap::Reset) => MockBody::cut(reply.body, Some(conn.clone()), Some(busy)),
        Some(Mishap::Truncate) => MockBody::cut(reply.body, None, Some(busy)),
        Some(Mishap::Slow) => MockBody::slow(reply.body, app.chaos.slow_duration(), Some(busy)),
        _ if faults.has(Fault::Chunked) => MockBody::chunked(reply.body, Some(busy)),
        _ => MockBody::whole(reply.body, Some(busy)),
    };
    let mut response = Response::new(body);
    *response.status_mut() = hyper::StatusCode::from_u16(reply.status)
        .unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    let content_type =
        if reply.content_type == "application/json" && app.legal.has(Legal::JsonCharset) {
            "application/json; charset=utf-8"
        } else {
            reply.content_type
        };
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    if coded {
        headers.insert(
            hyper::header::CONTENT_ENCODING,
            HeaderValue::from_static("gzip"),
        );
    }
    if app.legal.has(Legal::ExtraHeaders) {
        headers.insert("x-request-id", HeaderValue::from(app.next_request_id()));
        headers.insert("cache-control", HeaderValue::from_static("no-store"));
        headers.insert("vary", HeaderValue::from_static("Accept-Encoding"));
    }
    if let Some(allow) = reply.allow {
        headers.insert(ALLOW, HeaderValue::from_static(allow));
    }
    if let Some(after) = delivery.retry_after {
        headers.insert(RETRY_AFTER, HeaderValue::from(after));
    }
    if delivery.close || app.legal.has(Legal::ConnectionClose) {
        headers.insert(CONNECTION, HeaderValue::from_static("close"));
    }
    if faults.has(Fault::BadDateHeader) {
        headers.insert(DATE, HeaderValue::from_static("yesterday, around noon"));
    }
    response
}

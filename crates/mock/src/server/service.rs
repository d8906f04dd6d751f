//! One request: the control endpoints, latency and chaos, the body and
//! its limits, then the answer (and the write its handler deferred, after
//! a pause) with the wire faults applied (and what the byte layer must do
//! to it, see `bytes`).

use std::convert::Infallible;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming as IncomingBody;
use hyper::header::{
    ALLOW, CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, DATE, ETAG, HeaderValue, IF_NONE_MATCH,
    RETRY_AFTER,
};
use hyper::{Request, Response};

use super::body::MockBody;
use super::byte_layer::{self, HeadEdit, HeadRewrite};
use super::scanner::Framing;
use super::state::{Busy, ConnState};
use crate::chaos::Mishap;
use crate::config::Limits;
use crate::fault::Fault;
use crate::legal::Legal;
use crate::reply::{self, Reply};
use crate::router::{App, Deferred, Incoming, Op};
use crate::state::KeysDocument;

/// How long a rotation under `rotations-lost-update` holds the keys
/// document it read before writing it back whole: long enough for a
/// rotation sent at the same time to read the same document.
const LOST_UPDATE_PAUSE: std::time::Duration = std::time::Duration::from_millis(150);

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

/// What the answer's shape depends on of its request.
struct Asked<'a> {
    method: &'a str,
    /// Path and query, as sent.
    target: &'a str,
    /// The operation the target names.
    op: Option<Op>,
    /// A request of the API (not of the control endpoints): recorded in
    /// the journal, coded when `gzip`.
    api: bool,
    gzip: bool,
    http10: bool,
    headers: &'a hyper::HeaderMap,
}

impl Asked<'_> {
    fn at(&self, ops: &[Op]) -> bool {
        self.op.is_some_and(|op| ops.contains(&op))
    }
}

/// The rewrite of request heads the server's faults ask for, run by the
/// scanner before hyper reads a head: `close-ignored` takes the `close`
/// option out of requests to the key list and the webhook list.
pub(super) fn head_rewrite(app: &Arc<App>) -> Option<HeadRewrite> {
    if !app.faults.has(Fault::CloseIgnored) {
        return None;
    }
    let app = app.clone();
    Some(HeadRewrite::new(move |head| {
        let target = byte_layer::target_of(head);
        matches!(app.op_of(target), Some(Op::Keys | Op::Webhooks))
            .then(|| byte_layer::without_close(head))
            .flatten()
    }))
}

/// Answers one request. Never fails: every problem is an answer.
pub(super) async fn answer(
    request: Request<IncomingBody>,
    app: Arc<App>,
    conn: Arc<ConnState>,
    limits: Limits,
) -> Result<Response<MockBody>, Infallible> {
    let busy = conn.begin();
    let seen = conn.next_head();
    let (parts, body) = request.into_parts();
    let target = parts
        .uri
        .path_and_query()
        .map_or_else(|| parts.uri.path().to_owned(), |p| p.as_str().to_owned());
    let mut asked = Asked {
        method: parts.method.as_str(),
        target: &target,
        op: app.op_of(&target),
        api: false,
        gzip: false,
        http10: parts.version == hyper::Version::HTTP_10,
        headers: &parts.headers,
    };
    if app.faults.has(Fault::PipelineDropsSecond)
        && asked.at(&[Op::Qrs, Op::Ledger])
        && conn.arrived_early(seen.started)
    {
        // Dropped: no answer, the connection open and silent until its
        // usual idle timeout.
        drop(busy);
        tokio::time::sleep(limits.idle_timeout).await;
        conn.ask_to_close();
        return std::future::pending().await;
    }
    if let Some(reply) = app.control(parts.method.as_str(), &target) {
        return Ok(respond(
            &app,
            reply,
            Delivery::default(),
            &conn,
            busy,
            &asked,
        ));
    }
    asked.api = true;
    asked.gzip = app.legal.has(Legal::CodedBodies) && accepts_gzip(&parts.headers);
    if asked.http10 && app.legal.has(Legal::Http10Refused) {
        let delivery = Delivery {
            close: true,
            ..Delivery::default()
        };
        let reply = reply::version_not_supported();
        return Ok(respond(&app, reply, delivery, &conn, busy, &asked));
    }
    let (reply, delivery) = match admit(&app, &parts, seen.framing, limits).await {
        Err(refused) => refused,
        Ok(mut delivery) => match read_body(body, limits).await {
            Err(reply) => {
                delivery.close = true;
                (reply, delivery)
            }
            Ok(body) => {
                let (reply, deferred) = handle(
                    &app,
                    &parts,
                    &target,
                    &body,
                    seen.key_name.as_deref(),
                    seen.framing == Framing::Chunked,
                    conn.id,
                );
                if let Some(keys) = deferred {
                    // Asleep on the timer, not on the worker: other
                    // requests, another rotation among them, go on.
                    tokio::time::sleep(LOST_UPDATE_PAUSE).await;
                    app.state.put_keys(keys);
                }
                (reply, delivery)
            }
        },
    };
    Ok(respond(&app, reply, delivery, &conn, busy, &asked))
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
        // A lost write is a reset, after the write is carried out (a
        // HEAD is a read).
        Some(Mishap::LostWrite)
            if !matches!(parts.method, hyper::Method::GET | hyper::Method::HEAD) =>
        {
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

/// The API's answer to a whole request, and the write its handler left
/// for after a pause ([`Deferred`]).
/// `key_name`: the key header's name as the request spelled it.
fn handle(
    app: &App,
    parts: &hyper::http::request::Parts,
    target: &str,
    body: &[u8],
    key_name: Option<&str>,
    chunked: bool,
    conn: u64,
) -> (Reply, Option<KeysDocument>) {
    let deferred = Deferred::default();
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
        chunked,
        conn,
        deferred: &deferred,
    };
    // A panic is a bug, but it must cost one request, not the connection.
    let reply = catch_unwind(AssertUnwindSafe(|| app.handle(&incoming)))
        .unwrap_or_else(|_| reply::internal("the mock failed to answer this request"));
    (reply, deferred.take())
}

/// The response: the reply with the wire faults, validators, and the
/// chaos body; and what the byte layer does to it, queued on `conn`.
fn respond(
    app: &App,
    mut reply: Reply,
    delivery: Delivery,
    conn: &Arc<ConnState>,
    busy: Busy,
    asked: &Asked<'_>,
) -> Response<MockBody> {
    let faults = &app.faults;
    let nth = conn.count_answer();
    let success = (200..300).contains(&reply.status);
    if !success && faults.has(Fault::TextErrors) {
        reply.body = format!("error {}", reply.status).into_bytes();
        reply.content_type = "text/plain";
    }
    if success && faults.has(Fault::ContentTypeText) {
        reply.content_type = "text/plain";
    }
    // error.bad_request under another client-error number: everywhere
    // (the fault, an observation), or where the operation's Errors line
    // does not list 400 (the legal choice: API.md shows no number).
    let unlisted = !asked.at(&[Op::Batches, Op::Transactions, Op::ReportExports]);
    if reply.status == 400
        && (faults.has(Fault::BadRequest422)
            || (unlisted && app.legal.has(Legal::BadRequest422Unlisted)))
    {
        reply.status = 422;
    }
    if success && faults.has(Fault::Success201) && reply.status == 200 {
        reply.status = 201;
    }
    let refunds = asked.api
        && asked
            .target
            .split('?')
            .next()
            .is_some_and(|p| p.ends_with("/refunds"));
    if success && refunds && faults.has(Fault::RefundsTextPlain) {
        reply.content_type = "text/plain; charset=utf-8";
    }
    if success && refunds && faults.has(Fault::DuplicateCount) {
        reply.body = count_twice(&reply.body);
    }
    let to_head = asked.method == "HEAD";
    let mut coded = None;
    if asked.gzip && !reply.body.is_empty() {
        coded = Some(gzip(&reply.body));
    }
    let etag = validators::etag(app, asked, &reply, coded.as_deref());
    if let Some(tag) = &etag
        && validators::none_match(asked.headers, tag)
    {
        reply.status = 304;
        reply.body.clear();
        coded = None;
    }
    if asked.api {
        if to_head {
            // What a HEAD is told: the GET's head, no body.
            let told = Reply {
                body: Vec::new(),
                ..reply.clone()
            };
            app.record(asked.method, asked.target, &told);
        } else {
            app.record(asked.method, asked.target, &reply);
        }
    }
    let not_modified = reply.status == 304;
    let content_type = reply.content_type;
    let gzipped = coded.is_some();
    let body = coded.unwrap_or(reply.body);
    // A re-chunking proxy chunks what HTTP/1.1 lets it: an answer to
    // HTTP/1.0 cannot be chunked (hyper would end it with the close).
    let chunk_it = faults.has(Fault::Chunked)
        || (faults.has(Fault::ChunkedWithLength)
            && asked.at(&[Op::Qrs, Op::Webhooks])
            && !to_head
            && !asked.http10);
    let edit = HeadEdit {
        interim: if asked.http10 {
            (faults.has(Fault::ContinueToHttp10)
                && asked.at(&[Op::Rotate, Op::ReportExports, Op::Keys]))
            .then_some(HeadEdit::CONTINUE)
        } else {
            app.legal
                .has(Legal::EarlyHints)
                .then_some(HeadEdit::EARLY_HINTS)
        },
        bare_lf: faults.has(Fault::BareLfHeads) && asked.at(&[Op::Refunds, Op::RailMerchants]),
        length_when_chunked: (faults.has(Fault::ChunkedWithLength)
            && asked.at(&[Op::Qrs, Op::Webhooks]))
        .then_some(body.len()),
        trailing: (faults.has(Fault::HeadWithBody)
            && to_head
            && asked.at(&[Op::Batches, Op::Merchants]))
        .then(|| body.clone()),
        to_head,
        title_case: app.legal.has(Legal::TitleCaseFields),
    };
    let body = match delivery.mishap {
        Some(Mishap::Reset) => MockBody::cut(body, Some(conn.clone()), Some(busy)),
        Some(Mishap::Truncate) => MockBody::cut(body, None, Some(busy)),
        Some(Mishap::Slow) => MockBody::slow(body, app.chaos.slow_duration(), Some(busy)),
        _ if chunk_it => MockBody::chunked(body, Some(busy)),
        _ => MockBody::whole(body, Some(busy)),
    };
    let mut response = Response::new(body);
    *response.status_mut() = hyper::StatusCode::from_u16(reply.status)
        .unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    let content_type = if content_type == "application/json" && app.legal.has(Legal::JsonCharset) {
        "application/json; charset=utf-8"
    } else {
        content_type
    };
    if !not_modified {
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
        if faults.has(Fault::ContentTypeTwice) && asked.at(&[Op::Merchants, Op::Aggregator]) {
            headers.append(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        }
    }
    if gzipped {
        headers.insert(
            hyper::header::CONTENT_ENCODING,
            HeaderValue::from_static("gzip"),
        );
    }
    if let Some(tag) = etag.and_then(|t| HeaderValue::from_str(&t).ok()) {
        headers.insert(ETAG, tag);
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
    let capped = app.legal.has(Legal::RequestCap) && nth >= 3;
    if delivery.close || capped || app.legal.has(Legal::ConnectionClose) {
        headers.insert(CONNECTION, HeaderValue::from_static("close"));
    }
    let skew = if app.legal.has(Legal::DateBehind) {
        -20
    } else {
        0
    };
    if faults.has(Fault::DateAhead) && asked.at(&[Op::Ledger, Op::Alias]) {
        headers.insert(DATE, http_date(skew + 5 * 3600));
    } else if faults.has(Fault::DateTwice) && asked.at(&[Op::Batches, Op::Keys]) {
        headers.insert(DATE, http_date(skew));
        headers.append(DATE, http_date(skew - 1));
    } else if skew != 0 {
        headers.insert(DATE, http_date(skew));
    }
    if faults.has(Fault::BadDateHeader) {
        headers.insert(DATE, HeaderValue::from_static("yesterday, around noon"));
    }
    conn.push_edit(edit);
    response
}

/// An HTTP date (IMF-fixdate), `offset` seconds from now.
fn http_date(offset: i64) -> HeaderValue {
    let at = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(offset);
    let text = jiff::fmt::rfc2822::DateTimePrinter::new()
        .timestamp_to_rfc9110_string(&at)
        .unwrap_or_default();
    HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// Entity tags: the legal choice `etags` and the fault
/// `etag-without-secrets`.
mod validators {
    use super::{Asked, Fault, HeaderValue, IF_NONE_MATCH, Legal, Op, Reply};
    use crate::router::App;

    /// The strong ETag of a GET's (or HEAD's) success answer, if the
    /// server gives one: over the body as sent (`coded`, else `reply`'s),
    /// or over the body without its keys' secrets at the key list and
    /// the aggregator read under `etag-without-secrets`.
    pub(super) fn etag(
        app: &App,
        asked: &Asked<'_>,
        reply: &Reply,
        coded: Option<&[u8]>,
    ) -> Option<String> {
        let read = matches!(asked.method, "GET" | "HEAD");
        if !asked.api || !read || !(200..300).contains(&reply.status) {
            return None;
        }
        if app.faults.has(Fault::EtagWithoutSecrets) && asked.at(&[Op::Keys, Op::Aggregator]) {
            let mut value = serde_json::from_slice::<serde_json::Value>(&reply.body).ok()?;
            drop_secrets(&mut value);
            return Some(tag(&serde_json::to_vec(&value).ok()?));
        }
        app.legal
            .has(Legal::Etags)
            .then(|| tag(coded.unwrap_or(&reply.body)))
    }

    /// Whether the request's `If-None-Match` matches `etag` (RFC 9110
    /// section 13.1.2: `*`, or any listed tag by weak comparison).
    pub(super) fn none_match(headers: &hyper::HeaderMap, etag: &str) -> bool {
        headers
            .get_all(IF_NONE_MATCH)
            .iter()
            .filter_map(|v: &HeaderValue| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .any(|t| t == "*" || t.strip_prefix("W/").unwrap_or(t) == etag)
    }

    /// `value` without its keys' secrets, nor their `updated_at`, which
    /// a rotation changes with the secret (a tag that moved with it would
    /// show the rotation).
    fn drop_secrets(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(fields) => {
                if fields.remove("secret").is_some() {
                    fields.remove("updated_at");
                }
                fields.values_mut().for_each(drop_secrets);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(drop_secrets),
            _ => {}
        }
    }

    /// A strong entity tag of `bytes`: their length and 64-bit FNV-1a.
    fn tag(bytes: &[u8]) -> String {
        let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        format!("\"{:x}-{hash:016x}\"", bytes.len())
    }
}

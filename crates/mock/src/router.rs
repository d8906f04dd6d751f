//! The route table and the pipeline every request goes through: route,
//! method, key, aggregator, path id, query; then the handler of its
//! resource family (`handlers`) and the body faults.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use aggpay_internal::syntax;
use serde_json::value::RawValue;

use crate::chaos::{Chaos, Latency};
use crate::config::MockConfig;
use crate::data::{Dataset, View};
use crate::fault::{Fault, Faults};
use crate::legal::{Choices, Legal};
use crate::query::{Query, percent_decode};
use crate::reply::{self, Reply};
use crate::state::State;

/// Everything one request needs to be answered.
#[derive(Debug)]
pub(crate) struct Incoming<'a> {
    pub(crate) method: &'a str,
    /// Path and query, as sent.
    pub(crate) url: &'a str,
    pub(crate) key: Option<&'a str>,
    pub(crate) body: &'a [u8],
    /// The body came `Transfer-Encoding: chunked` (the fault
    /// `chunked-body-empty` reads it as empty).
    pub(crate) chunked: bool,
    /// The connection it came on (`export-body-pooled` keeps a pooled
    /// body per connection, as a connection's decoder buffer would).
    pub(crate) conn: u64,
    /// Where a handler leaves a write for after a pause.
    pub(crate) deferred: &'a Deferred,
}

/// A write a handler leaves to the service, which carries it out after a
/// pause and before the answer goes out: handlers are synchronous, and a
/// pause in one would block a worker thread. Under
/// `rotations-lost-update`, the keys document a rotation read whole,
/// written back whole.
#[derive(Debug, Default)]
pub(crate) struct Deferred(Mutex<Option<crate::state::KeysDocument>>);

impl Deferred {
    /// Leaves `keys` to be written back after the pause.
    pub(crate) fn put_keys(&self, keys: crate::state::KeysDocument) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(keys);
    }

    /// The write left, if any.
    pub(crate) fn take(&self) -> Option<crate::state::KeysDocument> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

/// The server's shared view: read-only data, locked state, settings.
#[derive(Debug)]
pub(crate) struct App {
    pub(crate) data: Dataset,
    pub(crate) state: State,
    pub(crate) prefix: String,
    pub(crate) faults: Faults,
    pub(crate) legal: Choices,
    /// Answers served so far (the changing field of `extra-fields`).
    served: AtomicU64,
    pub(crate) chaos: Chaos,
    pub(crate) latency: Latency,
    pub(crate) live: bool,
    /// Requests answered so far: chaos and latency follow their number.
    requests: AtomicU64,
    /// The batch rows of the fixed dataset, serialized once: the batch
    /// list is the hottest page of every client.
    pub(crate) batch_rows: Option<Vec<Box<RawValue>>>,
    /// The last answers, with `MockConfig::journal`.
    journal: Option<Mutex<Journal>>,
    /// Answers kept for a while under the `lookup-cache-ignores-query` and
    /// `rail-merchant-list-cache` faults: key, when kept, answer.
    kept: Mutex<Vec<(String, Instant, Reply)>>,
}

/// How long a kept answer (a lookup's, the rail-merchant list's) is
/// served again.
const KEPT_FOR: Duration = Duration::from_secs(5);

/// The last answers, up to a capacity.
#[derive(Debug)]
struct Journal {
    capacity: usize,
    served: VecDeque<Served>,
}

/// One answer of the mock, kept by [`MockConfig::journal`]: the request's
/// method and target (path and query), and what was answered before the
/// transport (chaos) had its say.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Served {
    /// The request's method.
    pub method: String,
    /// The request's path and query, as sent.
    pub target: String,
    /// The status answered.
    pub status: u16,
    /// The Content-Type answered.
    pub content_type: String,
    /// The body answered. It holds key secrets in clear where the API
    /// returns them: `Debug` shows only its length.
    pub body: Vec<u8>,
}

impl std::fmt::Debug for Served {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Served")
            .field("method", &self.method)
            .field("target", &self.target)
            .field("status", &self.status)
            .field("content_type", &self.content_type)
            .field("body", &format_args!("<{} bytes>", self.body.len()))
            .finish()
    }
}

/// Batches whose rows are serialized up front (about 300 bytes each).
const CACHED_BATCHES: u64 = 100_000;

impl App {
    pub(crate) fn new(data: Dataset, state: State, config: &MockConfig) -> Self {
        let batch_rows = (!config.live && data.sizes.batches <= CACHED_BATCHES).then(|| {
            (0..data.sizes.batches)
                .filter_map(|i| serde_json::value::to_raw_value(&data.batch(i)).ok())
                .collect()
        });
        Self {
            prefix: config.path_prefix.trim_end_matches('/').to_owned(),
            faults: config.faults.clone(),
            legal: config.legal.clone(),
            served: AtomicU64::new(0),
            chaos: config.chaos.clone(),
            latency: config.latency,
            live: config.live,
            requests: AtomicU64::new(0),
            batch_rows,
            data,
            state,
            journal: config.journal.map(|capacity| {
                Mutex::new(Journal {
                    capacity,
                    served: VecDeque::new(),
                })
            }),
            kept: Mutex::new(Vec::new()),
        }
    }

    /// Keeps an answer in the journal, when there is one.
    pub(crate) fn record(&self, method: &str, target: &str, reply: &Reply) {
        let Some(journal) = &self.journal else { return };
        let mut journal = journal.lock().unwrap_or_else(PoisonError::into_inner);
        if journal.served.len() == journal.capacity {
            journal.served.pop_front();
        }
        journal.served.push_back(Served {
            method: method.to_owned(),
            target: target.to_owned(),
            status: reply.status,
            content_type: reply.content_type.to_owned(),
            body: reply.body.clone(),
        });
    }

    /// The journal, oldest first.
    pub(crate) fn journal(&self) -> Vec<Served> {
        self.journal.as_ref().map_or_else(Vec::new, |j| {
            let journal = j.lock().unwrap_or_else(PoisonError::into_inner);
            journal.served.iter().cloned().collect()
        })
    }

    /// The dataset as a request sees it now.
    pub(crate) fn view(&self) -> View<'_> {
        if self.live {
            View::live(&self.data, self.state.tick())
        } else {
            View::fixed(&self.data)
        }
    }

    /// Advances live data; nothing moves without it.
    pub(crate) fn advance(&self, steps: u64) -> u64 {
        if self.live {
            self.state.advance(steps)
        } else {
            0
        }
    }

    /// The number of the next API request.
    pub(crate) fn next_request(&self) -> u64 {
        self.requests.fetch_add(1, Ordering::Relaxed)
    }

    /// The control endpoints of live data, outside `/v1`:
    /// `POST {base}/_mock/advance[?steps=N]` and `GET {base}/_mock/live`.
    /// `None` for any other request (and for every request without live
    /// data, so that they get the API's 404).
    pub(crate) fn control(&self, method: &str, target: &str) -> Option<Reply> {
        if !self.live {
            return None;
        }
        let rest = target.strip_prefix(self.prefix.as_str())?;
        let (path, raw_query) = rest.split_once('?').unwrap_or((rest, ""));
        let state = |step: u64| {
            reply::ok_raw(&serde_json::json!({
                "step": step,
                "batches": self.view().batch_count(),
            }))
        };
        match (method, path) {
            ("POST", "/_mock/advance") => {
                let steps = match Query::parse(raw_query).and_then(|q| q.count("steps")) {
                    Ok(steps) => steps.unwrap_or(1).min(1_000),
                    Err(e) => return Some(reply::bad_request(e)),
                };
                Some(state(self.advance(steps)))
            }
            ("GET", "/_mock/live") => Some(state(self.state.tick())),
            (_, "/_mock/advance") => Some(reply::method_not_allowed("POST")),
            (_, "/_mock/live") => Some(reply::method_not_allowed("GET")),
            _ => None,
        }
    }

    /// The number of the latest answer (the `X-Request-Id` of
    /// `extra-headers`).
    pub(crate) fn next_request_id(&self) -> u64 {
        self.served.load(Ordering::Relaxed)
    }

    /// Answers one request, with the body faults applied.
    pub(crate) fn handle(&self, req: &Incoming<'_>) -> Reply {
        let mut reply = self.answer(req);
        if req.method == "POST" && reply.status == 200 {
            if self.legal.has(Legal::Created201) {
                reply.status = 201;
            } else if self.legal.has(Legal::Export202) {
                reply.status = 202;
            }
        }
        let reply = if self.faults.is_empty() {
            reply
        } else {
            reply::with_faults(reply, &self.faults, later_page(req.url))
        };
        let served = self.served.fetch_add(1, Ordering::Relaxed);
        reply::with_legal(reply, &self.legal, served)
    }

    /// The faithful answer. Order: route (404/405), key (401), aggregator
    /// (400/401), parameters (400), resource (404).
    fn answer(&self, req: &Incoming<'_>) -> Reply {
        let (path, raw_query) = req.url.split_once('?').unwrap_or((req.url, ""));
        let Some(path) = path.strip_prefix(self.prefix.as_str()) else {
            return reply::not_found();
        };
        let Some(below) = path.strip_prefix(aggpay_internal::syntax::AGGREGATORS_ROOT) else {
            return reply::not_found();
        };
        let segments: Vec<&str> = below.split('/').collect();
        let (agg_raw, rest) = match segments.as_slice() {
            ["", agg, rest @ ..] if !agg.is_empty() => (*agg, rest),
            _ => return reply::not_found(),
        };
        let Some((op, id_at)) = Op::route(rest) else {
            return reply::not_found();
        };
        // HEAD is answered as the GET (RFC 9110 section 9.1: every
        // general-purpose server supports GET and HEAD); the HTTP layer
        // leaves the body out.
        let as_get = req.method == "HEAD" && op.method() == "GET";
        if req.method != op.method() && !as_get {
            return reply::method_not_allowed(op.allowed());
        }
        let f = &self.faults;
        let accepted = match req.key {
            None => {
                f.has(Fault::NoAuth)
                    || (f.has(Fault::KeyInQuery)
                        && query_key(raw_query)
                            .is_some_and(|k| self.state.accepts(&k, false, false)))
            }
            Some("") => f.has(Fault::AcceptEmptyKey),
            Some(key) => {
                let grace =
                    f.has(Fault::RotateKeepsOldSecret) || self.legal.has(Legal::OldSecretGrace);
                let inactive = self.legal.has(Legal::InactiveKeyAccepted);
                if f.has(Fault::WebhooksStaleSecrets) && op == Op::Webhooks {
                    self.state.accepted_at_start(&self.data, key)
                } else {
                    self.state.accepts(key, grace, inactive)
                        || f.has(Fault::AcceptAnyKey)
                        || (f.has(Fault::SecretPrefix32) && self.state.accepts_prefix(key, 32))
                }
            }
        };
        if !accepted {
            if f.has(Fault::ParamsBeforeKey)
                && matches!(op, Op::Batches | Op::Transactions | Op::Keys)
                && let Some(refused) = self.parameters_refused(op, rest, id_at, raw_query)
            {
                return refused;
            }
            return reply::unauthorized();
        }
        if self.legal.has(Legal::ParamsFirst)
            && op.method() == "GET"
            && let Some(refused) = self.parameters_refused(op, rest, id_at, raw_query)
        {
            return refused;
        }
        if self.legal.has(Legal::StrictIds)
            && let Some(raw) = id_at.map(|i| rest[i])
            && !own_id_shape(op, &percent_decode(raw, false).unwrap_or_default())
        {
            return reply::bad_request("the id in the path is not of this server's shape");
        }
        let agg = match percent_decode(agg_raw, false) {
            Ok(agg) => agg,
            Err(e) => return reply::bad_request(format!("aggregator id: {e}")),
        };
        if !syntax::has_prefix(&agg, "agg_") {
            return reply::bad_request("aggregator id must start with agg_");
        }
        // The key belongs to this aggregator only (WIRE.md: our choice).
        if agg != self.data.aggregator_id.as_str() && !f.has(Fault::AnyAggregator) {
            return if self.legal.has(Legal::UnknownAggregator404) {
                reply::not_found()
            } else {
                reply::unauthorized()
            };
        }
        let path_id = match id_at.map(|i| percent_decode(rest[i], false)).transpose() {
            Ok(id) => id.unwrap_or_default(),
            Err(e) => return reply::bad_request(format!("path id: {e}")),
        };
        if f.has(Fault::LongId500) && path_id.chars().count() > 64 {
            return reply::internal("the id overflowed its column");
        }
        let query = match Query::parse(raw_query) {
            Ok(q) => self.as_named(op, q),
            Err(e) => return reply::bad_request(e),
        };
        if f.has(Fault::UnicodeQuery500) && query.has_non_ascii() {
            return reply::internal("the query could not be decoded");
        }
        if f.has(Fault::HugeNumber500) && query.has_huge_number() {
            return reply::internal("number out of range");
        }
        let kept_as = self.kept_as(op);
        if let Some(reply) = kept_as.as_deref().and_then(|key| self.kept(key)) {
            return reply;
        }
        let result = match op {
            Op::Aggregator => Ok(self.aggregator()),
            Op::Keys => self.keys(&query),
            Op::Rotate if req.chunked && f.has(Fault::ChunkedBodyEmpty) => self.unrotated(&path_id),
            Op::Rotate => self.rotate(&path_id, req.deferred),
            Op::Merchants => self.merchants(&query),
            Op::RailMerchants => self.rail_merchants(&query),
            Op::RailMerchant => self.rail_merchant(&path_id),
            Op::Qrs => self.qrs(&query),
            Op::Charges => self.charges(&path_id),
            Op::Refunds => self.refunds(&query),
            Op::Batches => self.batches(&query),
            Op::Transactions => self.transactions(&path_id, &query),
            Op::ReportExports if req.chunked && f.has(Fault::ChunkedBodyEmpty) => {
                self.report_export(&[], req.conn)
            }
            Op::ReportExports => self.report_export(req.body, req.conn),
            Op::AccountInfo => self.account_info(&query),
            Op::TitleFetch => self.title_fetch(&query),
            Op::Alias => self.alias(&path_id),
            Op::Ledger => Ok(self.ledger()),
            Op::Webhooks => self.webhooks(&query),
        };
        let reply = result.unwrap_or_else(reply::bad_request);
        if let Some(key) = kept_as
            && reply.status == 200
        {
            let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
            kept.retain(|(k, at, _)| *k != key && at.elapsed() < KEPT_FOR);
            kept.push((key, Instant::now(), reply.clone()));
        }
        reply
    }

    /// The 400 a read gets when its query (or batch token) is bad, checked
    /// as its handler checks them before anything else (reads change
    /// nothing): under `params-before-key` for a request without a valid
    /// key, under `params-first` before its ids are looked up; `None` when
    /// they pass, or the operation reads no query.
    fn parameters_refused(
        &self,
        op: Op,
        rest: &[&str],
        id_at: Option<usize>,
        raw_query: &str,
    ) -> Option<Reply> {
        let query = match Query::parse(raw_query) {
            Ok(q) => self.as_named(op, q),
            Err(e) => return Some(reply::bad_request(e)),
        };
        let path_id = match id_at.map(|i| percent_decode(rest[i], false)).transpose() {
            Ok(id) => id.unwrap_or_default(),
            Err(e) => return Some(reply::bad_request(format!("path id: {e}"))),
        };
        let checked = match op {
            Op::Batches => self.batches(&query),
            Op::Transactions => self.transactions(&path_id, &query),
            Op::Keys => self.keys(&query),
            Op::Merchants => self.merchants(&query),
            Op::RailMerchants => self.rail_merchants(&query),
            Op::Qrs => self.qrs(&query),
            Op::Refunds => self.refunds(&query),
            Op::AccountInfo => self.account_info(&query),
            Op::TitleFetch => self.title_fetch(&query),
            Op::Webhooks => self.webhooks(&query),
            Op::Aggregator
            | Op::Rotate
            | Op::RailMerchant
            | Op::Charges
            | Op::ReportExports
            | Op::Alias
            | Op::Ledger => return None,
        };
        checked.err().map(reply::bad_request)
    }

    /// The operation a request target (path and query) names, if any.
    pub(crate) fn op_of(&self, target: &str) -> Option<Op> {
        let path = target.split('?').next().unwrap_or(target);
        let below = path
            .strip_prefix(self.prefix.as_str())?
            .strip_prefix(aggpay_internal::syntax::AGGREGATORS_ROOT)?;
        let segments: Vec<&str> = below.split('/').collect();
        match segments.as_slice() {
            ["", agg, rest @ ..] if !agg.is_empty() => Op::route(rest).map(|(op, _)| op),
            _ => None,
        }
    }

    /// The query as this server names its parameters: under
    /// [`Legal::FilterNames`], [`Legal::CursorNames`] and
    /// [`Legal::LookupNames`], names of its own where API.md gives them by
    /// purpose only.
    fn as_named(&self, op: Op, query: Query) -> Query {
        let mut query = query;
        if self.legal.has(Legal::FilterNames) {
            query = query.renamed(op.other_filter_names());
        }
        if self.legal.has(Legal::CursorNames) {
            query = query.renamed(op.other_cursor_names());
        }
        if self.legal.has(Legal::LookupNames) {
            query = query.renamed(op.other_lookup_names());
        }
        if self.faults.has(Fault::LookupNamesUnread)
            && matches!(op, Op::AccountInfo | Op::TitleFetch)
        {
            query = query.without(&["iban", "alias_value"]);
        }
        query
    }

    /// The key an answer is kept under, when answers are kept: its path
    /// alone, for the lookups under the `lookup-cache-ignores-query` fault
    /// and for the rail-merchant list under `rail-merchant-list-cache`.
    fn kept_as(&self, op: Op) -> Option<String> {
        let kept = match op {
            Op::AccountInfo | Op::TitleFetch => self.faults.has(Fault::LookupCacheIgnoresQuery),
            Op::RailMerchants => self.faults.has(Fault::RailMerchantListCache),
            _ => false,
        };
        kept.then(|| format!("{op:?}"))
    }

    /// The answer kept under `key`, while it is fresh.
    fn kept(&self, key: &str) -> Option<Reply> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.iter()
            .find(|(k, at, _)| k == key && at.elapsed() < KEPT_FOR)
            .map(|(_, _, reply)| reply.clone())
    }
}

/// Whether a request asks for a page after the first: a non-zero
/// `cursor` or `offset`.
fn later_page(url: &str) -> bool {
    let query = url.split_once('?').map_or("", |(_, q)| q);
    query.split('&').any(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        matches!(k, "cursor" | "offset")
            && !v.is_empty()
            && v.bytes().all(|b| b.is_ascii_digit())
            && v.bytes().any(|b| b != b'0')
    })
}

/// The operations, by path shape after `/v1/aggregators/{aggregator-id}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Aggregator,
    Keys,
    Rotate,
    Merchants,
    RailMerchants,
    RailMerchant,
    Qrs,
    Charges,
    Refunds,
    Batches,
    Transactions,
    ReportExports,
    AccountInfo,
    TitleFetch,
    Alias,
    Ledger,
    Webhooks,
}

impl Op {
    /// The operation of a path, and which segment holds its path id.
    fn route(rest: &[&str]) -> Option<(Op, Option<usize>)> {
        Some(match rest {
            [] => (Op::Aggregator, None),
            ["keys"] => (Op::Keys, None),
            ["keys", _, "rotate"] => (Op::Rotate, Some(1)),
            ["merchants"] => (Op::Merchants, None),
            ["rail-merchants"] => (Op::RailMerchants, None),
            ["rail-merchants", _] => (Op::RailMerchant, Some(1)),
            ["qrs"] => (Op::Qrs, None),
            ["payments", _, "charges"] => (Op::Charges, Some(1)),
            ["refunds"] => (Op::Refunds, None),
            ["settlements", "batches"] => (Op::Batches, None),
            ["settlements", "batches", _, "transactions"] => (Op::Transactions, Some(2)),
            ["settlements", "report-exports"] => (Op::ReportExports, None),
            ["account-info"] => (Op::AccountInfo, None),
            ["title-fetch", "alias"] => (Op::TitleFetch, None),
            ["alias", _] => (Op::Alias, Some(1)),
            ["ledger", "accounts"] => (Op::Ledger, None),
            ["webhooks"] => (Op::Webhooks, None),
            _ => return None,
        })
    }

    /// With `filter-names`, the names this server reads its filters by,
    /// as (WIRE.md's name, its own): every filter API.md gives by purpose
    /// only.
    /// The cursor lists' paging names under [`Legal::CursorNames`].
    fn other_cursor_names(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Op::Batches | Op::Transactions => &[
                ("cursor", "after"),
                ("limit", "page_size"),
                ("direction", "sort"),
            ],
            _ => &[],
        }
    }

    /// The lookups' parameter names under [`Legal::LookupNames`].
    fn other_lookup_names(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Op::AccountInfo | Op::TitleFetch => &[
                ("iban", "account_iban"),
                ("alias_value", "value"),
                ("with_title_fetch", "include_title"),
            ],
            _ => &[],
        }
    }

    fn other_filter_names(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Op::Keys => &[("is_active", "active"), ("names", "name_contains")],
            Op::Merchants => &[
                ("enabled", "is_enabled"),
                ("merchant_identifiers", "ids"),
                ("names", "name_in"),
            ],
            Op::RailMerchants => &[("status", "onboarding_status"), ("name", "q")],
            Op::Refunds => &[
                ("payment_id", "payment"),
                ("status", "refund_status"),
                ("trace_reference", "trace"),
                ("msg_id", "message_id"),
                ("return_id", "return"),
                ("request_id", "client_request_id"),
                ("refund_id", "token"),
                ("start_date", "created_from"),
                ("end_date", "created_to"),
            ],
            Op::Batches => &[("batch_id", "token"), ("status", "state")],
            _ => &[],
        }
    }

    fn method(self) -> &'static str {
        match self {
            Op::Rotate => "PUT",
            Op::ReportExports => "POST",
            _ => "GET",
        }
    }

    /// The methods the operation's path takes (`Allow` of a 405): a read
    /// takes HEAD too.
    fn allowed(self) -> &'static str {
        match self.method() {
            "GET" => "GET, HEAD",
            other => other,
        }
    }
}

/// The `api_key` query parameter, decoded (the `key-in-query` fault takes
/// it for the key header).
fn query_key(raw_query: &str) -> Option<String> {
    raw_query
        .split('&')
        .find_map(|p| p.strip_prefix("api_key="))
        .and_then(|v| percent_decode(v, true).ok())
}

/// Whether `id` is of the shape of the mock's own ids of `op`'s path
/// after their prefix: a batch token's 36 hex digits and dashes, else 16
/// lowercase hex digits ([`Legal::StrictIds`]).
fn own_id_shape(op: Op, id: &str) -> bool {
    let hex = |c: char| c.is_ascii_digit() || ('a'..='f').contains(&c);
    let body = id.split_once('_').map_or("", |(_, body)| body);
    match op {
        Op::Transactions => body.len() == 36 && body.chars().all(|c| hex(c) || c == '-'),
        _ => body.len() == 16 && body.chars().all(hex),
    }
}

//! Routing, authentication and the 17 operations.

use aggpay::{
    AccessKeyId, AggregatorMerchantId, AliasId, BatchStatus, BatchToken, NumericId, PartnerId,
    PaymentId, RailMerchantId, ReportExportToken, ReportKind, ReportStatus, rules,
};
use serde_json::Value;

use crate::data::{BatchRows, BatchSeq, Dataset, Seq, cursor_page};
use crate::fault::{Fault, Faults};
use crate::query::{Invalid, Query, percent_decode};
use crate::reply::{self, Reply};
use crate::state::State;
use crate::synth::Rng;
use crate::wire::{
    BatchList, BatchTransactions, CursorCount, IntCount, KeyList, MerchantList, QrCodeList,
    RailMerchantList, RefundList, ReportExport, ReportExportCreated, StringCount, WebhookList,
};

/// Page size rules of the cursor lists (API.md Limits).
const CURSOR_DEFAULT: u64 = 30;
const CURSOR_MAX: u64 = 100;
/// Page size rules of the offset lists (WIRE.md).
const OFFSET_DEFAULT: u64 = 10;
const OFFSET_MAX: u64 = 100;

impl App {
    fn cursor_limit(&self, q: &Query) -> Result<u64, Invalid> {
        let f = &self.faults;
        let default = if f.has(Fault::DefaultLimit10) {
            10
        } else {
            CURSOR_DEFAULT
        };
        let max = if f.has(Fault::NoLimitCap) {
            1_000
        } else {
            CURSOR_MAX
        };
        self.limit(q, default, max)
    }

    fn offset_limit(&self, q: &Query) -> Result<u64, Invalid> {
        if self.faults.has(Fault::OffsetLimitIgnored) {
            self.limit(q, OFFSET_DEFAULT, OFFSET_MAX)?;
            return Ok(1_000);
        }
        self.limit(q, OFFSET_DEFAULT, OFFSET_MAX)
    }

    fn limit(&self, q: &Query, default: u64, max: u64) -> Result<u64, Invalid> {
        let negative = q.one("limit")?.is_some_and(|l| l.starts_with('-'));
        if negative && self.faults.has(Fault::NegativeLimitAccepted) {
            return Ok(default);
        }
        q.limit(default, max)
    }

    fn offset(&self, q: &Query) -> Result<u64, Invalid> {
        let offset = q.offset()?;
        Ok(if self.faults.has(Fault::OffsetIgnored) {
            0
        } else {
            offset
        })
    }

    fn ascending(&self, q: &Query) -> Result<bool, Invalid> {
        if self.faults.has(Fault::LowercaseAsc) {
            return Ok(q
                .one("direction")?
                .is_some_and(|d| d.eq_ignore_ascii_case("ASC")));
        }
        q.ascending()
    }
}

/// Everything one request needs to be answered.
#[derive(Debug)]
pub(crate) struct Incoming<'a> {
    pub(crate) method: &'a str,
    pub(crate) url: &'a str,
    pub(crate) key: Option<&'a str>,
    pub(crate) body: &'a [u8],
}

/// The server's shared view: read-only data and locked state.
#[derive(Debug)]
pub(crate) struct App {
    pub(crate) data: Dataset,
    pub(crate) state: State,
    pub(crate) prefix: String,
    pub(crate) faults: Faults,
}

/// The operations, by path shape after `/v1/aggregators/{aggregator-id}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
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

    fn method(self) -> &'static str {
        match self {
            Op::Rotate => "PUT",
            Op::ReportExports => "POST",
            _ => "GET",
        }
    }
}

impl App {
    /// Answers one request, with the active faults applied.
    pub(crate) fn handle(&self, req: &Incoming<'_>) -> Reply {
        let reply = self.answer(req);
        if self.faults.is_empty() {
            reply
        } else {
            reply::with_faults(reply, &self.faults)
        }
    }

    /// The faithful answer. Order: route (404/405), key (401), aggregator
    /// (400/401), parameters (400), resource (404).
    fn answer(&self, req: &Incoming<'_>) -> Reply {
        let (path, raw_query) = req.url.split_once('?').unwrap_or((req.url, ""));
        let Some(path) = path.strip_prefix(self.prefix.as_str()) else {
            return reply::not_found();
        };
        let segments: Vec<&str> = path.split('/').collect();
        let (agg_raw, rest) = match segments.as_slice() {
            ["", "v1", "aggregators", agg, rest @ ..] if !agg.is_empty() => (*agg, rest),
            _ => return reply::not_found(),
        };
        let Some((op, id_at)) = Op::route(rest) else {
            return reply::not_found();
        };
        if req.method != op.method() {
            return reply::method_not_allowed(op.method());
        }
        let f = &self.faults;
        let accepted = match req.key {
            None => f.has(Fault::NoAuth),
            Some("") => f.has(Fault::AcceptEmptyKey),
            Some(key) => self.state.accepts(key, f) || f.has(Fault::AcceptAnyKey),
        };
        if !accepted {
            return reply::unauthorized();
        }
        let agg = match percent_decode(agg_raw, false) {
            Ok(agg) => agg,
            Err(e) => return reply::bad_request(format!("aggregator id: {e}")),
        };
        if !rules::has_prefix(&agg, "agg_") {
            return reply::bad_request("aggregator id must start with agg_");
        }
        // The key belongs to this aggregator only (WIRE.md: our choice).
        if agg != self.data.aggregator_id.as_str() {
            return reply::unauthorized();
        }
        let path_id = match id_at.map(|i| percent_decode(rest[i], false)).transpose() {
            Ok(id) => id.unwrap_or_default(),
            Err(e) => return reply::bad_request(format!("path id: {e}")),
        };
        let query = match Query::parse(raw_query) {
            Ok(q) => q,
            Err(e) => return reply::bad_request(e),
        };
        let result = match op {
            Op::Aggregator => Ok(reply::ok(&self.data.aggregator(self.state.keys()))),
            Op::Keys => self.keys(&query),
            Op::Rotate => self.rotate(&path_id),
            Op::Merchants => self.merchants(&query),
            Op::RailMerchants => self.rail_merchants(&query),
            Op::RailMerchant => self.rail_merchant(&path_id),
            Op::Qrs => self.qrs(&query),
            Op::Charges => self.charges(&path_id),
            Op::Refunds => self.refunds(&query),
            Op::Batches => self.batches(&query),
            Op::Transactions => self.transactions(&path_id, &query),
            Op::ReportExports => self.report_export(req.body),
            Op::AccountInfo => self.account_info(&query),
            Op::TitleFetch => self.title_fetch(&query),
            Op::Alias => self.alias(&path_id),
            Op::Ledger => Ok(reply::ok(&self.data.ledger_account())),
            Op::Webhooks => self.webhooks(&query),
        };
        result.unwrap_or_else(reply::bad_request)
    }

    fn keys(&self, q: &Query) -> Result<Reply, Invalid> {
        let limit = self.offset_limit(q)?;
        let offset = self.offset(q)?;
        let names = lowercase(q.list("names")?);
        let active = q
            .boolean("is_active")?
            .filter(|_| !self.faults.has(Fault::KeysActiveFilterIgnored));
        let keys: Vec<_> = self
            .state
            .keys()
            .into_iter()
            .filter(|k| active.is_none_or(|a| k.is_active == a))
            .filter(|k| matches_any(&k.name, &names))
            .collect();
        let count = IntCount(keys.len() as u64);
        let keys = page(keys.into_iter(), offset, limit);
        Ok(reply::ok(&KeyList { count, keys }))
    }

    fn rotate(&self, id: &str) -> Result<Reply, Invalid> {
        let id = AccessKeyId::parse(id).map_err(|e| e.to_string())?;
        Ok(match self.state.rotate(&self.data, &id, &self.faults) {
            Some(key) => reply::ok(&key),
            None => reply::not_found(),
        })
    }

    fn merchants(&self, q: &Query) -> Result<Reply, Invalid> {
        let limit = self.offset_limit(q)?;
        let offset = self.offset(q)?;
        let enabled = q
            .boolean("enabled")?
            .filter(|_| !self.faults.has(Fault::MerchantsEnabledFilterIgnored));
        let ids = q
            .list("merchant_identifiers")?
            .into_iter()
            .map(|s| AggregatorMerchantId::parse(s).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        let names = lowercase(q.list("names")?);
        let d = &self.data;
        let rows = (0..d.sizes.merchants)
            .filter(|i| {
                ids.is_empty()
                    || ids
                        .iter()
                        .any(|id| d.merchant_index(id.as_str()) == Some(*i))
            })
            .map(|i| d.merchant(i))
            .filter(|m| enabled.is_none_or(|e| m.enabled == e))
            .filter(|m| matches_any(&m.name, &names));
        let (merchants, count) = counted_page(rows, offset, limit);
        Ok(reply::ok(&MerchantList {
            merchants,
            count: StringCount(count),
        }))
    }

    fn rail_merchants(&self, q: &Query) -> Result<Reply, Invalid> {
        let limit = self.offset_limit(q)?;
        let offset = self.offset(q)?;
        let status = q
            .choice("status", &["Active", "Inactive", "Suspended"])?
            .filter(|_| !self.faults.has(Fault::RailStatusFilterIgnored));
        let name = q
            .one("name")?
            .map(str::to_lowercase)
            .filter(|n| !n.is_empty());
        let d = &self.data;
        let rows = (0..d.rail_merchant_count())
            .map(|i| d.rail_merchant(i))
            .filter(|m| status.is_none_or(|s| m.status.as_str() == s))
            .filter(|m| {
                name.as_ref()
                    .is_none_or(|n| m.name.to_lowercase().contains(n))
            });
        let (merchants, count) = counted_page(rows, offset, limit);
        Ok(reply::ok(&RailMerchantList {
            merchants,
            count: StringCount(count),
        }))
    }

    fn rail_merchant(&self, id: &str) -> Result<Reply, Invalid> {
        let id = RailMerchantId::parse(id).map_err(|e| e.to_string())?;
        Ok(match self.data.rail_merchant_index(id.as_str()) {
            Some(i) => reply::ok(&self.data.rail_merchant(i)),
            None => reply::not_found(),
        })
    }

    fn qrs(&self, q: &Query) -> Result<Reply, Invalid> {
        let limit = self.offset_limit(q)?;
        let offset = self.offset(q)?;
        let default = if self.faults.has(Fault::QrDefaultDynamic) {
            "DYNAMIC"
        } else {
            "STATIC"
        };
        let qr_type = q.choice("type", &["STATIC", "DYNAMIC"])?.unwrap_or(default);
        let merchant = q
            .one("aggregator_merchant_id")?
            .map(|s| AggregatorMerchantId::parse(s).map_err(|e| e.to_string()))
            .transpose()?;
        let d = &self.data;
        let rows = (0..d.sizes.qr_codes)
            .map(|i| d.qr_code(i))
            .filter(|c| c.qr_type.as_str() == qr_type)
            .filter(|c| {
                merchant
                    .as_ref()
                    .is_none_or(|m| &c.aggregator_merchant_id == m)
            });
        let (qr_codes, count) = counted_page(rows, offset, limit);
        Ok(reply::ok(&QrCodeList {
            qr_codes,
            count: StringCount(count),
        }))
    }

    fn charges(&self, id: &str) -> Result<Reply, Invalid> {
        let id = PaymentId::parse(id).map_err(|e| e.to_string())?;
        Ok(match self.data.payment_location(id.as_str()) {
            Some((b, j)) => reply::ok(&self.data.charges(b, j)),
            None => reply::not_found(),
        })
    }

    fn refunds(&self, q: &Query) -> Result<Reply, Invalid> {
        let limit = self.offset_limit(q)?;
        let offset = self.offset(q)?;
        let start = q.unix("start_date")?;
        let end = q.unix("end_date")?;
        let ascending = self.ascending(q)?;
        let filters: Vec<(&str, Vec<&str>)> = [
            "payment_id",
            "status",
            "trace_reference",
            "msg_id",
            "return_id",
            "request_id",
            "refund_id",
        ]
        .into_iter()
        .map(|name| (name, q.all(name)))
        .collect();
        let d = &self.data;
        let n = d.sizes.refunds;
        let order: Box<dyn Iterator<Item = u64>> = if ascending {
            Box::new(0..n)
        } else {
            Box::new((0..n).rev())
        };
        let rows = order
            .filter(|i| {
                let t = d.refund_created_unix(*i);
                start.is_none_or(|s| t >= s) && end.is_none_or(|e| t <= e)
            })
            .map(|i| d.refund(i))
            .filter(|r| {
                filters.iter().all(|(name, wanted)| {
                    let have = match *name {
                        "payment_id" => r.payment_id.as_str(),
                        "status" => r.status.as_str(),
                        "trace_reference" => &r.trace_reference,
                        "msg_id" => &r.msg_id,
                        "return_id" => &r.return_id,
                        "request_id" => &r.request_id,
                        _ => &r.token,
                    };
                    wanted.is_empty() || wanted.contains(&have)
                })
            });
        let (keys, count) = counted_page(rows, offset, limit);
        Ok(reply::ok(&RefundList {
            count: IntCount(count),
            keys,
        }))
    }

    fn batches(&self, q: &Query) -> Result<Reply, Invalid> {
        let cursor = q.cursor()?;
        let limit = self.cursor_limit(q)?;
        let ascending = self.ascending(q)?;
        let status = match q.one("status")? {
            None => None,
            Some(raw) => Some(
                raw.parse::<u8>()
                    .ok()
                    .filter(|s| BatchStatus::from_filter_value(*s).is_some() && raw.len() == 1)
                    .ok_or_else(|| format!("`status` must be 0, 1, 2 or 3, got {raw:?}"))?,
            ),
        };
        let status = status.filter(|_| !self.faults.has(Fault::StatusFilterIgnored));
        let lenient = self.faults.has(Fault::LenientBatchToken);
        let token = q
            .one("batch_id")?
            .filter(|_| !self.faults.has(Fault::BatchFilterIgnored))
            .map(|s| match BatchToken::parse(s) {
                Ok(t) => Ok(t.into_string()),
                Err(_) if lenient => Ok(s.to_owned()),
                Err(_) => {
                    Err("`batch_id` must start with sb_ and be exactly 39 characters".to_owned())
                }
            })
            .transpose()?;
        let d = &self.data;
        let seq = match (&token, status) {
            (Some(t), s) => {
                let index = d.batch_index(t);
                BatchSeq::One(
                    d,
                    index.filter(|i| s.is_none_or(|s| d.batch_status(*i) == s)),
                )
            }
            (None, Some(s)) => BatchSeq::Status(d, s),
            (None, None) => BatchSeq::All(d),
        };
        let positions = cursor_page(&seq, self.page_cursor(cursor, ascending), limit, ascending);
        let batches: Vec<_> = positions
            .iter()
            .map(|k| d.batch(seq.index_at(*k)))
            .collect();
        let last = batches.last().map(|b| b.id.to_string()).unwrap_or_default();
        Ok(reply::ok(&BatchList {
            next_cursor: self.next_cursor(cursor, last),
            batches,
            count: CursorCount {
                filtered_count: StringCount(seq.len()),
                total_count: StringCount(d.sizes.batches),
            },
        }))
    }

    /// The bound a page starts after: the cursor itself, unless a fault
    /// makes the cursor's own row part of the page.
    fn page_cursor(&self, cursor: u64, ascending: bool) -> u64 {
        match (cursor, self.faults.has(Fault::CursorInclusive), ascending) {
            (0, _, _) | (_, false, _) => cursor,
            (c, true, true) => c - 1,
            (c, true, false) => c.saturating_add(1),
        }
    }

    /// The cursor a page hands out: the last row's id, unless a fault
    /// makes it repeat the one it was given.
    fn next_cursor(&self, given: u64, last: String) -> String {
        if self.faults.has(Fault::CursorRepeat) && given != 0 && !last.is_empty() {
            given.to_string()
        } else {
            last
        }
    }

    fn transactions(&self, id: &str, q: &Query) -> Result<Reply, Invalid> {
        let token = match BatchToken::parse(id) {
            Ok(token) => token,
            Err(_) if self.faults.has(Fault::LenientBatchToken) => return Ok(reply::not_found()),
            Err(_) => {
                return Err(
                    "settlement batch id must start with sb_ and be exactly 39 characters"
                        .to_owned(),
                );
            }
        };
        let cursor = q.cursor()?;
        let limit = self.cursor_limit(q)?;
        let ascending = self.ascending(q)?;
        let payouts = q.boolean("only_settlement_txns")?.unwrap_or(false)
            && !self.faults.has(Fault::PayoutsInTransactions);
        let d = &self.data;
        let Some(batch) = d.batch_index(token.as_str()) else {
            return Ok(reply::not_found());
        };
        let rows = BatchRows {
            data: d,
            batch,
            payouts,
        };
        let positions = cursor_page(&rows, self.page_cursor(cursor, ascending), limit, ascending);
        let last = positions
            .last()
            .map(|k| rows.id_at(*k).to_string())
            .unwrap_or_default();
        let next_cursor = self.next_cursor(cursor, last);
        let (settlement_transactions, transactions) = if payouts {
            (
                positions.iter().map(|k| d.payout(batch, *k)).collect(),
                Vec::new(),
            )
        } else {
            (
                Vec::new(),
                positions.iter().map(|k| d.transaction(batch, *k)).collect(),
            )
        };
        Ok(reply::ok(&BatchTransactions {
            settlement_transactions,
            transactions,
            next_cursor,
            count: CursorCount {
                filtered_count: StringCount(rows.len()),
                total_count: StringCount(d.transaction_count(batch) + d.payout_count(batch)),
            },
        }))
    }

    fn report_export(&self, body: &[u8]) -> Result<Reply, Invalid> {
        let value: Value =
            serde_json::from_slice(body).map_err(|e| format!("body must be a JSON object: {e}"))?;
        let Value::Object(fields) = value else {
            return Err("body must be a JSON object".to_owned());
        };
        let text = |name: &str| -> Result<Option<&str>, Invalid> {
            match fields.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.as_str())),
                Some(_) => Err(format!("`{name}` must be a string")),
            }
        };
        let lax = self.faults.has(Fault::ExportAcceptsEmptyBody);
        let first = self.data.batch_token(0);
        let batch_raw = match text("settlement_batch_id")? {
            Some(b) => b,
            None if lax => first.as_str(),
            None => return Err("`settlement_batch_id` is required".to_owned()),
        };
        let batch_token = BatchToken::parse(batch_raw).map_err(|_| {
            "`settlement_batch_id` must start with sb_ and be exactly 39 characters".to_owned()
        })?;
        let batch = self
            .data
            .batch_index(batch_token.as_str())
            .ok_or("`settlement_batch_id` names no batch")?;
        let kind_raw = match text("kind")? {
            Some(k) => k,
            None if lax => "REPORT_KIND_BATCH",
            None => return Err("`kind` is required".to_owned()),
        };
        let kind = match kind_raw {
            "REPORT_KIND_BATCH" => ReportKind::Batch,
            "REPORT_KIND_MERCHANT" => ReportKind::Merchant,
            other => {
                return Err(format!(
                    "`kind` must be REPORT_KIND_BATCH or REPORT_KIND_MERCHANT, got {other:?}"
                ));
            }
        };
        let merchant = text("merchant_id")?.filter(|m| !m.is_empty());
        let merchant_id = match (&kind, merchant) {
            (ReportKind::Batch, None) => None,
            (ReportKind::Batch, Some(_)) => {
                return Err("`merchant_id` must be empty for REPORT_KIND_BATCH".to_owned());
            }
            (_, None) => {
                return Err("`merchant_id` is required for REPORT_KIND_MERCHANT".to_owned());
            }
            (_, Some(m)) => {
                let id = RailMerchantId::parse(m).map_err(|e| e.to_string())?;
                if self.data.rail_merchant_index(id.as_str()).is_none() {
                    return Err("`merchant_id` names no rail merchant".to_owned());
                }
                Some(id)
            }
        };
        let data = &self.data;
        let export = self.state.add_export(|number| {
            let now = jiff::Timestamp::now();
            let mut rng = Rng::new(data.seed, "export", number);
            ReportExport {
                id: NumericId::new(4_000 + number),
                token: crate::data::parse_generated(ReportExportToken::parse(format!(
                    "rpt_{}",
                    rng.hex(16)
                ))),
                settlement_batch_id: data.batch_token(batch),
                merchant_id: merchant_id.map(|m| m.into_string()).unwrap_or_default(),
                kind,
                status: ReportStatus::Seeded,
                attempts: 1,
                error_message: String::new(),
                storage_key: String::new(),
                record_count: StringCount(0),
                file_size: StringCount(0),
                started_at: now,
                finished_at: None,
                created_at: now,
                updated_at: now,
                partner_id: PartnerId::clone(&data.partner_id),
                version: 1,
            }
        });
        Ok(reply::ok(&ReportExportCreated {
            report_export: export,
        }))
    }

    fn account_info(&self, q: &Query) -> Result<Reply, Invalid> {
        let with_title = q.boolean("with_title_fetch")?.unwrap_or(false);
        let alias_type = q.choice("alias_type", &["MOBILE"])?;
        let alias_value = q.one("alias_value")?.filter(|v| !v.is_empty());
        let iban = q.one("iban")?.filter(|v| !v.is_empty());
        let d = &self.data;
        let found = match (iban, alias_type, alias_value) {
            (_, Some(_), None) => {
                return Err("`alias_value` is required with `alias_type`".to_owned());
            }
            (_, None, Some(_)) => {
                return Err("`alias_type` is required with `alias_value`".to_owned());
            }
            (_, Some(_), Some(mobile)) => d.account_by_mobile(mobile).map(|m| (m, true)),
            (Some(iban), None, None) => d.account_by_iban(iban).map(|m| (m, false)),
            (None, None, None) => {
                return Err("give `iban`, or `alias_type` and `alias_value`".to_owned());
            }
        };
        Ok(match found {
            Some((m, by_alias)) => reply::ok(&d.account_info(m, by_alias, with_title)),
            None => reply::not_found(),
        })
    }

    fn title_fetch(&self, q: &Query) -> Result<Reply, Invalid> {
        q.choice("alias_type", &["TILL_CODE"])?;
        let with_title = q.boolean("with_title_fetch")?.unwrap_or(false);
        let value = q
            .one("alias_value")?
            .filter(|v| !v.is_empty())
            .ok_or("`alias_value` is required")?;
        Ok(match self.data.account_by_till(value) {
            Some(m) => reply::ok(&self.data.account_info(m, true, with_title)),
            None => reply::not_found(),
        })
    }

    fn alias(&self, id: &str) -> Result<Reply, Invalid> {
        let id = AliasId::parse(id).map_err(|e| e.to_string())?;
        Ok(match self.data.alias_index(id.as_str()) {
            Some(i) => reply::ok(&self.data.alias(i)),
            None => reply::not_found(),
        })
    }

    fn webhooks(&self, q: &Query) -> Result<Reply, Invalid> {
        let limit = self.offset_limit(q)?;
        let offset = self.offset(q)?;
        let d = &self.data;
        let endpoints = page((0..d.sizes.webhooks).map(|i| d.webhook(i)), offset, limit);
        Ok(reply::ok(&WebhookList {
            endpoints,
            count: StringCount(d.sizes.webhooks),
        }))
    }
}

fn lowercase(items: Vec<String>) -> Vec<String> {
    items.into_iter().map(|s| s.to_lowercase()).collect()
}

/// True when no fragments are given or `name` contains one (case-insensitive).
fn matches_any(name: &str, fragments: &[String]) -> bool {
    let name = name.to_lowercase();
    fragments.is_empty() || fragments.iter().any(|f| name.contains(f.as_str()))
}

fn page<T>(rows: impl Iterator<Item = T>, offset: u64, limit: u64) -> Vec<T> {
    rows.skip(usize::try_from(offset).unwrap_or(usize::MAX))
        .take(usize::try_from(limit).unwrap_or(usize::MAX))
        .collect()
}

/// One page and the number of rows that matched, in a single pass.
fn counted_page<T>(rows: impl Iterator<Item = T>, offset: u64, limit: u64) -> (Vec<T>, u64) {
    let mut out = Vec::new();
    let mut count = 0u64;
    for row in rows {
        if count >= offset && (out.len() as u64) < limit {
            out.push(row);
        }
        count += 1;
    }
    (out, count)
}

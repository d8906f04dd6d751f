//! Settlement batches, a batch's transactions and payouts, and report
//! exports.

use aggpay::{
    BatchStatus, BatchToken, NumericId, PartnerId, RailMerchantId, ReportExportToken, ReportKind,
    ReportStatus,
};
use serde_json::Value;

use crate::data::{BatchSeq, Seq, below_from_first, cursor_page};
use crate::fault::Fault;
use crate::legal::Legal;
use crate::query::{Invalid, Query};
use crate::reply::{self, Reply};
use crate::router::App;
use crate::state::ExportPool;
use crate::synth::Rng;
use crate::wire::{
    BatchList, BatchTransactions, CursorCount, ReportExport, ReportExportCreated, StringCount,
};

impl App {
    pub(crate) fn batches(&self, q: &Query) -> Result<Reply, Invalid> {
        let cursor = self.cursor(q)?;
        let limit = self.cursor_limit(q)?;
        let ascending = self.cursor_ascending(q)?;
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
            .map(|s| self.token_case(s))
            .map(|s| match BatchToken::parse(&s) {
                Ok(t) => Ok(t.into_string()),
                Err(_) if lenient => Ok(s.clone()),
                Err(_) => {
                    Err("`batch_id` must start with sb_ and be exactly 39 characters".to_owned())
                }
            })
            .transpose()?;
        let view = self.view();
        let status =
            status.filter(|_| token.is_none() || !self.faults.has(Fault::BatchFilterDropsStatus));
        let seq = match (&token, status) {
            (Some(t), s) => {
                let index = view.batch_index(t);
                BatchSeq::One(
                    view,
                    index.filter(|i| s.is_none_or(|s| view.batch_status(*i) == s)),
                )
            }
            (None, Some(s)) => BatchSeq::with_status(view, s),
            (None, None) => BatchSeq::All(view),
        };
        let positions = self.positions(&seq, q, cursor, limit, ascending)?;
        let indices: Vec<u64> = positions.iter().map(|k| seq.index_at(*k)).collect();
        let last = indices
            .last()
            .map(|i| self.data.batch_numeric_id(*i).to_string())
            .unwrap_or_default();
        let full = indices.len() as u64 == limit;
        let next_cursor = self.next_cursor(cursor, last, full);
        let count = CursorCount {
            filtered_count: StringCount(seq.len()),
            total_count: StringCount(view.batch_count()),
        };
        // The fixed dataset's rows were serialized once, at start.
        let written = self.legal.has(Legal::WrittenFieldsChange);
        if let (false, false, Some(cached)) = (view.is_live(), written, &self.batch_rows) {
            let batches = indices
                .iter()
                .filter_map(|i| cached.get(*i as usize).map(AsRef::as_ref))
                .collect();
            return Ok(reply::ok(&BatchList {
                batches,
                next_cursor,
                count,
            }));
        }
        let batches = indices
            .iter()
            .map(|i| self.batch_as_written(&view, *i))
            .collect();
        Ok(reply::ok(&BatchList {
            batches,
            next_cursor,
            count,
        }))
    }

    /// Whether a cursor list's page is asked ascending: not even read
    /// with `direction-ignored`, every page then descending.
    fn cursor_ascending(&self, q: &Query) -> Result<bool, Invalid> {
        if self.faults.has(Fault::DirectionIgnored) {
            return Ok(false);
        }
        self.ascending(q)
    }

    /// The positions of one cursor page, with the faults that bend paging.
    fn positions(
        &self,
        seq: &impl Seq,
        q: &Query,
        cursor: u64,
        limit: u64,
        ascending: bool,
    ) -> Result<Vec<u64>, Invalid> {
        let f = &self.faults;
        if f.has(Fault::CursorZeroLiteral) && !ascending && q.one("cursor")? == Some("0") {
            return Ok(Vec::new());
        }
        if ascending && cursor != 0 && f.has(Fault::CursorAscAsDesc) {
            return Ok(below_from_first(seq, cursor, limit));
        }
        let mut page = cursor_page(seq, self.page_cursor(cursor, ascending), limit, ascending);
        if page.is_empty() && cursor != 0 && f.has(Fault::PastEndWraps) {
            return Ok(cursor_page(seq, 0, limit, ascending));
        }
        if cursor != 0 && !page.is_empty() && f.has(Fault::CursorSkipsRow) {
            page.remove(0);
        }
        Ok(page)
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
    /// makes it repeat the one it was given (or, with `cursor-end-empty`,
    /// `""` on a page that is not `full`: the end).
    fn next_cursor(&self, given: u64, last: String, full: bool) -> String {
        if !full && self.legal.has(Legal::CursorEndEmpty) {
            String::new()
        } else if !full && self.legal.has(Legal::CursorEndZero) {
            "0".to_owned()
        } else if self.faults.has(Fault::CursorRepeat) && given != 0 && !last.is_empty() {
            given.to_string()
        } else {
            last
        }
    }

    pub(crate) fn transactions(&self, id: &str, q: &Query) -> Result<Reply, Invalid> {
        let token = match BatchToken::parse(self.token_case(id)) {
            Ok(token) => token,
            Err(_) if self.faults.has(Fault::LenientBatchToken) => return Ok(reply::not_found()),
            Err(_) => {
                return Err(
                    "settlement batch id must start with sb_ and be exactly 39 characters"
                        .to_owned(),
                );
            }
        };
        let cursor = self.cursor(q)?;
        let limit = self.cursor_limit(q)?;
        let ascending = self.cursor_ascending(q)?;
        let payouts = q.boolean("only_settlement_txns")?.unwrap_or(false)
            && !self.faults.has(Fault::PayoutsInTransactions);
        let view = self.view();
        let Some(batch) = view.batch_index(token.as_str()) else {
            if self.faults.has(Fault::UnknownBatchFound) {
                return Ok(reply::ok(&BatchTransactions {
                    settlement_transactions: Vec::new(),
                    transactions: Vec::new(),
                    next_cursor: String::new(),
                    count: CursorCount {
                        filtered_count: StringCount(0),
                        total_count: StringCount(0),
                    },
                }));
            }
            return Ok(reply::not_found());
        };
        let rows = view.rows(batch, payouts);
        let positions = self.positions(&rows, q, cursor, limit, ascending)?;
        let last = positions
            .last()
            .map(|k| rows.id_at(*k).to_string())
            .unwrap_or_default();
        let full = positions.len() as u64 == limit;
        let next_cursor = self.next_cursor(cursor, last, full);
        let d = &self.data;
        // Made only where rows borrow it (transactions, not payouts), and
        // declared here so that it outlives them.
        let batch_token;
        let (settlement_transactions, transactions) = if payouts {
            (
                {
                    let settled = view.transaction_count(batch);
                    positions
                        .iter()
                        .map(|k| d.payout(batch, *k, settled))
                        .collect()
                },
                Vec::new(),
            )
        } else {
            batch_token = d.batch_token(batch);
            (
                Vec::new(),
                positions
                    .iter()
                    .map(|k| d.transaction_of(batch, &batch_token, *k))
                    .collect(),
            )
        };
        Ok(reply::ok(&BatchTransactions {
            settlement_transactions,
            transactions,
            next_cursor,
            count: CursorCount {
                filtered_count: StringCount(rows.len()),
                total_count: StringCount(view.transaction_count(batch) + view.payout_count(batch)),
            },
        }))
    }

    /// Batch `index` as the view has it, its version raised by every
    /// export of it with `written-fields-change`.
    fn batch_as_written(
        &self,
        view: &crate::data::View<'_>,
        index: u64,
    ) -> crate::wire::SettlementBatch {
        let mut batch = view.batch(index);
        if self.legal.has(Legal::WrittenFieldsChange) {
            batch.version += self.state.exports_of(index);
        }
        batch
    }

    pub(crate) fn report_export(&self, body: &[u8], conn: u64) -> Result<Reply, Invalid> {
        let (batch, kind, merchant_id) = self.export_request(body, conn)?;
        if self.legal.has(Legal::WrittenFieldsChange) {
            self.state.exported(batch);
        }
        let export = if self.faults.has(Fault::ExportUpsert) {
            // An upsert on the scope: an earlier export of it is answered
            // again, its attempts raised.
            let scope = (kind.clone(), batch, merchant_id.clone());
            self.state
                .upsert_export(scope, || self.new_export(batch, kind, merchant_id))
        } else {
            self.new_export(batch, kind, merchant_id)
        };
        Ok(reply::ok(&ReportExportCreated {
            report_export: export,
        }))
    }

    /// A new report export of batch `batch` (its index).
    fn new_export(&self, batch: u64, kind: ReportKind, merchant_id: String) -> ReportExport {
        let data = &self.data;
        let pending = self.legal.has(Legal::ExportPending);
        // Produced at once: a synchronous server's new export.
        let produced = self.legal.has(Legal::ExportProduced);
        self.state.add_export(|number| {
            let now = jiff::Timestamp::now();
            let mut rng = Rng::new(data.seed, "export", number);
            ReportExport {
                id: NumericId::new(4_000 + number),
                token: crate::data::parse_generated(ReportExportToken::parse(
                    rng.token("rpt_", 16),
                )),
                settlement_batch_id: data.batch_token(batch),
                merchant_id,
                kind,
                status: if produced {
                    ReportStatus::Succeeded
                } else if pending {
                    ReportStatus::Pending
                } else {
                    ReportStatus::Seeded
                },
                attempts: if pending { 0 } else { 1 },
                error_message: String::new(),
                storage_key: if produced {
                    format!("reports/rpt_{number}.csv")
                } else {
                    String::new()
                },
                record_count: StringCount(0),
                file_size: StringCount(0),
                started_at: now,
                finished_at: produced.then_some(now),
                created_at: now,
                updated_at: now,
                partner_id: PartnerId::clone(&data.partner_id),
                version: 1,
            }
        })
    }

    /// What an export request asks for: the batch (its index), the kind,
    /// the merchant id it answers (empty for a batch export); or why it is
    /// refused.
    fn export_request(&self, body: &[u8], conn: u64) -> Result<(u64, ReportKind, String), Invalid> {
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
        // Under `export-body-pooled`, the body is decoded into its
        // connection's pool first: members absent from it keep the values
        // an earlier export request on the connection gave them.
        let pooled = if self.faults.has(Fault::ExportBodyPooled) {
            Some(self.state.pool_export(
                conn,
                ExportPool {
                    settlement_batch_id: text("settlement_batch_id")?.map(str::to_owned),
                    kind: text("kind")?.map(str::to_owned),
                    merchant_id: text("merchant_id")?.map(str::to_owned),
                },
            ))
        } else {
            None
        };
        let member = |name: &str| -> Result<Option<String>, Invalid> {
            match &pooled {
                Some(pool) => Ok(match name {
                    "settlement_batch_id" => pool.settlement_batch_id.clone(),
                    "kind" => pool.kind.clone(),
                    _ => pool.merchant_id.clone(),
                }),
                None => Ok(text(name)?.map(str::to_owned)),
            }
        };
        let lax = self.faults.has(Fault::ExportAcceptsEmptyBody);
        let first = self.data.batch_token(0);
        let batch_raw = member("settlement_batch_id")?;
        let batch_raw = match batch_raw.as_deref() {
            Some(b) => b,
            None if lax => first.as_str(),
            None => return Err("`settlement_batch_id` is required".to_owned()),
        };
        let batch = self.export_batch(batch_raw)?;
        let kind = match member("kind")?.as_deref() {
            Some("REPORT_KIND_BATCH") => ReportKind::Batch,
            None if lax || self.legal.has(Legal::ExportKindOptional) => ReportKind::Batch,
            Some("REPORT_KIND_MERCHANT") => ReportKind::Merchant,
            None => return Err("`kind` is required".to_owned()),
            Some(other) => {
                return Err(format!(
                    "`kind` must be REPORT_KIND_BATCH or REPORT_KIND_MERCHANT, got {other:?}"
                ));
            }
        };
        // A batch export is checked against its own merchant_id: the
        // pooled one it inherits is only answered.
        let merchant_raw = member("merchant_id")?;
        let checked = match kind {
            ReportKind::Batch => text("merchant_id")?,
            _ => merchant_raw.as_deref(),
        };
        let merchant = self.export_merchant(&kind, checked)?;
        let answered = match (merchant, kind == ReportKind::Batch) {
            (Some(m), _) => m.into_string(),
            (None, true) => merchant_raw.unwrap_or_default(),
            (None, false) => String::new(),
        };
        Ok((batch, kind, answered))
    }

    /// The index of the batch an export names (another one under the
    /// export faults).
    fn export_batch(&self, raw: &str) -> Result<u64, Invalid> {
        let token = BatchToken::parse(self.token_case(raw)).map_err(|_| {
            "`settlement_batch_id` must start with sb_ and be exactly 39 characters".to_owned()
        })?;
        let view = self.view();
        let batch = match view.batch_index(token.as_str()) {
            Some(batch) => batch,
            None if self.faults.has(Fault::UnknownTargetActs) => {
                view.batch_count().saturating_sub(1)
            }
            None => return Err("`settlement_batch_id` names no batch".to_owned()),
        };
        Ok(if self.faults.has(Fault::ExportNewestBatch) {
            view.batch_count().saturating_sub(1)
        } else if self.faults.has(Fault::ExportOtherBatch) {
            (batch + 1) % view.batch_count().max(1)
        } else {
            batch
        })
    }

    /// The merchant of an export: none for a batch export, a known rail
    /// merchant for a merchant export.
    fn export_merchant(
        &self,
        kind: &ReportKind,
        merchant: Option<&str>,
    ) -> Result<Option<RailMerchantId>, Invalid> {
        match (kind, merchant.filter(|m| !m.is_empty())) {
            (ReportKind::Batch, None) => Ok(None),
            (ReportKind::Batch, Some(_)) => {
                Err("`merchant_id` must be empty for REPORT_KIND_BATCH".to_owned())
            }
            (_, None) => Err("`merchant_id` is required for REPORT_KIND_MERCHANT".to_owned()),
            (_, Some(m)) => {
                let id =
                    RailMerchantId::parse(self.token_case(m)).map_err(|e| e.kind().to_string())?;
                if self.data.rail_merchant_index(id.as_str()).is_none() {
                    if self.faults.has(Fault::UnknownTargetActs) {
                        return Ok(Some(self.data.rail_merchant_token(0)));
                    }
                    return Err("`merchant_id` names no rail merchant".to_owned());
                }
                Ok(Some(id))
            }
        }
    }
}

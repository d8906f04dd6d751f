//! Sampling: every operation, every page of the offset lists (bounded),
//! transactions of many batches, payouts, charges, the writes. In waves,
//! each wave's requests in parallel: a remote server costs a few round
//! trips, not hundreds.

use serde_json::Value;

use crate::ctx::{Ctx, Sample};
use crate::http::{Exchange, Request, encode};
use crate::rules::num;

/// Pages of an offset list sampled at most.
const OFFSET_PAGES: usize = 5;
/// Batches whose transactions are sampled, from each end of the list.
const NEWEST_BATCHES: usize = 10;
const OLDEST_BATCHES: usize = 4;

/// One sampling job: an operation name and what to send (a walk of an
/// offset list sends its pages one after another).
enum Job {
    One(&'static str, Request),
    Offset(&'static str, Request, &'static str),
}

impl Ctx {
    fn run_jobs(&mut self, jobs: Vec<Job>) {
        let http = &self.http;
        let done: Vec<Vec<Sample>> = http.pool().map(&jobs, |job| match job {
            Job::One(op, request) => vec![Sample {
                op,
                exchange: http.send(request.clone()),
            }],
            Job::Offset(op, request, key) => walk_offset(http, op, request, key),
        });
        self.samples.extend(done.into_iter().flatten());
    }

    /// Samples every operation it has inputs for, discovering what lists
    /// show on the way. Writes only with `allow_writes`.
    pub fn sample(&mut self) {
        let inputs = self.inputs.clone();
        // Wave 1: every list and lookup that needs nothing discovered.
        let mut wave = vec![
            Job::One("aggregator", Request::get("")),
            Job::Offset("keys", Request::get("/keys"), "keys"),
            Job::Offset("merchants", Request::get("/merchants"), "merchants"),
            Job::Offset(
                "rail-merchants",
                Request::get("/rail-merchants"),
                "merchants",
            ),
            Job::Offset("qrs", Request::get("/qrs"), "qr_codes"),
            Job::Offset(
                "qrs-dynamic",
                Request::get("/qrs").q("type", "DYNAMIC"),
                "qr_codes",
            ),
            Job::Offset("refunds", Request::get("/refunds"), "keys"),
            Job::One(
                "batches",
                Request::get("/settlements/batches").q("limit", 100),
            ),
            Job::One(
                "batches",
                Request::get("/settlements/batches")
                    .q("limit", 100)
                    .q("direction", "ASC"),
            ),
            Job::One("ledger", Request::get("/ledger/accounts")),
            Job::Offset("webhooks", Request::get("/webhooks"), "endpoints"),
        ];
        let mut single = |op: &'static str,
                          value: Option<&String>,
                          why: &str,
                          make: &dyn Fn(&str) -> Request| {
            match value {
                Some(v) => wave.push(Job::One(op, make(v))),
                None => {
                    self.unsampled.insert(op, why.to_owned());
                }
            }
        };
        single(
            "account-info",
            inputs.iban.as_ref(),
            "needs an IBAN: pass --iban",
            &|v| Request::get("/account-info").q("iban", v),
        );
        single(
            "account-info",
            inputs.iban.as_ref(),
            "needs an IBAN: pass --iban",
            &|v| {
                Request::get("/account-info")
                    .q("iban", v)
                    .q("with_title_fetch", "true")
            },
        );
        single(
            "account-info-mobile",
            inputs.mobile.as_ref(),
            "needs a mobile number: pass --mobile",
            &|v| {
                Request::get("/account-info")
                    .q("alias_type", "MOBILE")
                    .q("alias_value", v)
            },
        );
        for title in ["false", "true"] {
            single(
                "title-fetch",
                inputs.till_code.as_ref(),
                "needs a till code: pass --till-code",
                &|v| {
                    Request::get("/title-fetch/alias")
                        .q("alias_type", "TILL_CODE")
                        .q("alias_value", v)
                        .q("with_title_fetch", title)
                },
            );
        }
        single(
            "alias",
            inputs.alias_id.as_ref(),
            "needs an alias id: pass --alias-id",
            &|v| Request::get(format!("/alias/{}", encode(v))),
        );
        self.run_jobs(wave);
        self.discover_from_lists();

        // Wave 2: what the lists showed.
        let mut wave = Vec::new();
        for token in self.transaction_batches() {
            wave.push(Job::One(
                "transactions",
                Request::get(format!(
                    "/settlements/batches/{}/transactions",
                    encode(&token)
                ))
                .q("limit", 100),
            ));
        }
        for id in &self.found.rail_merchants {
            wave.push(Job::One(
                "rail-merchant",
                Request::get(format!("/rail-merchants/{}", encode(id))),
            ));
        }
        if self.found.rail_merchants.is_empty() {
            self.unsampled.insert(
                "rail-merchant",
                "needs a rail merchant id: none was listed, pass --rail-merchant-id".into(),
            );
        }
        wave.extend(self.write_jobs());
        self.run_jobs(wave);
        self.discover_from_transactions();

        // Wave 3: payouts and charges of what the transactions showed.
        let mut wave = Vec::new();
        if let Some((token, _)) = self.found.busy_batch.clone() {
            wave.push(Job::One(
                "payouts",
                Request::get(format!(
                    "/settlements/batches/{}/transactions",
                    encode(&token)
                ))
                .q("only_settlement_txns", "true")
                .q("limit", 100),
            ));
        }
        for id in self.found.payments.iter().take(3) {
            wave.push(Job::One(
                "charges",
                Request::get(format!("/payments/{}/charges", encode(id))),
            ));
        }
        if self.found.payments.is_empty() {
            self.unsampled.insert(
                "charges",
                "needs a payment id: no transaction was listed, pass --payment-id".into(),
            );
        }
        self.run_jobs(wave);
    }

    fn discover_from_lists(&mut self) {
        self.found.batches = self
            .rows("batches", "batches")
            .take(100)
            .filter_map(|(_, b)| b["token"].as_str().map(str::to_owned))
            .collect();
        let mut rail: Vec<String> = self.inputs.rail_merchant_id.iter().cloned().collect();
        let listed: Vec<(String, String)> = self
            .rows("rail-merchants", "merchants")
            .filter_map(|(_, m)| {
                Some((
                    m["token"].as_str()?.to_owned(),
                    m["status"].as_str().unwrap_or("").to_owned(),
                ))
            })
            .collect();
        // The first merchant, and one without a rail record (status "").
        if let Some((first, _)) = listed.first() {
            rail.push(first.clone());
        }
        if let Some((unlinked, _)) = listed.iter().find(|(_, s)| s.is_empty()) {
            rail.push(unlinked.clone());
        }
        rail.dedup();
        self.found.rail_merchants = rail;
        if self.inputs.rail_merchant_id.is_none() {
            self.inputs.rail_merchant_id = self.found.rail_merchants.first().cloned();
        }
    }

    /// The batches whose transactions are sampled: the newest and the
    /// oldest of the listed ones.
    fn transaction_batches(&self) -> Vec<String> {
        let newest: Vec<String> = self
            .found
            .batches
            .iter()
            .take(NEWEST_BATCHES)
            .cloned()
            .collect();
        let oldest = self
            .samples("batches")
            .filter(|e| {
                e.request
                    .query
                    .iter()
                    .any(|(k, v)| k == "direction" && v == "ASC")
            })
            .filter_map(Exchange::data)
            .flat_map(|d| d["batches"].as_array().cloned().unwrap_or_default())
            .filter_map(|b| b["token"].as_str().map(str::to_owned))
            .take(OLDEST_BATCHES);
        let mut all = newest;
        for token in oldest {
            if !all.contains(&token) {
                all.push(token);
            }
        }
        all
    }

    fn discover_from_transactions(&mut self) {
        let mut busy: Option<(String, u64)> = None;
        for e in self.samples("transactions") {
            let Some(data) = e.data() else { continue };
            let n = num(&data["count"]["filtered_count"]).unwrap_or(0);
            let token = e
                .request
                .path
                .split('/')
                .nth(3)
                .map(|t| aggpay::util::truncate(t, 200).into_owned())
                .unwrap_or_default();
            if busy.as_ref().is_none_or(|(_, best)| n > *best) {
                busy = Some((token, n));
            }
        }
        self.found.busy_batch = busy.filter(|(_, n)| *n > 0);
        let mut payments: Vec<String> = self.inputs.payment_id.iter().cloned().collect();
        let rows: Vec<Value> = self
            .rows("transactions", "transactions")
            .map(|(_, t)| t.clone())
            .collect();
        let of_kind = |kind: &str| {
            rows.iter()
                .find(|t| t["transaction_type"] == kind)
                .and_then(|t| t["payment_id"].as_str())
                .map(str::to_owned)
        };
        payments.extend(of_kind("TT_PAYMENT"));
        payments.extend(of_kind("TT_REFUND"));
        payments.extend(
            rows.iter()
                .filter_map(|t| t["payment_id"].as_str())
                .take(1)
                .map(str::to_owned),
        );
        payments.dedup();
        self.found.payments = payments;
        if self.inputs.payment_id.is_none() {
            self.inputs.payment_id = self.found.payments.first().cloned();
        }
    }

    /// The writes: report exports of both kinds and one rotation.
    fn write_jobs(&mut self) -> Vec<Job> {
        let mut jobs = Vec::new();
        if !self.options.allow_writes {
            for op in ["report-export", "report-export-merchant", "rotate"] {
                self.unsampled
                    .insert(op, "a write: pass --allow-writes".into());
            }
            return jobs;
        }
        match self.found.batches.first() {
            Some(batch) => {
                let body = serde_json::json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_BATCH", "merchant_id": ""});
                jobs.push(Job::One(
                    "report-export",
                    Request::post("/settlements/report-exports", body.to_string()),
                ));
                match self.inputs.rail_merchant_id.as_ref() {
                    Some(merchant) => {
                        let body = serde_json::json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_MERCHANT", "merchant_id": merchant});
                        jobs.push(Job::One(
                            "report-export-merchant",
                            Request::post("/settlements/report-exports", body.to_string()),
                        ));
                    }
                    None => {
                        self.unsampled.insert(
                            "report-export-merchant",
                            "needs a rail merchant id: pass --rail-merchant-id".into(),
                        );
                    }
                }
            }
            None => {
                for op in ["report-export", "report-export-merchant"] {
                    self.unsampled
                        .insert(op, "no settlement batch was listed".into());
                }
            }
        }
        let Some(id) = self.inputs.access_key_id.clone() else {
            self.unsampled.insert(
                "rotate",
                "needs the key to rotate: pass --access-key-id (never the key in use; the harness never picks one)".into(),
            );
            return jobs;
        };
        // Refuse to rotate the key this run authenticates with.
        let record = self
            .rows("keys", "keys")
            .map(|(_, k)| k)
            .find(|k| k["id"] == id.as_str() || k["token"] == id.as_str());
        if let Some(secret) = record.and_then(|k| k["secret"].as_str()) {
            if self.http.key_matches(secret) {
                self.unsampled.insert(
                    "rotate",
                    format!("refusing to rotate {id}: it is the key in use"),
                );
                return jobs;
            }
            self.found.secret_before_rotation = Some(secret.to_owned());
        }
        jobs.push(Job::One(
            "rotate",
            Request::put(format!("/keys/{}/rotate", encode(&id))),
        ));
        jobs
    }
}

/// The pages of an offset list, `limit=100`, until it ends (a short or
/// empty page, or the count reached) or [`OFFSET_PAGES`] pages.
fn walk_offset(
    http: &crate::http::Http,
    op: &'static str,
    request: &Request,
    key: &str,
) -> Vec<Sample> {
    let mut out = Vec::new();
    let mut offset = 0u64;
    for _ in 0..OFFSET_PAGES {
        let exchange = http.send(request.clone().q("limit", 100).q("offset", offset));
        let rows = exchange
            .data()
            .and_then(|d| d[key].as_array())
            .map_or(0, Vec::len) as u64;
        let count = exchange
            .data()
            .and_then(|d| num(&d["count"]).or_else(|| d["count"].as_u64()));
        out.push(Sample { op, exchange });
        offset += rows;
        if rows == 0 || count.is_some_and(|c| offset >= c) {
            break;
        }
    }
    out
}

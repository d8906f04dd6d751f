//! What every rule sees: the server, the inputs, the sampled responses.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::http::{Exchange, Http, Request};

/// Inputs the harness cannot always discover: given by flags, or by the
/// embedded mock.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// A payment with charges (`--payment-id`).
    pub payment_id: Option<String>,
    /// An alias (`--alias-id`).
    pub alias_id: Option<String>,
    /// A rail merchant (`--rail-merchant-id`).
    pub rail_merchant_id: Option<String>,
    /// The key to rotate, never the key in use (`--access-key-id`).
    pub access_key_id: Option<String>,
    /// An IBAN account-info resolves (`--iban`).
    pub iban: Option<String>,
    /// A mobile number account-info resolves (`--mobile`).
    pub mobile: Option<String>,
    /// A till code title-fetch resolves (`--till-code`).
    pub till_code: Option<String>,
}

/// Run options the rules read.
#[derive(Debug, Clone)]
pub struct Options {
    /// Generated cases per property.
    pub cases: u32,
    /// The run's seed.
    pub seed: u64,
    /// Whether key rotation and export creation may run.
    pub allow_writes: bool,
}

/// Discovered values, from lists.
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// Batch tokens of the first page, newest first.
    pub batches: Vec<String>,
    /// A batch with the most transactions seen (token, filtered count).
    pub busy_batch: Option<(String, u64)>,
    /// Every batch `status` value seen.
    pub statuses: Vec<String>,
    /// The previous secret of the rotated key (for the rotation rules).
    pub secret_before_rotation: Option<String>,
}

/// The shared state of a run.
#[derive(Debug)]
pub struct Ctx {
    /// The server.
    pub http: Http,
    /// Given inputs (then completed by discovery).
    pub inputs: Inputs,
    /// Discovered values.
    pub found: Found,
    /// One sample response per operation, by name.
    pub corpus: BTreeMap<&'static str, Exchange>,
    /// Options.
    pub options: Options,
    /// Why an operation has no sample (missing input or writes off).
    pub unsampled: BTreeMap<&'static str, String>,
}

impl Ctx {
    /// A successful sample's `data`.
    pub fn data(&self, op: &str) -> Option<&Value> {
        self.corpus.get(op).and_then(Exchange::data)
    }

    /// Samples every operation it has inputs for, discovering what lists
    /// show on the way. Writes only with `allow_writes`.
    pub fn sample(&mut self) {
        let http = &self.http;
        let take =
            |ctx_corpus: &mut BTreeMap<&'static str, Exchange>, op: &'static str, r: Request| {
                let e = http.send(r);
                ctx_corpus.insert(op, e);
            };
        let mut corpus = BTreeMap::new();
        take(&mut corpus, "aggregator", Request::get(""));
        take(&mut corpus, "keys", Request::get("/keys"));
        take(&mut corpus, "merchants", Request::get("/merchants"));
        take(
            &mut corpus,
            "rail-merchants",
            Request::get("/rail-merchants"),
        );
        take(&mut corpus, "qrs", Request::get("/qrs"));
        take(
            &mut corpus,
            "qrs-dynamic",
            Request::get("/qrs").q("type", "DYNAMIC"),
        );
        take(&mut corpus, "refunds", Request::get("/refunds"));
        take(
            &mut corpus,
            "batches",
            Request::get("/settlements/batches").q("limit", 100),
        );
        take(&mut corpus, "ledger", Request::get("/ledger/accounts"));
        take(&mut corpus, "webhooks", Request::get("/webhooks"));
        self.corpus = corpus;

        // Discovery from the lists.
        let batches: Vec<String> = self
            .data("batches")
            .and_then(|d| d["batches"].as_array())
            .map(|rows| {
                rows.iter()
                    .filter_map(|b| b["token"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        self.found.statuses = self
            .data("batches")
            .and_then(|d| d["batches"].as_array())
            .map(|rows| {
                rows.iter()
                    .filter_map(|b| b["status"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        // The busiest of the first batches: enough rows for walks and pages.
        let mut busy: Option<(String, u64, Exchange)> = None;
        for token in batches.iter().take(12) {
            let e = self.http.send(
                Request::get(format!(
                    "/settlements/batches/{}/transactions",
                    crate::http::encode(token)
                ))
                .q("limit", 100),
            );
            let n = e
                .data()
                .and_then(|d| d["count"]["filtered_count"].as_str())
                .and_then(|s| s.parse::<u64>().ok())
                .unwrap_or(0);
            if busy.as_ref().is_none_or(|(_, best, _)| n > *best) {
                busy = Some((token.clone(), n, e));
            }
            if n > 150 {
                break;
            }
        }
        self.found.batches = batches;
        if let Some((token, n, e)) = busy {
            self.found.busy_batch = Some((token.clone(), n));
            self.corpus.insert("transactions", e);
            let payouts = self.http.send(
                Request::get(format!(
                    "/settlements/batches/{}/transactions",
                    crate::http::encode(&token)
                ))
                .q("only_settlement_txns", "true")
                .q("limit", 100),
            );
            self.corpus.insert("payouts", payouts);
            if self.inputs.payment_id.is_none() {
                self.inputs.payment_id = self
                    .data("transactions")
                    .and_then(|d| d["transactions"].as_array())
                    .and_then(|rows| {
                        rows.iter()
                            .find(|t| t["transaction_type"] == "TT_PAYMENT")
                            .or(rows.first())
                    })
                    .and_then(|t| t["payment_id"].as_str())
                    .map(str::to_owned);
            }
        } else {
            self.unsampled
                .insert("transactions", "no settlement batch was listed".into());
        }
        if self.inputs.rail_merchant_id.is_none() {
            self.inputs.rail_merchant_id = self
                .data("rail-merchants")
                .and_then(|d| d["merchants"][0]["token"].as_str())
                .map(str::to_owned);
        }

        let enc = crate::http::encode;
        let inputs = self.inputs.clone();
        let mut single = |op: &'static str,
                          need: &str,
                          flag: &str,
                          value: Option<&String>,
                          make: &dyn Fn(&str) -> Request| {
            match value {
                Some(v) => {
                    let e = self.http.send(make(v));
                    self.corpus.insert(op, e);
                }
                None => {
                    self.unsampled
                        .insert(op, format!("needs {need}: pass {flag}"));
                }
            }
        };
        single(
            "rail-merchant",
            "a rail merchant id",
            "--rail-merchant-id",
            inputs.rail_merchant_id.as_ref(),
            &|v| Request::get(format!("/rail-merchants/{}", enc(v))),
        );
        single(
            "charges",
            "a payment id",
            "--payment-id",
            inputs.payment_id.as_ref(),
            &|v| Request::get(format!("/payments/{}/charges", enc(v))),
        );
        single(
            "account-info",
            "an IBAN",
            "--iban",
            inputs.iban.as_ref(),
            &|v| Request::get("/account-info").q("iban", v),
        );
        single(
            "account-info-mobile",
            "a mobile number",
            "--mobile",
            inputs.mobile.as_ref(),
            &|v| {
                Request::get("/account-info")
                    .q("alias_type", "MOBILE")
                    .q("alias_value", v)
            },
        );
        single(
            "title-fetch",
            "a till code",
            "--till-code",
            inputs.till_code.as_ref(),
            &|v| {
                Request::get("/title-fetch/alias")
                    .q("alias_type", "TILL_CODE")
                    .q("alias_value", v)
            },
        );
        single(
            "alias",
            "an alias id",
            "--alias-id",
            inputs.alias_id.as_ref(),
            &|v| Request::get(format!("/alias/{}", enc(v))),
        );
        self.sample_writes();
    }

    fn sample_writes(&mut self) {
        if !self.options.allow_writes {
            for op in ["report-export", "rotate"] {
                self.unsampled
                    .insert(op, "a write: pass --allow-writes".into());
            }
            return;
        }
        match self.found.batches.first() {
            Some(batch) => {
                let body = serde_json::json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_BATCH", "merchant_id": ""});
                let r = Request {
                    method: "POST",
                    body: Some(body.to_string()),
                    ..Request::get("/settlements/report-exports")
                };
                let e = self.http.send(r);
                self.corpus.insert("report-export", e);
            }
            None => {
                self.unsampled
                    .insert("report-export", "no settlement batch was listed".into());
            }
        }
        let Some(id) = self.inputs.access_key_id.clone() else {
            self.unsampled.insert(
                "rotate",
                "needs the key to rotate: pass --access-key-id (never the key in use; the harness never picks one)".into(),
            );
            return;
        };
        // Refuse to rotate the key this run authenticates with.
        let keys = self
            .data("keys")
            .and_then(|d| d["keys"].as_array())
            .cloned()
            .unwrap_or_default();
        let record = keys
            .iter()
            .find(|k| k["id"] == id.as_str() || k["token"] == id.as_str());
        if let Some(secret) = record.and_then(|k| k["secret"].as_str()) {
            if self.http.key_matches(secret) {
                self.unsampled.insert(
                    "rotate",
                    format!("refusing to rotate {id}: it is the key in use"),
                );
                return;
            }
            self.found.secret_before_rotation = Some(secret.to_owned());
        }
        let r = Request {
            method: "PUT",
            ..Request::get(format!("/keys/{}/rotate", crate::http::encode(&id)))
        };
        let e = self.http.send(r);
        self.corpus.insert("rotate", e);
    }
}

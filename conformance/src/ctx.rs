//! What every rule sees: the server, the inputs, the sampled responses.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::http::{Exchange, Http};
use crate::model::Model;

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
    /// Why only `auth.header-case` can be judged (the server refuses the
    /// key header as the HTTP client spells it), when that is so.
    pub header_case_only: Option<String>,
}

/// Ids discovered from the lists and read one by one.
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// Payments whose charges were read.
    pub payments: Vec<String>,
    /// Rail merchants read one by one (the given one first).
    pub rail_merchants: Vec<String>,
}

/// One sampled exchange, named by the operation it exercises.
#[derive(Debug, Clone)]
pub struct Sample {
    /// The operation (`batches`, `transactions`, …).
    pub op: &'static str,
    /// The exchange.
    pub exchange: Exchange,
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
    /// Every exchange of the sampling, by operation: the model's pages
    /// and the reads of single records.
    pub samples: Vec<Sample>,
    /// The server's own data, as read.
    pub model: Model,
    /// Options.
    pub options: Options,
    /// Why an operation has no sample (missing input or writes off).
    pub unsampled: BTreeMap<&'static str, String>,
}

impl Ctx {
    /// Every sample of `op`.
    pub fn samples<'a>(&'a self, op: &'a str) -> impl Iterator<Item = &'a Exchange> + 'a {
        self.samples
            .iter()
            .filter(move |s| s.op == op)
            .map(|s| &s.exchange)
    }

    /// The first sample of `op`.
    pub fn first<'a>(&'a self, op: &'a str) -> Option<&'a Exchange> {
        self.samples(op).next()
    }

    /// The first successful sample's `data`.
    pub fn data<'a>(&'a self, op: &'a str) -> Option<&'a Value> {
        self.samples(op).find_map(Exchange::data)
    }

    /// The sample of `op`, or why there is none.
    pub fn sample_or_why<'a>(&'a self, op: &'a str) -> Result<&'a Exchange, String> {
        self.first(op).ok_or_else(|| {
            self.unsampled
                .get(op)
                .cloned()
                .unwrap_or_else(|| format!("{op} was not sampled"))
        })
    }
}

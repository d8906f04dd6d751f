//! What every rule sees: the server, the inputs, the sampled responses.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::contract::{Op, OpId};
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
    /// A second key to rotate, never the key in use nor the first
    /// (`--second-access-key-id`).
    pub second_access_key_id: Option<String>,
    /// An IBAN account-info resolves (`--iban`).
    pub iban: Option<String>,
    /// A mobile number account-info resolves (`--mobile`).
    pub mobile: Option<String>,
    /// A till code title-fetch resolves (`--till-code`).
    pub till_code: Option<String>,
}

impl Inputs {
    /// Every input a mock's info gives.
    pub fn of_mock(info: aggpay_mock::MockInfo) -> Self {
        Self {
            payment_id: info.payment_id.map(|p| p.to_string()),
            alias_id: Some(info.alias_id.to_string()),
            rail_merchant_id: Some(info.rail_merchant_id.to_string()),
            access_key_id: info.access_key_id.map(|k| k.to_string()),
            second_access_key_id: info.second_access_key_id.map(|k| k.to_string()),
            iban: Some(info.iban),
            mobile: Some(info.mobile),
            till_code: Some(info.till_code),
        }
    }

    /// `self`, with what it lacks taken from `other`.
    pub fn or(self, other: Self) -> Self {
        Self {
            payment_id: self.payment_id.or(other.payment_id),
            alias_id: self.alias_id.or(other.alias_id),
            rail_merchant_id: self.rail_merchant_id.or(other.rail_merchant_id),
            access_key_id: self.access_key_id.or(other.access_key_id),
            second_access_key_id: self.second_access_key_id.or(other.second_access_key_id),
            iban: self.iban.or(other.iban),
            mobile: self.mobile.or(other.mobile),
            till_code: self.till_code.or(other.till_code),
        }
    }

    /// The command-line flags that give these inputs.
    pub fn flags(&self) -> Vec<String> {
        [
            ("--payment-id", &self.payment_id),
            ("--alias-id", &self.alias_id),
            ("--rail-merchant-id", &self.rail_merchant_id),
            ("--access-key-id", &self.access_key_id),
            ("--second-access-key-id", &self.second_access_key_id),
            ("--iban", &self.iban),
            ("--mobile", &self.mobile),
            ("--till-code", &self.till_code),
        ]
        .into_iter()
        .filter_map(|(flag, value)| Some([flag.to_owned(), value.clone()?]))
        .flatten()
        .collect()
    }
}

/// Run options the rules read.
#[derive(Debug, Clone)]
pub struct Options {
    /// Generated cases per property.
    pub cases: u32,
    /// Random sequences `explore.sequences` runs.
    pub sequences: u32,
    /// Commands per random sequence at most.
    pub steps: u32,
    /// The run's seed.
    pub seed: u64,
    /// Whether key rotation and export creation may run.
    pub allow_writes: bool,
    /// Whether observations count against the run (`--strict`).
    pub strict: bool,
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

/// What a sample is of: an operation as the model reads it, or one of
/// the operation's other readings. A typed key: a sample asked for by a
/// misspelt name does not compile (a string would skip a rule quietly).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sampled {
    /// The operation with the inputs the model has (account-info by IBAN,
    /// a batch export).
    Op(OpId),
    /// Account-info by a mobile alias.
    AccountInfoByMobile,
    /// A merchant export.
    MerchantExport,
    /// The aggregator record read again after the writes.
    AggregatorAfterWrites,
}

impl Sampled {
    /// Its name in messages: the operation's, or the reading's.
    pub fn name(self) -> &'static str {
        match self {
            Sampled::Op(id) => Op::get(id).name,
            Sampled::AccountInfoByMobile => "account-info-mobile",
            Sampled::MerchantExport => "report-export-merchant",
            Sampled::AggregatorAfterWrites => "aggregator-after",
        }
    }
}

impl From<OpId> for Sampled {
    fn from(id: OpId) -> Self {
        Sampled::Op(id)
    }
}

impl std::fmt::Display for Sampled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One sampled exchange, named by what it is of.
#[derive(Debug, Clone)]
pub struct Sample {
    /// What it is of.
    pub op: Sampled,
    /// The exchange.
    pub exchange: Exchange,
}

/// The shared state of a run.
#[derive(Debug)]
pub struct Ctx {
    /// The server.
    pub http: Http,
    /// What the rules that judge every answer found.
    pub answers: std::sync::Arc<crate::rules::AnswerLog>,
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
    pub unsampled: BTreeMap<Sampled, String>,
}

impl Ctx {
    /// Every sample of `op`.
    pub fn samples(&self, op: impl Into<Sampled>) -> impl Iterator<Item = &Exchange> + '_ {
        let op = op.into();
        self.samples
            .iter()
            .filter(move |s| s.op == op)
            .map(|s| &s.exchange)
    }

    /// The first sample of `op`.
    pub fn first(&self, op: impl Into<Sampled>) -> Option<&Exchange> {
        self.samples(op).next()
    }

    /// The first successful sample's `data`.
    pub fn data(&self, op: impl Into<Sampled>) -> Option<&Value> {
        self.samples(op).find_map(Exchange::data)
    }

    /// The sample of `op`, or why there is none.
    pub fn sample_or_why(&self, op: impl Into<Sampled>) -> Result<&Exchange, String> {
        let op = op.into();
        self.first(op).ok_or_else(|| self.why_unsampled(op))
    }

    /// The ids the run knows for `op`'s path: the ones read or given, the
    /// given one first (batch tokens: the batch list's, in its order).
    pub fn known_ids(&self, op: OpId) -> Vec<String> {
        match op {
            OpId::RailMerchant => self.found.rail_merchants.clone(),
            OpId::Charges => self.found.payments.clone(),
            OpId::Alias => self.inputs.alias_id.iter().cloned().collect(),
            OpId::Transactions => self
                .model
                .rows(OpId::Batches)
                .into_iter()
                .filter_map(|b| b["token"].as_str().map(str::to_owned))
                .collect(),
            OpId::Rotate => self.inputs.access_key_id.iter().cloned().collect(),
            _ => Vec::new(),
        }
    }

    /// The lookups the server refused with a 400 when asked with a value
    /// it showed or was given, under WIRE.md's names (`iban`,
    /// `alias_value`). API.md gives those names by purpose only, and a
    /// server that reads them under names of its own refuses every such
    /// request: which one it is cannot be told from outside, so no
    /// required rule judges that lookup, and `wire.lookup-names` reports
    /// it.
    pub fn lookups_refused(&self) -> impl Iterator<Item = &Sample> + '_ {
        self.samples.iter().filter(|s| {
            let op = match s.op {
                Sampled::Op(op) => op,
                Sampled::AccountInfoByMobile => OpId::AccountInfo,
                _ => return false,
            };
            s.exchange.refused()
                && Op::get(op).params.iter().any(|p| {
                    matches!(p.role, crate::contract::Role::Lookup(_))
                        && p.named == crate::contract::Named::Wire
                })
        })
    }

    /// Whether `request` is a lookup of a kind the server refused
    /// ([`Ctx::lookups_refused`]): by IBAN, by a mobile alias, or a till
    /// code's title fetch.
    pub fn lookup_refused(&self, request: &crate::http::Request) -> bool {
        let kind = |r: &crate::http::Request| {
            (
                r.path.clone(),
                r.query_value(crate::contract::names::IBAN).is_some(),
                r.query_value(crate::contract::names::ALIAS_TYPE)
                    .map(str::to_owned),
            )
        };
        let asked = kind(request);
        self.lookups_refused()
            .any(|s| kind(&s.exchange.request) == asked)
    }

    /// Why a rule that needs a lookup's answer has none: the lookups the
    /// server refused ([`Ctx::lookups_refused`]), else `otherwise`.
    pub fn why_no_lookup(&self, otherwise: &str) -> String {
        let refused: Vec<String> = self.lookups_refused().map(|s| s.op.to_string()).collect();
        if refused.is_empty() {
            otherwise.to_owned()
        } else {
            format!(
                "not applicable: {} refused a value it showed or was given (400); it may read the lookup under names of its own (API.md gives them by purpose only; see wire.lookup-names)",
                refused.join(", ")
            )
        }
    }

    /// Why `op` has no sample.
    pub fn why_unsampled(&self, op: impl Into<Sampled>) -> String {
        let op = op.into();
        self.unsampled
            .get(&op)
            .cloned()
            .unwrap_or_else(|| format!("{op} was not sampled"))
    }
}

//! The mock's dataset: deterministic from the seed, generated row by row.

mod batches;
mod directory;
mod live;
mod seq;

pub(crate) use batches::BatchRows;
pub(crate) use live::View;

pub(crate) use seq::{BatchSeq, Seq, below_from_first, cursor_page};

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use aggpay::{AggregatorId, AggregatorMerchantId, PartnerId, RailMerchantId};

use crate::config::Sizes;
use crate::synth::{Rng, mix, push_hex, unmix};

/// Maps a row index to a 16-hex-digit identifier body and back, so an
/// identifier finds its row in O(1) without any table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Codec {
    key: u64,
}

impl Codec {
    fn new(seed: u64, tag: &str) -> Self {
        Self {
            key: Rng::new(seed, tag, 0).next(),
        }
    }

    pub(crate) fn encode(self, index: u64) -> String {
        self.token("", index)
    }

    /// `prefix` then `encode(index)`.
    pub(crate) fn token(self, prefix: &str, index: u64) -> String {
        let mut out = String::with_capacity(prefix.len() + 16);
        out.push_str(prefix);
        push_hex(&mut out, mix(index ^ self.key), 16);
        out
    }

    pub(crate) fn decode(self, body: &str) -> Option<u64> {
        if body.len() != 16 || !body.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return None;
        }
        u64::from_str_radix(body, 16)
            .ok()
            .map(|v| unmix(v) ^ self.key)
    }
}

/// Everything the mock serves that does not change at run time.
#[derive(Debug)]
pub(crate) struct Dataset {
    pub(crate) seed: u64,
    pub(crate) sizes: Sizes,
    pub(crate) aggregator_id: AggregatorId,
    pub(crate) aggregator_name: String,
    pub(crate) partner_id: PartnerId,
    codecs: Codecs,
    ibans: HashMap<String, u64>,
    mobiles: HashMap<String, u64>,
    tills: HashMap<String, u64>,
    /// Per aggregator merchant, what each of its transactions repeats.
    labels: Vec<MerchantLabel>,
    /// The payouts of batches asked for so far, by (batch, transactions
    /// settled): deriving them reads every transaction of the batch once.
    payout_plans: Mutex<HashMap<(u64, u64), Arc<PayoutPlan>>>,
}

/// What every transaction of an aggregator merchant carries about it,
/// derived once at start (the derivations stay the truth, `Dataset::new`
/// only keeps their results): a page is a hundred rows made on demand.
#[derive(Debug)]
struct MerchantLabel {
    name: String,
    token: AggregatorMerchantId,
    rail_token: RailMerchantId,
    ntn: String,
}

/// The payouts of a batch: per aggregator merchant with transactions in
/// it, in merchant order, the sums of its rows' seven amounts.
pub(crate) type PayoutPlan = Vec<(u64, batches::Amounts)>;

#[derive(Debug)]
struct Codecs {
    batch: Codec,
    payment: Codec,
    rail_merchant: Codec,
    alias: Codec,
    merchant: Codec,
}

impl Dataset {
    pub(crate) fn new(seed: u64, sizes: Sizes) -> Self {
        let mut rng = Rng::new(seed, "aggregator", 0);
        let aggregator_id = parse_generated(AggregatorId::parse(rng.token("agg_", 20)));
        let partner_id = parse_generated(PartnerId::parse(rng.token("partner_", 12)));
        let aggregator_name = format!(
            "{} Payments",
            rng.pick(crate::synth::FIRST_NAMES).replace(' ', "")
        );
        let mut data = Self {
            seed,
            sizes,
            aggregator_id,
            aggregator_name,
            partner_id,
            codecs: Codecs {
                batch: Codec::new(seed, "codec-batch"),
                payment: Codec::new(seed, "codec-payment"),
                rail_merchant: Codec::new(seed, "codec-mer"),
                alias: Codec::new(seed, "codec-als"),
                merchant: Codec::new(seed, "codec-am"),
            },
            ibans: HashMap::new(),
            mobiles: HashMap::new(),
            tills: HashMap::new(),
            labels: Vec::new(),
            payout_plans: Mutex::new(HashMap::new()),
        };
        for i in 0..data.sizes.merchants {
            data.ibans.insert(data.merchant_iban(i), i);
            data.tills.insert(data.till_code(i), i);
            data.labels.push(MerchantLabel {
                name: data.merchant_name(i),
                token: data.merchant_token(i),
                rail_token: data.rail_merchant_token(i),
                ntn: data.merchant_ntn(i),
            });
        }
        for i in 0..data.rail_merchant_count() {
            data.mobiles.insert(data.rail_mobile(i), i);
        }
        data
    }
}

/// Generated identifiers are built from a prefix and hex digits, which every
/// identifier type accepts; a failure here is a bug of the generator, and
/// the unit tests of this module generate every kind of row.
#[expect(
    clippy::expect_used,
    reason = "the generator's own output: a failure is its bug, which the unit tests show"
)]
pub(crate) fn parse_generated<T>(value: Result<T, aggpay::Error>) -> T {
    value.expect("the generator makes valid identifiers")
}

#[cfg(test)]
mod tests;

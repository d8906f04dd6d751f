//! The sampling of a run: the model of the server's data read in waves,
//! each wave's requests side by side (a remote server costs a few round
//! trips, not hundreds), and the reads of single records kept as samples.

use serde_json::Value;

use crate::contract::{Op, OpId, names};
use crate::ctx::{Ctx, Sample, Sampled};
use crate::http::Request;
use crate::model::{
    FilterDefault, ListModel, NamedOtherwise, Picker, Rotation, Several, Source, token_of, writes,
};

/// Batches whose transactions are read, at most.
const TRANSACTION_LISTS: usize = 12;
/// Payments whose charges are read, at most.
const CHARGES: usize = 6;

/// One sampling job.
enum Job {
    List(Source),
    One(Sampled, Request),
    /// A report export (what it is a sample of, the body).
    Export(Sampled, String),
    /// A key rotation (the key, its secret before).
    Rotate(String, Option<String>),
    /// Whether the server reads the filters of the model's list of this
    /// operation under WIRE.md's names, and how it reads several values
    /// of one: asked beside the next wave's reads, so that it costs no
    /// round trip of its own.
    FilterNames(OpId),
}

enum Done {
    List(Box<ListModel>),
    One(Box<Sample>),
    Rotation(Box<Rotation>),
    FilterNames(OpId, Vec<NamedOtherwise>, Several, Vec<FilterDefault>),
}

impl Ctx {
    fn run_jobs(&mut self, jobs: Vec<Job>) {
        let (http, model) = (&self.http, &self.model);
        let done = http.pool().map(&jobs, |job| match job {
            Job::List(source) => Done::List(Box::new(ListModel::read(http, source.clone()))),
            Job::FilterNames(op) => {
                let (unread, several, defaults) = model
                    .list(*op)
                    .map(|l| l.filters_as_read(http))
                    .unwrap_or_default();
                Done::FilterNames(*op, unread, several, defaults)
            }
            Job::One(op, request) => Done::One(Box::new(Sample {
                op: *op,
                exchange: http.send(request.clone()),
            })),
            Job::Export(op, body) => Done::One(Box::new(Sample {
                op: *op,
                exchange: writes::export(http, body),
            })),
            Job::Rotate(id, before) => {
                Done::Rotation(Box::new(writes::rotate(http, id, before.as_deref())))
            }
        });
        for d in done {
            match d {
                Done::List(mut list) => {
                    // The key list read again after the writes reads its
                    // filters under the names it read them by before.
                    if let Some(before) = &self.model.keys_before
                        && before.source.op.id == list.source.op.id
                    {
                        list.filters_named_otherwise = before.filters_named_otherwise.clone();
                        list.several = before.several.clone();
                    }
                    let op = Sampled::Op(list.source.op.id);
                    self.samples.extend(list.pages.iter().map(|e| Sample {
                        op,
                        exchange: e.clone(),
                    }));
                    self.model.lists.push(*list);
                }
                Done::One(sample) => self.samples.push(*sample),
                Done::FilterNames(op, unread, several, defaults) => {
                    if let Some(list) = self
                        .model
                        .lists
                        .iter_mut()
                        .find(|l| l.source.op.id == op && l.source.base.is_empty())
                    {
                        list.filters_named_otherwise = unread;
                        list.several = several;
                        list.defaults = defaults;
                    }
                }
                Done::Rotation(rotation) => {
                    self.samples.push(Sample {
                        op: OpId::Rotate.into(),
                        exchange: rotation.answer.clone(),
                    });
                    self.model.rotation = Some(*rotation);
                }
            }
        }
    }

    /// Reads the model: every operation it has inputs for, discovering
    /// what lists show on the way. Writes only with `allow_writes`.
    pub fn sample(&mut self) {
        let wave = self.first_wave();
        self.run_jobs(wave);
        let mut wave = self.second_wave();
        wave.extend(self.rotation());
        self.run_jobs(wave);
        let mut wave = self.third_wave();
        wave.extend(self.exports());
        self.run_jobs(wave);
    }

    /// Every list, and the reads that need nothing discovered.
    fn first_wave(&mut self) -> Vec<Job> {
        let qrs = Source::of(Op::get(OpId::Qrs));
        let mut wave: Vec<Job> = [
            OpId::Keys,
            OpId::Merchants,
            OpId::RailMerchants,
            OpId::Refunds,
            OpId::Batches,
            OpId::Webhooks,
        ]
        .into_iter()
        .map(|op| Job::List(Source::of(Op::get(op))))
        .collect();
        wave.push(Job::List(qrs.clone()));
        wave.push(Job::List(qrs.with(names::TYPE, "DYNAMIC")));
        wave.push(Job::One(
            OpId::Aggregator.into(),
            Request::to(OpId::Aggregator),
        ));
        wave.push(Job::One(OpId::Ledger.into(), Request::to(OpId::Ledger)));
        let inputs = self.inputs.clone();
        let mut single =
            |op: Sampled, value: Option<&String>, why: &str, make: &dyn Fn(&str) -> Request| {
                match value {
                    Some(v) => wave.push(Job::One(op, make(v))),
                    None => {
                        self.unsampled.insert(op, why.to_owned());
                    }
                }
            };
        let iban = "needs an IBAN: pass --iban";
        for title in [None, Some("true")] {
            single(OpId::AccountInfo.into(), inputs.iban.as_ref(), iban, &|v| {
                let r = Request::to(OpId::AccountInfo).q(names::IBAN, v);
                match title {
                    Some(t) => r.q(names::WITH_TITLE_FETCH, t),
                    None => r,
                }
            });
        }
        single(
            Sampled::AccountInfoByMobile,
            inputs.mobile.as_ref(),
            "needs a mobile number: pass --mobile",
            &|v| {
                Request::to(OpId::AccountInfo)
                    .q(names::ALIAS_TYPE, "MOBILE")
                    .q(names::ALIAS_VALUE, v)
            },
        );
        for title in ["false", "true"] {
            single(
                OpId::TitleFetch.into(),
                inputs.till_code.as_ref(),
                "needs a till code: pass --till-code",
                &|v| {
                    Request::to(OpId::TitleFetch)
                        .q(names::ALIAS_TYPE, "TILL_CODE")
                        .q(names::ALIAS_VALUE, v)
                        .q(names::WITH_TITLE_FETCH, title)
                },
            );
        }
        single(
            OpId::Alias.into(),
            inputs.alias_id.as_ref(),
            "needs an alias id: pass --alias-id",
            &|v| Request::to_one(OpId::Alias, v),
        );
        wave
    }

    /// What the lists showed: transactions of batches across the list,
    /// rail merchants read one by one.
    fn second_wave(&mut self) -> Vec<Job> {
        let mut wave: Vec<Job> = self
            .model
            .lists
            .iter()
            .filter(|l| l.source.base.is_empty())
            .map(|l| Job::FilterNames(l.source.op.id))
            .collect();
        let transactions = Op::get(OpId::Transactions);
        for token in self.picked_batches() {
            let mut source = Source::of(transactions);
            source.path = transactions.path_with(&token);
            source.label = format!("transactions of {token}");
            wave.push(Job::List(source));
        }
        let rail = self.picked_rail_merchants();
        if rail.is_empty() {
            self.unsampled.insert(
                OpId::RailMerchant.into(),
                "needs a rail merchant id: none was listed, pass --rail-merchant-id".into(),
            );
        }
        for id in &rail {
            wave.push(Job::One(
                OpId::RailMerchant.into(),
                Request::to_one(OpId::RailMerchant, id),
            ));
        }
        self.found.rail_merchants = rail;
        if self.inputs.rail_merchant_id.is_none() {
            self.inputs.rail_merchant_id = self.found.rail_merchants.first().cloned();
        }
        wave
    }

    /// Payouts, charges of the payments the transactions showed, and the
    /// lists a write changes, read again.
    fn third_wave(&mut self) -> Vec<Job> {
        let mut wave = Vec::new();
        let lists = self.model.transaction_lists();
        for list in lists.iter().take(2) {
            let mut source = list
                .source
                .clone()
                .with(names::ONLY_SETTLEMENT_TXNS, "true");
            source.rows = "settlement_transactions";
            source.label = source.label.replacen("transactions of", "payouts of", 1);
            wave.push(Job::List(source));
        }
        let payments = self.picked_payments();
        if payments.is_empty() {
            self.unsampled.insert(
                OpId::Charges.into(),
                "needs a payment id: no transaction was listed, pass --payment-id".into(),
            );
        }
        for id in &payments {
            wave.push(Job::One(
                OpId::Charges.into(),
                Request::to_one(OpId::Charges, id),
            ));
        }
        self.found.payments = payments;
        if self.inputs.payment_id.is_none() {
            self.inputs.payment_id = self.found.payments.first().cloned();
        }
        if self.model.rotation.is_some() {
            // The state after the write, as both operations show it.
            if let Some(i) = self
                .model
                .lists
                .iter()
                .position(|l| l.source.op.id == OpId::Keys)
            {
                self.model.keys_before = Some(self.model.lists.remove(i));
            }
            wave.push(Job::List(Source::of(Op::get(OpId::Keys))));
            wave.push(Job::One(
                Sampled::AggregatorAfterWrites,
                Request::to(OpId::Aggregator),
            ));
        }
        wave
    }

    /// Batches whose transactions are read: the first and last of the
    /// list, seeded ones from deep inside it, and of each status the
    /// oldest (where a large batch most likely is) and a seeded one.
    fn picked_batches(&self) -> Vec<String> {
        let batches: Vec<&Value> = self.model.rows(OpId::Batches);
        let mut pick = Picker::new(self.options.seed, "transactions-of");
        let mut out: Vec<String> = pick
            .positions(batches.len(), 2)
            .into_iter()
            .map(|i| token_of(batches[i]))
            .collect();
        for status in crate::contract::BATCH_STATUSES {
            let of: Vec<&&Value> = batches.iter().filter(|b| b["status"] == *status).collect();
            out.extend(of.first().map(|b| token_of(b)));
            if let Some(b) = pick.pick(&of) {
                out.push(token_of(b));
            }
        }
        let mut seen = std::collections::HashSet::new();
        out.retain(|t| seen.insert(t.clone()) && !t.is_empty());
        out.truncate(TRANSACTION_LISTS);
        out
    }

    /// Rail merchants read one by one: the given one, the first, the
    /// last, a seeded one from inside, one without a rail record (status
    /// ""), one with a non-ASCII name.
    fn picked_rail_merchants(&self) -> Vec<String> {
        let rows: Vec<&Value> = self.model.rows(OpId::RailMerchants);
        let mut pick = Picker::new(self.options.seed, "rail-merchants");
        let mut out: Vec<String> = self.inputs.rail_merchant_id.iter().cloned().collect();
        out.extend(
            pick.positions(rows.len(), 1)
                .into_iter()
                .map(|i| token_of(rows[i])),
        );
        out.extend(rows.iter().find(|m| m["status"] == "").map(|m| token_of(m)));
        out.extend(
            rows.iter()
                .find(|m| !m["name"].as_str().unwrap_or("").is_ascii())
                .map(|m| token_of(m)),
        );
        let mut seen = std::collections::HashSet::new();
        out.retain(|t| seen.insert(t.clone()));
        out
    }

    /// Payments whose charges are read: the given one, and payment
    /// transactions first, last and deep in the largest lists (a payment
    /// only a refund names may not be readable: API.md does not say).
    fn picked_payments(&self) -> Vec<String> {
        let mut pick = Picker::new(self.options.seed, "payments");
        let mut out: Vec<String> = self.inputs.payment_id.iter().cloned().collect();
        for list in self.model.transaction_lists().iter().take(2) {
            let payments: Vec<&Value> = list
                .known()
                .filter(|t| t["transaction_type"] == "TT_PAYMENT")
                .collect();
            for i in pick.positions(payments.len(), 1) {
                out.extend(payments[i]["payment_id"].as_str().map(str::to_owned));
            }
        }
        let mut seen = std::collections::HashSet::new();
        out.retain(|p| !p.is_empty() && seen.insert(p.clone()));
        out.truncate(CHARGES);
        out
    }

    /// Whether writes may run; when not, says so for each.
    fn writes_allowed(&mut self) -> bool {
        if !self.options.allow_writes {
            for op in [
                OpId::ReportExport.into(),
                Sampled::MerchantExport,
                OpId::Rotate.into(),
            ] {
                self.unsampled
                    .insert(op, "a write: pass --allow-writes".into());
            }
        }
        self.options.allow_writes
    }

    /// Exports of both kinds, of a batch from inside the list (not the
    /// newest, which a server answering for the newest whatever was asked
    /// would pass) whose transactions were read, for a merchant those
    /// transactions name. Each on its own connection, beside the third
    /// wave's reads (no read shows what they make).
    fn exports(&mut self) -> Vec<Job> {
        let mut jobs = Vec::new();
        if !self.writes_allowed() {
            return jobs;
        }
        let newest = self.model.rows(OpId::Batches).last().map(|b| token_of(b));
        let mut pick = Picker::new(self.options.seed, "exports");
        let read: Vec<(String, Vec<String>)> = self
            .model
            .transaction_lists()
            .iter()
            .filter_map(|l| {
                // The batch the list was read from: its path's id.
                let batch = l.source.path.split('/').nth(3)?.to_owned();
                l.known().next()?;
                let merchants = l
                    .known()
                    .filter_map(|t| t["rail_merchant_id"].as_str().map(str::to_owned))
                    .collect();
                Some((batch, merchants))
            })
            .filter(|(b, _)| Some(b) != newest.as_ref())
            .collect();
        let chosen = pick.pick(&read).cloned().or_else(|| {
            let batches = self.model.rows(OpId::Batches);
            let at = pick.positions(batches.len(), 1);
            at.last().map(|i| (token_of(batches[*i]), Vec::new()))
        });
        let Some((batch, merchants)) = chosen else {
            for op in [OpId::ReportExport.into(), Sampled::MerchantExport] {
                self.unsampled
                    .insert(op, "no settlement batch was listed".into());
            }
            return jobs;
        };
        let body = serde_json::json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_BATCH", "merchant_id": ""});
        jobs.push(Job::Export(OpId::ReportExport.into(), body.to_string()));
        let merchant = pick
            .pick(&merchants)
            .cloned()
            .or_else(|| self.inputs.rail_merchant_id.clone());
        match merchant {
            Some(merchant) => {
                let body = serde_json::json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_MERCHANT", "merchant_id": merchant});
                jobs.push(Job::Export(Sampled::MerchantExport, body.to_string()));
            }
            None => {
                self.unsampled.insert(
                    Sampled::MerchantExport,
                    "needs a rail merchant id: pass --rail-merchant-id".into(),
                );
            }
        }
        jobs
    }

    /// One rotation of the key given, never the key in use.
    fn rotation(&mut self) -> Option<Job> {
        if !self.writes_allowed() {
            return None;
        }
        let Some(id) = self.inputs.access_key_id.clone() else {
            self.unsampled.insert(
                OpId::Rotate.into(),
                "needs the key to rotate: pass --access-key-id (never the key in use; the harness never picks one)".into(),
            );
            return None;
        };
        let record = self
            .model
            .rows(OpId::Keys)
            .into_iter()
            .find(|k| k["id"] == id.as_str() || k["token"] == id.as_str())
            .cloned();
        let before = record.as_ref().and_then(|k| k["secret"].as_str());
        if let Some(why) = writes::key_in_use(&self.http, &id, before) {
            self.unsampled.insert(OpId::Rotate.into(), why);
            return None;
        }
        Some(Job::Rotate(id, before.map(str::to_owned)))
    }
}

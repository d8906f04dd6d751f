//! The writes of a sequence: each judged, then the frame (the observable
//! state read back: only the write's effect may have changed) and, after
//! a rotation of the allowed key, the sweep (every operation tried with
//! every secret the machine holds).

use std::sync::PoisonError;

use serde_json::Value;

use super::SECRET_KEEPS_ITS_REACH;
use super::command::{Command, Cred, Naming};
use super::machine::{self, Holder, Machine, Opens, drift, split, swept};
use super::script::Script;
use super::{Budget, Explorer, SWEEP_RETIRED, UNCHANGING_ATTEMPTS, invariant_of};
use crate::contract::{Op, OpId, names};
use crate::http::{Auth, Exchange, Request};
use crate::model::{ListModel, Source, key_id};
use crate::pool::urgent;
use crate::rules::claims::{
    EXPORT_IS_ASKED, FAILED_ROTATION_UNDONE, NO_SERVER_ERROR, ROTATES_THE_KEY_ASKED, UNAUTHORIZED,
    VALID_REQUEST_SUCCEEDS,
};
use crate::rules::{Check, Finding};

impl Explorer<'_> {
    /// A write. A rotation of the allowed key changes the machine: it
    /// holds the machine alone, from its request to the end of its frame
    /// and sweep. Every other write must change nothing, so it goes on
    /// beside the reads and writes of other sequences (when one does
    /// change something, another's frame may see it too: the failure
    /// reported is one that fails again alone, `Check::property_n`).
    pub(super) fn write(
        &self,
        command: &Command,
        script: &mut Script<'_>,
        budget: &mut Budget,
    ) -> Result<(), Finding> {
        if !budget.spend(command) {
            script.skipped(command, "the sequence's budget of such writes is spent");
            return Ok(());
        }
        if let Command::Rotate {
            target: Naming::Known(_),
            cred: Cred::Configured,
        } = command
        {
            let mut machine = self.machine.write().unwrap_or_else(PoisonError::into_inner);
            return self.rotate_allowed(&mut machine, command, script);
        }
        let (result, resync) = {
            let machine = self.machine();
            self.unchanging_write(&machine, command, script)
        };
        if resync {
            let mut machine = self.machine.write().unwrap_or_else(PoisonError::into_inner);
            self.resync(&mut machine);
        }
        result
    }

    /// A rotation of the key the user allowed to rotate, with the
    /// configured key: the rotated key's secret changes, nothing else;
    /// then every read with every secret.
    pub(super) fn rotate_allowed(
        &self,
        machine: &mut Machine,
        command: &Command,
        script: &mut Script<'_>,
    ) -> Result<(), Finding> {
        let c = &self.check;
        let Some(k) = machine.rotatable else {
            script.skipped(command, "no key may be rotated (--access-key-id)");
            return Ok(());
        };
        let before = machine.keys[k].secret.clone();
        let id = machine.keys[k].id.clone();
        let rotation = crate::model::writes::rotate(&c.ctx.http, &id, Some(&before));
        script.step(command, &rotation.answer);
        let Some(key) = rotation.key().cloned() else {
            // Lost, and not recovered, or refused: the key list says where
            // it stands. A rotation answered with an error (not one that
            // says it was not handled) must have left the key as it was.
            let answer = &rotation.answer;
            let failed = answer.transient.is_none()
                && answer
                    .status()
                    .is_some_and(|s| s >= 400 && !aggpay_internal::http::is_not_handled_status(s));
            self.resync(machine);
            if failed && machine.keys[k].secret != before {
                return Err(c.fail(
                    &FAILED_ROTATION_UNDONE,
                    answer,
                    format!(
                        "the rotation of {id} was answered {}, yet the key list now shows a secret no answer gave: the failed rotation was performed",
                        answer.status().unwrap_or(0)
                    ),
                ));
            }
            return Ok(());
        };
        if key_id(&key) != id {
            let failure = c.fail(
                &ROTATES_THE_KEY_ASKED,
                &rotation.answer,
                format!("asked to rotate {id}, answered with key {:?}", key_id(&key)),
            );
            self.resync(machine);
            return Err(failure);
        }
        let Some(new) = key["secret"]
            .as_str()
            .filter(|s| !s.is_empty() && **s != before)
        else {
            return Err(c.fail(
                &ROTATES_THE_KEY_ASKED,
                &rotation.answer,
                "the rotation gave no new secret",
            ));
        };
        c.ctx.http.learn_secret(new);
        let before_opens = machine.keys[k].opens.clone();
        machine.rotated(k, new.to_owned(), key["is_active"].as_bool());
        let answer = &rotation.answer;
        let swept = self.sweep(machine, Some((k, before_opens)), answer, Some(answer));
        if swept.is_err() {
            self.resync(machine);
        }
        swept
    }

    /// A write that must change nothing the machine holds: a rotation of
    /// an id that names no key, a write with a secret that must be
    /// refused, an export. Its verdict, and whether the machine must read
    /// the keys again (the write did what it should not, or its answer
    /// was lost).
    pub(super) fn unchanging_write(
        &self,
        machine: &Machine,
        command: &Command,
        script: &mut Script<'_>,
    ) -> (Result<(), Finding>, bool) {
        let c = &self.check;
        let Some(planned) = self.plan(machine, command) else {
            script.skipped(command, "no value of that kind is known");
            return (Ok(()), false);
        };
        // A write that must change nothing is safe to send again when its
        // answer was lost (one that did change something is caught by the
        // frame either way): a flaky network hides no step.
        let http = &c.ctx.http;
        let mut e = c.send(planned.request.clone());
        for _ in 1..UNCHANGING_ATTEMPTS {
            if e.transient.is_none() || !http.wait_before_rewrite(&e) {
                break;
            }
            http.count_retry();
            e = c.send(planned.request.clone());
        }
        script.step(command, &e);
        if e.transient.is_some() {
            return (Ok(()), true);
        }
        let name = Op::get(match command {
            Command::Rotate { .. } => OpId::Rotate,
            _ => OpId::ReportExport,
        })
        .name;
        let status = e.status().unwrap_or(0);
        if status >= 500 {
            return (
                Err(c.fail(&NO_SERVER_ERROR, &e, format!("{name} answered {status}"))),
                true,
            );
        }
        let value = c.shown_input(planned.value.as_deref().unwrap_or(""));
        let wrong = if planned.holder == Holder::Nobody {
            e.success().then(|| {
                (
                    &UNAUTHORIZED,
                    format!(
                        "{name} with {} succeeded: API.md says it receives 401",
                        machine.name(planned.holder)
                    ),
                )
            })
        } else if let Command::Rotate { .. } = command {
            e.success().then(|| {
                let answered = e.data().map(key_id).unwrap_or("");
                (
                    &ROTATES_THE_KEY_ASKED,
                    format!(
                        "rotating {value}, which names no key, succeeded{}",
                        if answered.is_empty() {
                            String::new()
                        } else {
                            format!(" and answered with key {answered:?}")
                        }
                    ),
                )
            })
        } else {
            None
        };
        if let Some((claim, wrong)) = wrong {
            // What else it did: the frame says.
            let failure = match self.frame(machine, &e) {
                Err(mut f) => {
                    f.message = format!("{wrong}; {}", f.message);
                    f
                }
                Ok(()) => c.fail(claim, &e, wrong),
            };
            return (Err(failure), true);
        }
        if let Command::Export {
            batch, merchant, ..
        } = *command
            && planned.holder != Holder::Nobody
        {
            let judged = match (batch, e.success()) {
                (Naming::Known(_), false) => Err(c.fail(
                    &VALID_REQUEST_SUCCEEDS,
                    &e,
                    format!("an export of the known batch {value} answered {status}"),
                )),
                (_, true) => judge_export(
                    c,
                    &e,
                    planned.value.as_deref().unwrap_or(""),
                    merchant,
                    self.known.rail_merchants.first(),
                ),
                _ => Ok(()),
            };
            if judged.is_err() {
                return (judged, false);
            }
        }
        let framed = self.frame(machine, &e);
        let resync = framed.is_err();
        (framed, resync)
    }

    /// The machine takes the secrets the key list shows now: after a lost
    /// answer, and after a write that did what it should not (so that the
    /// sequences after it, and its shrinking, start from the server's
    /// real state, not from a failure already reported).
    pub(super) fn resync(&self, machine: &mut Machine) {
        let list = ListModel::read(&self.check.ctx.http, Source::of(Op::get(OpId::Keys)));
        for listed in list.known() {
            if let Some(key) = machine.keys.iter_mut().find(|k| k.id == key_id(listed))
                && let Some(secret) = listed["secret"].as_str()
                && secret != key.secret
            {
                self.check.ctx.http.learn_secret(secret);
                let old = std::mem::replace(&mut key.secret, secret.to_owned());
                key.retired.push(machine::Retired {
                    secret: old,
                    opens: Opens::new(),
                });
            }
        }
    }

    /// After a write: the key list (every page) and the aggregator record
    /// show every key as the machine has it; nothing but the write's own
    /// effect changed.
    pub(super) fn frame(&self, machine: &Machine, write: &Exchange) -> Result<(), Finding> {
        let c = &self.check;
        let answers = c.map(&frame_reads(), |r| urgent(|| c.send(r.clone())));
        self.judge_frame(machine, write, &answers)
    }

    /// The frame's verdict on the answers to [`frame_reads`].
    pub(super) fn judge_frame(
        &self,
        machine: &Machine,
        write: &Exchange,
        answers: &[Exchange],
    ) -> Result<(), Finding> {
        let c = &self.check;
        let what = format!(
            "after {} {}",
            write.request.method,
            c.shown_input(&write.url)
        );
        for (op, e) in [OpId::Keys, OpId::Aggregator].into_iter().zip(answers) {
            if e.transient.is_some() {
                continue;
            }
            if matches!(e.status(), Some(401 | 403)) {
                return Err(c.fail(
                    &SECRET_KEEPS_ITS_REACH,
                    e,
                    format!("{what}: the configured key is refused: the write acted on it"),
                ));
            }
            if !e.success() {
                return Err(c.fail(
                    &VALID_REQUEST_SUCCEEDS,
                    e,
                    format!("{what}: {} answered {:?}", Op::get(op).name, e.status()),
                ));
            }
            self.judge_state(machine, op, e).map_err(|mut f| {
                f.message = format!("{what}: {}", f.message);
                f
            })?;
        }
        Ok(())
    }

    /// What a sweep tries: every read with each secret it sweeps, and
    /// (the first sweep) with a secret no key has. The first sweep tries
    /// every secret; one after a rotation of key `rotated`, the secrets
    /// whose meaning the rotation could change (that key's new and old
    /// ones) and the configured key: the others are tried by the
    /// sequences' own steps. One wave of requests at a far server instead
    /// of three.
    fn sweep_cases(
        &self,
        machine: &Machine,
        rotated: Option<usize>,
    ) -> Vec<(Holder, OpId, Request)> {
        let secrets: Vec<(Holder, Auth)> = machine
            .secrets(SWEEP_RETIRED)
            .into_iter()
            .filter(|(of, _)| match (rotated, of) {
                (None, _) => true,
                (Some(k), Holder::Current(n) | Holder::Retired(n, _)) => {
                    *n == k || *n == machine.configured
                }
                (Some(_), Holder::Nobody) => false,
            })
            .collect();
        let mut cases = Vec::new();
        for (of, auth) in &secrets {
            for op in swept() {
                let Some((request, _)) = self.read_request(*op, Naming::Known(0)) else {
                    continue;
                };
                cases.push((*of, *op, request.auth(auth.clone())));
            }
        }
        // Secrets no key has: refused everywhere (Authentication 2).
        for op in swept().iter().filter(|_| rotated.is_none()) {
            if let Some((request, _)) = self.read_request(*op, Naming::Known(0)) {
                cases.push((
                    Holder::Nobody,
                    *op,
                    request.auth(Auth::Probe("aggsk_sweep_not_a_key".into())),
                ));
            }
        }
        cases
    }

    /// What each secret of a sweep opened (its answers kept as evidence);
    /// a secret no key has must open nothing.
    fn learn<'e>(
        &self,
        cases: &[(Holder, OpId, Request)],
        answers: &'e [Exchange],
    ) -> Result<std::collections::BTreeMap<Holder, (Opens, Vec<&'e Exchange>)>, Finding> {
        let mut learned: std::collections::BTreeMap<Holder, (Opens, Vec<&Exchange>)> =
            Default::default();
        for ((of, op, _), e) in cases.iter().zip(answers) {
            let Some(status) = e.status().filter(|_| e.transient.is_none()) else {
                continue;
            };
            let accepted = !matches!(status, 401 | 403);
            if *of == Holder::Nobody {
                if accepted {
                    return Err(self.check.fail(
                        &UNAUTHORIZED,
                        e,
                        format!(
                            "{} served a secret no key has (status {status})",
                            Op::get(*op).name
                        ),
                    ));
                }
                continue;
            }
            let entry = learned.entry(*of).or_default();
            entry.0.insert(*op, accepted);
            entry.1.push(e);
        }
        Ok(learned)
    }

    /// Every read with every secret the machine knows: learns what each
    /// opens, and holds the server to what API.md fixes. With `rotated`,
    /// the key rotated and what its secret opened before. With `framed`,
    /// the frame of that write is read in the same wave (a far server:
    /// one round trip for both).
    pub(super) fn sweep(
        &self,
        machine: &mut Machine,
        rotated: Option<(usize, Opens)>,
        after: &Exchange,
        framed: Option<&Exchange>,
    ) -> Result<(), Finding> {
        let c = &self.check;
        // The first sweep tries every secret; one after a rotation, the
        // secrets whose meaning the rotation could change (the rotated
        // key's new and old ones) and the configured key: the others are
        // tried by the sequences' own steps. One wave of requests at a far
        // server instead of three.
        let cases = self.sweep_cases(machine, rotated.as_ref().map(|(k, _)| *k));
        let mut requests: Vec<Request> = cases.iter().map(|(_, _, r)| r.clone()).collect();
        if framed.is_some() {
            requests.extend(frame_reads());
        }
        let mut answers = c.map(&requests, |r| urgent(|| c.send(r.clone())));
        let frame_answers = answers.split_off(cases.len());
        if let Some(write) = framed {
            self.judge_frame(machine, write, &frame_answers)?;
        }
        let learned = self.learn(&cases, &answers)?;
        let rotated_key = rotated.as_ref().map(|(k, _)| *k);
        for (of, (opens, exchanges)) in &learned {
            let evidence = |ops: &[OpId]| {
                exchanges
                    .iter()
                    .find(|e| e.op().is_some_and(|o| ops.contains(&o.id)))
                    .copied()
                    .unwrap_or(after)
            };
            let who = machine.name(*of);
            match *of {
                Holder::Current(k) => {
                    let before = match &rotated {
                        Some((r, before)) if *r == k => before,
                        _ => &machine.keys[k].opens,
                    };
                    let changed = drift(before, opens);
                    if !changed.is_empty() {
                        let ops: Vec<OpId> = changed.iter().map(|d| d.0).collect();
                        let words = drift_words(&changed);
                        let why = if rotated_key == Some(k) {
                            "the rotation changed the key's secret, not what the key opens"
                        } else {
                            "no write changed this key"
                        };
                        return Err(c.fail(
                            &SECRET_KEEPS_ITS_REACH,
                            evidence(&ops),
                            format!("{who}: {words} ({why})"),
                        ));
                    }
                }
                Holder::Retired(k, _) => {
                    // What its key opened: before the rotation, or as this
                    // sweep learns it.
                    let key = match &rotated {
                        Some((r, before)) if *r == k => before,
                        _ => learned
                            .get(&Holder::Current(k))
                            .map_or(&machine.keys[k].opens, |(opens, _)| opens),
                    };
                    if let Some(why) = split(opens, key) {
                        let ops: Vec<OpId> = opens.keys().copied().collect();
                        return Err(c.fail(
                            &SECRET_KEEPS_ITS_REACH,
                            evidence(&ops),
                            format!(
                                "{who} is {why}: an old secret is one key's, it opens what its key opened or nothing"
                            ),
                        ));
                    }
                }
                Holder::Nobody => {}
            }
        }
        for (of, (opens, _)) in learned {
            if let Some(slot) = machine.opens_mut(of) {
                slot.extend(opens);
            }
        }
        Ok(())
    }
}

/// What a frame reads back after a write: the key list (every key on one
/// page) and the aggregator record, with the configured key.
pub(super) fn frame_reads() -> [Request; 2] {
    [
        Request::to(OpId::Keys).q(names::LIMIT, 100),
        Request::to(OpId::Aggregator),
    ]
}

/// A created export is of the batch, kind and merchant asked, and in a
/// state API.md's statements allow.
pub(super) fn judge_export(
    c: &Check<'_>,
    e: &Exchange,
    batch: &str,
    merchant: bool,
    merchant_id: Option<&String>,
) -> Result<(), Finding> {
    let export = e
        .data()
        .map(|d| &d["report_export"])
        .unwrap_or(&Value::Null);
    let got = export["settlement_batch_id"].as_str().unwrap_or("");
    if got != batch {
        return Err(c.fail(
            &EXPORT_IS_ASKED,
            e,
            format!(
                "an export of batch {batch} was created for {:?}",
                c.shown_input(got)
            ),
        ));
    }
    let want_merchant = if merchant {
        merchant_id.map_or("", String::as_str)
    } else {
        ""
    };
    if export["merchant_id"]
        .as_str()
        .is_some_and(|m| m != want_merchant)
    {
        return Err(c.fail(
            &EXPORT_IS_ASKED,
            e,
            format!(
                "an export asked for merchant {want_merchant:?} carries merchant_id {}",
                crate::http::show(export.get("merchant_id"))
            ),
        ));
    }
    invariant_of(c, OpId::ReportExport, e)
}

/// What a secret's reach did that it must not: each operation that now
/// accepts or refuses it, against before.
fn drift_words(changed: &[(OpId, bool, bool)]) -> String {
    changed
        .iter()
        .map(|(op, before, after)| {
            format!(
                "{} {} it, where it {}",
                Op::get(*op).name,
                if *after { "now accepts" } else { "now refuses" },
                if *before {
                    "accepted before"
                } else {
                    "refused before"
                }
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

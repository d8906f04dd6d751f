//! Exploration: random sequences of every operation against the model.
//!
//! The rules enumerate what their table names; this finds what lies
//! between: what a write does to records it was not aimed at, what one
//! operation does after another changed the state. A sequence is drawn
//! from the run's seed ([`command`]): reads of every operation, key
//! rotations and report exports (when writes are allowed), each with a
//! known value, an unknown well-formed one or another kind's id, and with
//! every secret the machine knows ([`machine`]). Each answer is judged
//! against the machine, and the machine moves only by each operation's
//! documented effect. After every write the observable state is read back
//! (the frame: nothing but the write's effect changed), and after every
//! credential change every operation is tried with every secret (the
//! sweep).
//!
//! Sequences run side by side, their steps in order: reads share the
//! machine, a write holds it alone, from its request to the end of its
//! frame and sweep. A failing sequence is shrunk by proptest to the
//! shortest that still fails, and shown as a script of `curl` lines, one
//! a step, every secret `<redacted>`.

pub mod command;
mod machine;
mod script;

use std::sync::{PoisonError, RwLock};

use serde_json::Value;

use self::command::{Command, Cred, Target, takes_target};
use self::machine::{Expect, Machine, Of, Opens, drift, split, swept};
use self::script::Script;
use crate::contract::{Op, OpId, names};
use crate::ctx::Ctx;
use crate::http::{Auth, Exchange, Request, encode};
use crate::model::{ListModel, Source, invariants, key_id, token_of};
use crate::pool::urgent;
use crate::rules::{Check, Failure, Outcome};

/// The family of the rules that explore (`explore.*`).
pub const FAMILY: &str = "explore.";

/// Writes a sequence makes at most: each is two round trips (the write,
/// its frame) and may be a change a staging keeps.
const WRITES: usize = 2;
/// Rotations of the allowed key a sequence makes at most: each is a real
/// change of the key the user allowed to rotate, followed by a sweep.
const ROTATIONS: usize = 1;
/// Report exports a sequence creates at most: each is a job on the server.
const EXPORTS: usize = 1;
/// Attempts at a write that must change nothing, while its answers are
/// lost.
const UNCHANGING_ATTEMPTS: usize = 4;
/// Retired secrets of each key a sweep tries (the newest).
const SWEEP_RETIRED: usize = 2;

/// The writes a sequence has made, against its budget. A budget of each
/// sequence's own, not of the run: which writes are sent depends on the
/// sequence alone, never on which sequence got there first, so a run's
/// requests (and every count the report shows) are the same whatever
/// `--jobs`.
#[derive(Debug, Default)]
struct Budget {
    writes: usize,
    rotations: usize,
    exports: usize,
}

impl Budget {
    /// Whether the budget allows `command`, spending it if so.
    fn spend(&mut self, command: &Command) -> bool {
        if self.writes >= WRITES {
            return false;
        }
        let (used, max) = match command {
            Command::Rotate {
                target: Target::Known(_),
                cred: Cred::Configured,
            } => (&mut self.rotations, ROTATIONS),
            Command::Export {
                cred: Cred::Configured,
                ..
            } => (&mut self.exports, EXPORTS),
            _ => {
                self.writes += 1;
                return true;
            }
        };
        if *used >= max {
            return false;
        }
        *used += 1;
        self.writes += 1;
        true
    }
}

/// The values the model knows, by kind.
#[derive(Debug, Default)]
struct Known {
    rail_merchants: Vec<String>,
    payments: Vec<String>,
    batches: Vec<String>,
    aliases: Vec<String>,
    merchants: Vec<String>,
    /// Lookup values of account-info: (alias type, value); `None` for IBAN.
    accounts: Vec<(Option<&'static str>, String)>,
    till_codes: Vec<String>,
}

impl Known {
    fn of(ctx: &Ctx) -> Self {
        let tokens = |op: OpId| -> Vec<String> {
            ctx.model
                .rows(op)
                .into_iter()
                .map(token_of)
                .filter(|t| !t.is_empty())
                .take(8)
                .collect()
        };
        let mut accounts = Vec::new();
        if let Some(iban) = &ctx.inputs.iban {
            accounts.push((None, iban.clone()));
        }
        if let Some(mobile) = &ctx.inputs.mobile {
            accounts.push((Some("MOBILE"), mobile.clone()));
        }
        Self {
            rail_merchants: ctx.found.rail_merchants.clone(),
            payments: ctx.found.payments.clone(),
            batches: tokens(OpId::Batches),
            aliases: ctx.inputs.alias_id.iter().cloned().collect(),
            merchants: tokens(OpId::Merchants),
            accounts,
            till_codes: ctx.inputs.till_code.iter().cloned().collect(),
        }
    }

    /// The known path ids of `op`.
    fn ids(&self, op: OpId) -> &[String] {
        match op {
            OpId::RailMerchant => &self.rail_merchants,
            OpId::Charges => &self.payments,
            OpId::Transactions => &self.batches,
            OpId::Alias => &self.aliases,
            _ => &[],
        }
    }

    /// Known ids of every kind but `prefix`'s.
    fn others(&self, prefix: &str) -> Vec<&String> {
        [
            &self.rail_merchants,
            &self.payments,
            &self.batches,
            &self.aliases,
            &self.merchants,
        ]
        .into_iter()
        .flat_map(|v| v.iter().take(2))
        .filter(|id| !id.starts_with(prefix))
        .collect()
    }
}

/// A value that names nothing: `known` with its last four characters
/// changed (so its length and shape stay), or the prefix and digits.
fn unknown_like(known: Option<&String>, prefix: &str, len: usize, salt: u16) -> String {
    let tail = format!("{:04x}", salt ^ 0x5a5a);
    match known.filter(|k| k.len() > prefix.len() + 4 && k.is_ascii()) {
        Some(k) => {
            let head = &k[..k.len() - 4];
            let candidate = format!("{head}{tail}");
            if candidate == *k {
                format!("{head}{:04x}", salt ^ 0xa5a5)
            } else {
                candidate
            }
        }
        None => {
            let body = len.saturating_sub(prefix.len() + 4);
            format!("{prefix}{}{tail}", "0".repeat(body))
        }
    }
}

/// A command made concrete: the request, and what the machine says of it.
#[derive(Debug)]
struct Planned {
    request: Request,
    of: Of,
    /// For reads and writes aimed at a value: which kind of value.
    target: Target,
    /// The value sent, for messages.
    value: Option<String>,
}

/// The sequences of one run.
#[derive(Debug)]
pub struct Explorer<'a> {
    check: Check<'a>,
    known: Known,
    machine: RwLock<Machine>,
    writes: bool,
}

impl<'a> Explorer<'a> {
    /// The machine read from the server: the key list (every page) with
    /// the configured key, then a sweep to learn what each secret opens.
    fn start(check: Check<'a>) -> Result<Self, Outcome> {
        let ctx = check.ctx;
        let list = ListModel::read(&ctx.http, Source::of(Op::get(OpId::Keys)));
        if let Err(unread) = list.usable() {
            return Err(Outcome::skipped(format!(
                "the key list could not be read: {}",
                ctx.http.text(&format!("{unread:?}"), 200)
            )));
        }
        let keys: Vec<&Value> = list.known().collect();
        let rotatable = ctx
            .options
            .allow_writes
            .then_some(ctx.inputs.access_key_id.as_deref())
            .flatten();
        let Some(mut machine) = Machine::from_list(&keys, |s| ctx.http.key_matches(s), rotatable)
        else {
            return Err(Outcome::skipped(
                "the configured key is not in the key list: whose secrets are whose is not known",
            ));
        };
        // The sampling's rotation retired a secret: the machine knows it.
        if let (Some(rotation), Some(k)) = (&ctx.model.rotation, machine.rotatable)
            && let Some(before) = &rotation.before
            && *before != machine.keys[k].secret
        {
            machine.keys[k].retired.push(machine::Retired {
                secret: before.clone(),
                opens: Opens::new(),
            });
        }
        Ok(Self {
            check,
            known: Known::of(ctx),
            machine: RwLock::new(machine),
            writes: ctx.options.allow_writes,
        })
    }

    fn machine(&self) -> std::sync::RwLockReadGuard<'_, Machine> {
        self.machine.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// The request a command sends, or `None` when the model has no value
    /// for it (or the run's budget of writes is spent).
    fn plan(&self, machine: &Machine, command: &Command) -> Option<Planned> {
        let resolved = machine.resolve(command.cred());
        let (request, target, value) = match *command {
            Command::Read { op, target, .. } => {
                let (request, value) = self.read_request(op, target)?;
                (request, target, value)
            }
            Command::Rotate { target, .. } => {
                let id = match target {
                    Target::Known(_) => machine.keys[machine.rotatable?].id.clone(),
                    Target::Unknown(salt) => {
                        let ids: Vec<&String> = machine.keys.iter().map(|k| &k.id).collect();
                        let mut id = unknown_like(ids.first().copied(), "ak_", 19, salt);
                        while ids.contains(&&id) {
                            id.push('0');
                        }
                        id
                    }
                    Target::Other(n) => {
                        let others = self.known.others("ak_");
                        (*others.get(usize::from(n) % others.len().max(1))?).clone()
                    }
                };
                (Request::to_one(OpId::Rotate, &id), target, Some(id))
            }
            Command::Export {
                batch, merchant, ..
            } => {
                let known = &self.known.batches;
                let token = match batch {
                    Target::Known(n) => known.get(usize::from(n) % known.len().max(1))?.clone(),
                    Target::Unknown(salt) => unknown_like(known.first(), "sb_", 39, salt),
                    Target::Other(_) => return None,
                };
                let mut body = serde_json::json!({
                    "settlement_batch_id": token,
                    "kind": if merchant { "REPORT_KIND_MERCHANT" } else { "REPORT_KIND_BATCH" },
                });
                if merchant {
                    body["merchant_id"] = Value::from(self.known.rail_merchants.first()?.clone());
                }
                (
                    Request::to(OpId::ReportExport).json(body.to_string()),
                    batch,
                    Some(token),
                )
            }
        };
        Some(Planned {
            request: request.auth(resolved.auth),
            of: resolved.of,
            target,
            value,
        })
    }

    /// A read of `op` for `target`, and the value it names.
    fn read_request(&self, op: OpId, target: Target) -> Option<(Request, Option<String>)> {
        let known = &self.known;
        let pick = |v: &[String], n: u8| v.get(usize::from(n) % v.len().max(1)).cloned();
        match op {
            OpId::AccountInfo => {
                let (kind, value) = match target {
                    Target::Known(n) => {
                        let i = usize::from(n) % known.accounts.len().max(1);
                        known.accounts.get(i)?.clone()
                    }
                    Target::Unknown(_) | Target::Other(_) => {
                        let salt = match target {
                            Target::Unknown(s) => s,
                            _ => 0x0bad,
                        };
                        let (kind, value) = known.accounts.first()?.clone();
                        (kind, unknown_like(Some(&value), "", value.len(), salt))
                    }
                };
                let request = match kind {
                    None => Request::to(op).q(names::IBAN, &value),
                    Some(alias) => Request::to(op)
                        .q(names::ALIAS_TYPE, alias)
                        .q(names::ALIAS_VALUE, &value),
                };
                Some((request, Some(value)))
            }
            OpId::TitleFetch => {
                let value = match target {
                    Target::Known(n) => pick(&known.till_codes, n)?,
                    Target::Unknown(salt) => {
                        let code = known.till_codes.first()?;
                        unknown_like(Some(code), "", code.len(), salt)
                    }
                    Target::Other(_) => unknown_like(known.till_codes.first(), "", 8, 0x0bad),
                };
                let request = Request::to(op)
                    .q(names::ALIAS_TYPE, "TILL_CODE")
                    .q(names::ALIAS_VALUE, &value);
                Some((request, Some(value)))
            }
            _ => match Op::get(op).path_id {
                None => Some((Request::to(op), None)),
                Some(path_id) => {
                    let ids = known.ids(op);
                    let id = match target {
                        Target::Known(n) => pick(ids, n)?,
                        Target::Unknown(salt) => unknown_like(
                            ids.first(),
                            path_id.prefix,
                            path_id.exact_len.unwrap_or(path_id.prefix.len() + 16),
                            salt,
                        ),
                        Target::Other(n) => {
                            let others = known.others(path_id.prefix);
                            (*others.get(usize::from(n) % others.len().max(1))?).clone()
                        }
                    };
                    if matches!(target, Target::Unknown(_)) && ids.contains(&id) {
                        return None;
                    }
                    Some((Request::to_one(op, &id), Some(id)))
                }
            },
        }
    }

    /// Runs one sequence; the first step that breaks the contract fails
    /// it, with the script of the steps that led there.
    fn run(&self, commands: &[Command]) -> Result<(), Failure> {
        urgent(|| self.run_urgently(commands))
    }

    fn run_urgently(&self, commands: &[Command]) -> Result<(), Failure> {
        let mut script = Script::new(self.check, commands.len());
        let mut budget = Budget::default();
        for (i, command) in commands.iter().enumerate() {
            let result = if command.is_write() {
                self.write(command, &mut script, &mut budget)
            } else {
                self.read(command, &mut script)
            };
            if let Err(mut failure) = result {
                failure.message = format!("step {} ({command}): {}", i + 1, failure.message);
                failure.input = Some(script.finish(self.check.ctx.options.seed));
                return Err(failure);
            }
        }
        Ok(())
    }

    fn read(&self, command: &Command, script: &mut Script<'_>) -> Result<(), Failure> {
        let machine = self.machine();
        let Some(planned) = self.plan(&machine, command) else {
            script.skipped(command, "no value of that kind is known");
            return Ok(());
        };
        let Command::Read { op, .. } = *command else {
            return Ok(());
        };
        let e = self.check.send(planned.request.clone());
        script.step(command, &e);
        self.judge_read(&machine, op, &planned, &e)
    }

    /// What a read must have answered.
    fn judge_read(
        &self,
        machine: &Machine,
        op: OpId,
        planned: &Planned,
        e: &Exchange,
    ) -> Result<(), Failure> {
        let c = &self.check;
        let Some(status) = e.status().filter(|_| e.transient.is_none()) else {
            // Not the server's answer: proves nothing, changes nothing.
            return Ok(());
        };
        let name = Op::get(op).name;
        if status >= 500 {
            return Err(c.fail(e, format!("{name} answered {status}")));
        }
        let who = machine.name(planned.of);
        let refused = matches!(status, 401 | 403);
        match machine.expect(planned.of, op) {
            Expect::Refused if e.success() => {
                return Err(c.fail(
                    e,
                    format!(
                        "{name} served {who}, which {}",
                        if planned.of == Of::Nobody {
                            "API.md says receives 401".to_owned()
                        } else {
                            format!("{name} refused when the machine learned it")
                        }
                    ),
                ));
            }
            Expect::Refused
                if matches!(planned.target, Target::Known(_)) && planned.of == Of::Nobody =>
            {
                return if status == 401 {
                    Ok(())
                } else {
                    Err(c.fail(e, format!("{name} answered {who} {status}, not 401")))
                };
            }
            Expect::Refused | Expect::Unknown => return Ok(()),
            Expect::Accepted if refused => {
                return Err(c.fail(
                    e,
                    format!(
                        "{name} refused {who} ({status}), which it accepted when the machine learned it{}",
                        if matches!(planned.of, Of::Current(_)) {
                            " (no write since changed that key)"
                        } else {
                            ""
                        }
                    ),
                ));
            }
            Expect::Accepted => {}
        }
        let value = planned.value.as_deref().unwrap_or("");
        let shown = c.shown_input(value);
        match planned.target {
            _ if !takes_target(op) => {
                if !e.success() {
                    return Err(c.fail(e, format!("{name} answered {status}")));
                }
                self.judge_state(machine, op, e)
            }
            Target::Known(_) if !e.success() => {
                Err(c.fail(e, format!("{name} of the known {shown} answered {status}")))
            }
            Target::Known(_) => answers_for(c, op, value, e),
            Target::Unknown(_) if e.success() => match op {
                // A lookup may answer an account it resolves; never
                // another IBAN's.
                OpId::AccountInfo | OpId::TitleFetch => answers_for(c, op, value, e),
                _ => answers_for(c, op, value, e).and(Err(c.fail(
                    e,
                    format!("{name} of {shown}, which names nothing, succeeded"),
                ))),
            },
            Target::Unknown(_) if Op::get(op).lists_error(404) && status != 404 => Err(c.fail(
                e,
                format!(
                    "{name} of {shown}, which names nothing, answered {status}: API.md lists 404"
                ),
            )),
            Target::Other(_)
                if e.success() && op != OpId::AccountInfo && op != OpId::TitleFetch =>
            {
                Err(c.fail(
                    e,
                    format!("{name} of {shown}, an id of another kind, succeeded"),
                ))
            }
            _ => Ok(()),
        }
    }

    /// A read that shows the keys (the key list, the aggregator record)
    /// shows the machine's secrets; every other record is held to the
    /// state-bound statements of API.md.
    fn judge_state(&self, machine: &Machine, op: OpId, e: &Exchange) -> Result<(), Failure> {
        let c = &self.check;
        let keys = match op {
            OpId::Keys => e.rows("keys"),
            OpId::Aggregator => e.data().and_then(|d| d["keys"].as_array()),
            _ => {
                return match invariants::of_answer(op, e) {
                    Some(why) => Err(c.fail(e, why)),
                    None => Ok(()),
                };
            }
        };
        let Some(keys) = keys else {
            return Err(c.fail(e, format!("{} shows no keys", Op::get(op).name)));
        };
        for listed in keys {
            let id = key_id(listed);
            let Some(key) = machine.keys.iter().find(|k| k.id == id) else {
                continue;
            };
            if listed["is_active"]
                .as_bool()
                .is_some_and(|a| a != key.active)
            {
                return Err(c.fail(
                    e,
                    format!(
                        "{} shows key {id} with is_active {}, which no operation of API.md's changed",
                        Op::get(op).name,
                        listed["is_active"]
                    ),
                ));
            }
            if listed["secret"].as_str() != Some(key.secret.as_str()) {
                let rotated = if key
                    .retired
                    .iter()
                    .any(|r| Some(r.secret.as_str()) == listed["secret"].as_str())
                {
                    "a secret it was rotated away from"
                } else {
                    "a secret the machine never saw it have"
                };
                return Err(c.fail(
                    e,
                    format!(
                        "{} shows key {id} with {rotated}, not its current secret",
                        Op::get(op).name
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A write. A rotation of the allowed key changes the machine: it
    /// holds the machine alone, from its request to the end of its frame
    /// and sweep. Every other write must change nothing, so it goes on
    /// beside the reads and writes of other sequences (when one does
    /// change something, another's frame may see it too: the failure
    /// reported is one that fails again alone, `Check::property_n`).
    fn write(
        &self,
        command: &Command,
        script: &mut Script<'_>,
        budget: &mut Budget,
    ) -> Result<(), Failure> {
        if !budget.spend(command) {
            script.skipped(command, "the sequence's budget of such writes is spent");
            return Ok(());
        }
        if let Command::Rotate {
            target: Target::Known(_),
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
    fn rotate_allowed(
        &self,
        machine: &mut Machine,
        command: &Command,
        script: &mut Script<'_>,
    ) -> Result<(), Failure> {
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
            // Lost, and not recovered: the key list says where it stands.
            self.resync(machine);
            return Ok(());
        };
        if key_id(&key) != id {
            let failure = c.fail(
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
            return Err(c.fail(&rotation.answer, "the rotation gave no new secret"));
        };
        c.ctx.http.learn_secret(new);
        let before_opens = machine.keys[k].opens.clone();
        machine.rotated(k, new.to_owned());
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
    fn unchanging_write(
        &self,
        machine: &Machine,
        command: &Command,
        script: &mut Script<'_>,
    ) -> (Result<(), Failure>, bool) {
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
            return (Err(c.fail(&e, format!("{name} answered {status}"))), true);
        }
        let value = c.shown_input(planned.value.as_deref().unwrap_or(""));
        let wrong = if planned.of == Of::Nobody {
            e.success().then(|| {
                format!(
                    "{name} with {} succeeded: API.md says it receives 401",
                    machine.name(planned.of)
                )
            })
        } else if let Command::Rotate { .. } = command {
            e.success().then(|| {
                let answered = e.data().map(key_id).unwrap_or("");
                format!(
                    "rotating {value}, which names no key, succeeded{}",
                    if answered.is_empty() {
                        String::new()
                    } else {
                        format!(" and answered with key {answered:?}")
                    }
                )
            })
        } else {
            None
        };
        if let Some(wrong) = wrong {
            // What else it did: the frame says.
            let failure = match self.frame(machine, &e) {
                Err(mut f) => {
                    f.message = format!("{wrong}; {}", f.message);
                    f
                }
                Ok(()) => c.fail(&e, wrong),
            };
            return (Err(failure), true);
        }
        if let Command::Export {
            batch, merchant, ..
        } = *command
            && planned.of != Of::Nobody
        {
            let judged = match (batch, e.success()) {
                (Target::Known(_), false) => Err(c.fail(
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
    fn resync(&self, machine: &mut Machine) {
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
    fn frame(&self, machine: &Machine, write: &Exchange) -> Result<(), Failure> {
        let c = &self.check;
        let answers = c.map(&frame_reads(), |r| urgent(|| c.send(r.clone())));
        self.judge_frame(machine, write, &answers)
    }

    /// The frame's verdict on the answers to [`frame_reads`].
    fn judge_frame(
        &self,
        machine: &Machine,
        write: &Exchange,
        answers: &[Exchange],
    ) -> Result<(), Failure> {
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
                    e,
                    format!("{what}: the configured key is refused: the write acted on it"),
                ));
            }
            if !e.success() {
                return Err(c.fail(
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

    /// Every read with every secret the machine knows: learns what each
    /// opens, and holds the server to what API.md fixes. With `rotated`,
    /// the key rotated and what its secret opened before.
    /// With `framed`, the frame of that write is read in the same wave
    /// (a far server: one round trip for both).
    fn sweep(
        &self,
        machine: &mut Machine,
        rotated: Option<(usize, Opens)>,
        after: &Exchange,
        framed: Option<&Exchange>,
    ) -> Result<(), Failure> {
        let c = &self.check;
        // The first sweep tries every secret; one after a rotation, the
        // secrets whose meaning the rotation could change (the rotated
        // key's new and old ones) and the configured key: the others are
        // tried by the sequences' own steps. One wave of requests at a far
        // server instead of three.
        let secrets: Vec<(Of, Auth)> = machine
            .secrets(SWEEP_RETIRED)
            .into_iter()
            .filter(|(of, _)| match (&rotated, of) {
                (None, _) => true,
                (Some((k, _)), Of::Current(n) | Of::Retired(n, _)) => {
                    n == k || *n == machine.configured
                }
                (Some(_), Of::Nobody) => false,
            })
            .collect();
        let mut cases = Vec::new();
        for (of, auth) in &secrets {
            for op in swept() {
                let Some((request, _)) = self.read_request(*op, Target::Known(0)) else {
                    continue;
                };
                cases.push((*of, *op, request.auth(auth.clone())));
            }
        }
        // Secrets no key has: refused everywhere (Authentication 2).
        for op in swept().iter().filter(|_| rotated.is_none()) {
            if let Some((request, _)) = self.read_request(*op, Target::Known(0)) {
                cases.push((
                    Of::Nobody,
                    *op,
                    request.auth(Auth::Probe("aggsk_sweep_not_a_key".into())),
                ));
            }
        }
        let mut requests: Vec<Request> = cases.iter().map(|(_, _, r)| r.clone()).collect();
        if framed.is_some() {
            requests.extend(frame_reads());
        }
        let mut answers = c.map(&requests, |r| urgent(|| c.send(r.clone())));
        let frame_answers = answers.split_off(cases.len());
        if let Some(write) = framed {
            self.judge_frame(machine, write, &frame_answers)?;
        }
        let mut learned: std::collections::BTreeMap<Of, (Opens, Vec<&Exchange>)> =
            Default::default();
        for ((of, op, _), e) in cases.iter().zip(&answers) {
            let Some(status) = e.status().filter(|_| e.transient.is_none()) else {
                continue;
            };
            let accepted = !matches!(status, 401 | 403);
            if *of == Of::Nobody {
                if accepted {
                    return Err(c.fail(
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
                Of::Current(k) => {
                    let before = match &rotated {
                        Some((r, before)) if *r == k => before,
                        _ => &machine.keys[k].opens,
                    };
                    let changed = drift(before, opens);
                    if !changed.is_empty() {
                        let ops: Vec<OpId> = changed.iter().map(|d| d.0).collect();
                        let words: Vec<String> = changed
                            .iter()
                            .map(|(op, b, a)| {
                                format!(
                                    "{} {} it, where it {}",
                                    Op::get(*op).name,
                                    if *a { "now accepts" } else { "now refuses" },
                                    if *b {
                                        "accepted before"
                                    } else {
                                        "refused before"
                                    }
                                )
                            })
                            .collect();
                        let why = if rotated_key == Some(k) {
                            "the rotation changed the key's secret, not what the key opens"
                        } else {
                            "no write changed this key"
                        };
                        return Err(c.fail(
                            evidence(&ops),
                            format!("{who}: {} ({why})", words.join("; ")),
                        ));
                    }
                }
                Of::Retired(k, _) => {
                    // What its key opened: before the rotation, or as this
                    // sweep learns it.
                    let key = match &rotated {
                        Some((r, before)) if *r == k => before,
                        _ => learned
                            .get(&Of::Current(k))
                            .map_or(&machine.keys[k].opens, |(opens, _)| opens),
                    };
                    if let Some(why) = split(opens, key) {
                        let ops: Vec<OpId> = opens.keys().copied().collect();
                        return Err(c.fail(
                            evidence(&ops),
                            format!(
                                "{who} is {why}: an old secret is one key's, it opens what its key opened or nothing"
                            ),
                        ));
                    }
                }
                Of::Nobody => {}
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
fn frame_reads() -> [Request; 2] {
    [
        Request::to(OpId::Keys).q(names::LIMIT, 100),
        Request::to(OpId::Aggregator),
    ]
}

/// A 2xx for `value` answers for it: a record read names it, a lookup by
/// IBAN answers that IBAN.
fn answers_for(c: &Check<'_>, op: OpId, value: &str, e: &Exchange) -> Result<(), Failure> {
    let field = match op {
        OpId::AccountInfo if e.request.query_value(names::IBAN).is_some() => "iban",
        _ => match Op::get(op).path_id.and_then(|p| p.answers_for) {
            Some(field) => field,
            None => return invariant_of(c, op, e),
        },
    };
    let got = e.data().and_then(|d| d[field].as_str()).unwrap_or("");
    if got == value || encode(got) == encode(value) {
        invariant_of(c, op, e)
    } else {
        Err(c.fail(
            e,
            format!(
                "{}: asked for {}, answered for {field} {:?}",
                Op::get(op).name,
                c.shown_input(value),
                c.shown_input(got)
            ),
        ))
    }
}

fn invariant_of(c: &Check<'_>, op: OpId, e: &Exchange) -> Result<(), Failure> {
    match invariants::of_answer(op, e) {
        Some(why) => Err(c.fail(e, why)),
        None => Ok(()),
    }
}

/// A created export is of the batch, kind and merchant asked, and in a
/// state API.md's statements allow.
fn judge_export(
    c: &Check<'_>,
    e: &Exchange,
    batch: &str,
    merchant: bool,
    merchant_id: Option<&String>,
) -> Result<(), Failure> {
    let export = e
        .data()
        .map(|d| &d["report_export"])
        .unwrap_or(&Value::Null);
    let got = export["settlement_batch_id"].as_str().unwrap_or("");
    if got != batch {
        return Err(c.fail(
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
            e,
            format!(
                "an export asked for merchant {want_merchant:?} carries merchant_id {}",
                crate::http::show(export.get("merchant_id"))
            ),
        ));
    }
    invariant_of(c, OpId::ReportExport, e)
}

/// Runs `--sequences` random sequences of up to `--steps` commands.
pub fn sequences(c: &Check<'_>) -> Outcome {
    urgent(|| explore(c))
}

fn explore(c: &Check<'_>) -> Outcome {
    let explorer = match Explorer::start(*c) {
        Ok(explorer) => explorer,
        Err(outcome) => return outcome,
    };
    // What every secret opens, learned before any sequence.
    {
        let mut machine = explorer
            .machine
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let first = c.ctx.first(OpId::Keys).cloned();
        let anchor = first.unwrap_or_else(|| c.send(Request::to(OpId::Keys)));
        if let Err(mut failure) = explorer.sweep(&mut machine, None, &anchor, None) {
            failure.message = format!(
                "before any sequence, trying every read with every secret: {}",
                failure.message
            );
            return Outcome::judged(1, vec![failure]);
        }
    }
    let options = &c.ctx.options;
    let strategy = command::sequence(explorer.writes, options.steps as usize);
    c.property_n(options.sequences, strategy, |commands| {
        explorer.run(commands)
    })
}

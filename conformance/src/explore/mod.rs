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
mod known;
mod machine;
mod script;
mod writes;

use std::sync::{PoisonError, RwLock};

use serde_json::Value;

use self::command::{Command, Cred, Naming, takes_target};
use self::known::{KnownValues, unknown_like};
use self::machine::{Expect, Holder, Machine, Opens};
use self::script::Script;
use crate::contract::{Op, OpId, names};
use crate::http::{Exchange, Request, encode};
use crate::model::{ListModel, Source, invariants, key_id};
use crate::pool::urgent;
use crate::rules::claims::{
    ANSWERS_FOR_IBAN, ANSWERS_FOR_ID, NO_SERVER_ERROR, STATE_BOUND, UNAUTHORIZED,
    UNKNOWN_ID_IS_404, VALID_REQUEST_SUCCEEDS,
};
use crate::rules::{Check, Claim, Finding, Outcome};

/// What a secret opens stays what it opened until a write changes its
/// key: a rotated key's new secret opens what the old one did, and a
/// secret no key has opens nothing.
pub(crate) const SECRET_KEEPS_ITS_REACH: Claim = Claim {
    holds: "a secret opens what it opened until a write changes its key; a rotated key's new secret opens what its old one did; a secret no key has opens nothing",
    says: &[
        "A request without a valid key receives 401 with error code error.unauthorized_access",
        "Rotates the key and returns `data`: AccessKey with the new secret.",
    ],
};

/// The reads that show the keys show them as the writes left them.
pub(crate) const KEYS_AS_WRITTEN: Claim = Claim {
    holds: "the key list and the aggregator record show every key with its current secret, and flags no write changed",
    says: &[
        "Access keys are listed, returned inside the aggregator record, and rotated through the access-key operations; their `secret` field is returned in clear.",
        "| secret | string | the key secret, returned in clear by list, get-aggregator and rotate; shown as <ACCESS_KEY_SECRET> |",
    ],
};

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
                target: Naming::Known(_),
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

/// A command made concrete: the request, and what the machine says of it.
#[derive(Debug)]
struct Planned {
    request: Request,
    holder: Holder,
    /// For reads and writes aimed at a value: which kind of value.
    target: Naming,
    /// The value sent, for messages.
    value: Option<String>,
}

/// The sequences of one run.
#[derive(Debug)]
pub struct Explorer<'a> {
    check: Check<'a>,
    known: KnownValues,
    machine: RwLock<Machine>,
    writes: bool,
}

impl<'a> Explorer<'a> {
    /// The machine read from the server: the key list (every page) with
    /// the configured key, then a sweep to learn what each secret opens;
    /// why not, when the sequences cannot run.
    fn start(check: Check<'a>) -> Result<Self, String> {
        let ctx = check.ctx;
        let list = ListModel::read(&ctx.http, Source::of(Op::get(OpId::Keys)));
        if let Err(unread) = list.usable() {
            return Err(format!(
                "the key list could not be read: {}",
                ctx.http.text(&format!("{unread:?}"), 200)
            ));
        }
        // The second key given to rotate is rotated by other rules while
        // the sequences run: what its secrets open is not the machine's
        // to know.
        let second = ctx.inputs.second_access_key_id.as_deref();
        let keys: Vec<&Value> = list
            .known()
            .filter(|k| second.is_none_or(|id| crate::model::key_id(k) != id))
            .collect();
        let rotatable = ctx
            .options
            .allow_writes
            .then_some(ctx.inputs.access_key_id.as_deref())
            .flatten();
        let Some(mut machine) = Machine::from_list(&keys, |s| ctx.http.key_matches(s), rotatable)
        else {
            return Err(
                "the configured key is not in the key list: whose secrets are whose is not known"
                    .to_owned(),
            );
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
            known: KnownValues::of(ctx),
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
                    Naming::Known(_) => machine.keys[machine.rotatable?].id.clone(),
                    Naming::Unknown(salt) => {
                        let ids: Vec<&String> = machine.keys.iter().map(|k| &k.id).collect();
                        let mut id = unknown_like(ids.first().copied(), "ak_", 19, salt);
                        while ids.contains(&&id) {
                            id.push('0');
                        }
                        id
                    }
                    Naming::Other(n) => {
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
                    Naming::Known(n) => known.get(usize::from(n) % known.len().max(1))?.clone(),
                    Naming::Unknown(salt) => unknown_like(known.first(), "sb_", 39, salt),
                    Naming::Other(_) => return None,
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
            holder: resolved.holder,
            target,
            value,
        })
    }

    /// A read of `op` for `target`, and the value it names.
    fn read_request(&self, op: OpId, target: Naming) -> Option<(Request, Option<String>)> {
        let known = &self.known;
        let pick = |v: &[String], n: u8| v.get(usize::from(n) % v.len().max(1)).cloned();
        match op {
            OpId::AccountInfo => {
                let (kind, value) = match target {
                    Naming::Known(n) => {
                        let i = usize::from(n) % known.accounts.len().max(1);
                        known.accounts.get(i)?.clone()
                    }
                    Naming::Unknown(_) | Naming::Other(_) => {
                        let salt = match target {
                            Naming::Unknown(s) => s,
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
                    Naming::Known(n) => pick(&known.till_codes, n)?,
                    Naming::Unknown(salt) => {
                        let code = known.till_codes.first()?;
                        unknown_like(Some(code), "", code.len(), salt)
                    }
                    Naming::Other(_) => unknown_like(known.till_codes.first(), "", 8, 0x0bad),
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
                        Naming::Known(n) => pick(ids, n)?,
                        Naming::Unknown(salt) => unknown_like(
                            ids.first(),
                            path_id.prefix,
                            path_id.exact_len.unwrap_or(path_id.prefix.len() + 16),
                            salt,
                        ),
                        Naming::Other(n) => {
                            let others = known.others(path_id.prefix);
                            (*others.get(usize::from(n) % others.len().max(1))?).clone()
                        }
                    };
                    if matches!(target, Naming::Unknown(_)) && ids.contains(&id) {
                        return None;
                    }
                    Some((Request::to_one(op, &id), Some(id)))
                }
            },
        }
    }

    /// Runs one sequence; the first step that breaks the contract fails
    /// it, with the script of the steps that led there.
    fn run(&self, commands: &[Command]) -> Result<(), Finding> {
        urgent(|| self.run_urgently(commands))
    }

    fn run_urgently(&self, commands: &[Command]) -> Result<(), Finding> {
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

    fn read(&self, command: &Command, script: &mut Script<'_>) -> Result<(), Finding> {
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
    ) -> Result<(), Finding> {
        let c = &self.check;
        let Some(status) = e.status().filter(|_| e.transient.is_none()) else {
            // Not the server's answer: proves nothing, changes nothing.
            return Ok(());
        };
        let name = Op::get(op).name;
        if status >= 500 {
            return Err(c.fail(&NO_SERVER_ERROR, e, format!("{name} answered {status}")));
        }
        let who = machine.name(planned.holder);
        let refused = matches!(status, 401 | 403);
        match machine.expect(planned.holder, op) {
            Expect::Refused if e.success() => {
                return Err(c.fail(
                    &SECRET_KEEPS_ITS_REACH,
                    e,
                    format!(
                        "{name} served {who}, which {}",
                        if planned.holder == Holder::Nobody {
                            "API.md says receives 401".to_owned()
                        } else {
                            format!("{name} refused when the machine learned it")
                        }
                    ),
                ));
            }
            Expect::Refused
                if matches!(planned.target, Naming::Known(_))
                    && planned.holder == Holder::Nobody =>
            {
                return if status == 401 {
                    Ok(())
                } else {
                    Err(c.fail(
                        &UNAUTHORIZED,
                        e,
                        format!("{name} answered {who} {status}, not 401"),
                    ))
                };
            }
            Expect::Refused | Expect::Unknown => return Ok(()),
            Expect::Accepted if refused => {
                return Err(c.fail(
                    &SECRET_KEEPS_ITS_REACH,
                    e,
                    format!(
                        "{name} refused {who} ({status}), which it accepted when the machine learned it{}",
                        if matches!(planned.holder, Holder::Current(_)) {
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
                    return Err(c.fail(
                        &VALID_REQUEST_SUCCEEDS,
                        e,
                        format!("{name} answered {status}"),
                    ));
                }
                self.judge_state(machine, op, e)
            }
            // A lookup refused under WIRE.md's names may be read under
            // names of the server's own (`wire.lookup-names`).
            Naming::Known(_) if e.refused() && c.ctx.lookup_refused(&e.request) => Ok(()),
            Naming::Known(_) if !e.success() => Err(c.fail(
                &VALID_REQUEST_SUCCEEDS,
                e,
                format!("{name} of the known {shown} answered {status}"),
            )),
            Naming::Known(_) => answers_for(c, op, value, e),
            Naming::Unknown(_) if e.success() => match op {
                // A lookup may answer an account it resolves; never
                // another IBAN's.
                OpId::AccountInfo | OpId::TitleFetch => answers_for(c, op, value, e),
                _ => answers_for(c, op, value, e).and(Err(c.fail(
                    &UNKNOWN_ID_IS_404,
                    e,
                    format!("{name} of {shown}, which names nothing, succeeded"),
                ))),
            },
            Naming::Unknown(_) if Op::get(op).lists_error(404) && status != 404 => Err(c.fail(
                &UNKNOWN_ID_IS_404,
                e,
                format!(
                    "{name} of {shown}, which names nothing, answered {status}: API.md lists 404"
                ),
            )),
            Naming::Other(_)
                if e.success() && op != OpId::AccountInfo && op != OpId::TitleFetch =>
            {
                Err(c.fail(
                    &UNKNOWN_ID_IS_404,
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
    fn judge_state(&self, machine: &Machine, op: OpId, e: &Exchange) -> Result<(), Finding> {
        let c = &self.check;
        let keys = match op {
            OpId::Keys => e.rows("keys"),
            OpId::Aggregator => e.data().and_then(|d| d["keys"].as_array()),
            _ => {
                return match invariants::of_answer(op, e) {
                    Some(why) => Err(c.fail(&STATE_BOUND, e, why)),
                    None => Ok(()),
                };
            }
        };
        let Some(keys) = keys else {
            return Err(c.fail(
                &KEYS_AS_WRITTEN,
                e,
                format!("{} shows no keys", Op::get(op).name),
            ));
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
                    &KEYS_AS_WRITTEN,
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
                    &KEYS_AS_WRITTEN,
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
}

/// A read answers for the value it named: an IBAN lookup for that IBAN,
/// a read with an id in its path for that id (the table's `answers_for`
/// field); what it answers then holds to API.md's state-bound statements.
fn answers_for(c: &Check<'_>, op: OpId, value: &str, e: &Exchange) -> Result<(), Finding> {
    let (claim, field) = match op {
        OpId::AccountInfo if e.request.query_value(names::IBAN).is_some() => {
            (&ANSWERS_FOR_IBAN, "iban")
        }
        _ => match Op::get(op).path_id.and_then(|p| p.answers_for) {
            Some(field) => (&ANSWERS_FOR_ID, field),
            None => return invariant_of(c, op, e),
        },
    };
    let got = e.data().and_then(|d| d[field].as_str()).unwrap_or("");
    if got == value || encode(got) == encode(value) {
        invariant_of(c, op, e)
    } else {
        Err(c.fail(
            claim,
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

fn invariant_of(c: &Check<'_>, op: OpId, e: &Exchange) -> Result<(), Finding> {
    match invariants::of_answer(op, e) {
        Some(why) => Err(c.fail(&STATE_BOUND, e, why)),
        None => Ok(()),
    }
}

/// Runs `--sequences` random sequences of up to `--steps` commands.
pub fn sequences(c: &Check<'_>) -> Outcome {
    urgent(|| explore(c))
}

fn explore(c: &Check<'_>) -> Outcome {
    let explorer = match Explorer::start(*c) {
        Ok(explorer) => explorer,
        Err(why) => return Outcome::skipped(why),
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

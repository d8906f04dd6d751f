//! The server's credentials as a state machine: every key's current
//! secret, the secrets rotations retired, and which operations accept
//! each, learned once and then held to.
//!
//! API.md leaves key scopes, inactive keys and old secrets open
//! (Authentication 4-5), so the machine does not assume which operations
//! a secret opens: it learns that from the server, by trying every
//! operation with every secret (a sweep), and from then on holds the
//! server to it. What API.md does fix is judged at every sweep:
//! - a secret no key has, or none, is refused with 401 (Authentication 2);
//! - a rotation changes the rotated key's secret and nothing else
//!   (Access keys: "Rotates the key"): its new secret opens exactly what
//!   the old one opened, and every other secret opens what it did before;
//! - a retired secret is one key's: it opens what its key opened, or
//!   nothing; never some operations and not others.

use std::collections::BTreeMap;

use serde_json::Value;

use super::command::{Cred, READS};
use crate::contract::OpId;
use crate::http::Auth;
use crate::model::key_id;

/// Which operations a secret opens: `true` accepted, `false` refused
/// (401 or 403); an operation missing was not learned (its answers were
/// transient).
pub type Opens = BTreeMap<OpId, bool>;

/// A secret a rotation retired.
#[derive(Debug, Clone)]
pub struct Retired {
    /// The secret.
    pub secret: String,
    /// What it opens, once a sweep learned it.
    pub opens: Opens,
}

/// One key of the aggregator.
#[derive(Debug, Clone)]
pub struct Key {
    /// Its `ak_` identifier.
    pub id: String,
    /// Its current secret.
    pub secret: String,
    /// `is_active` as listed.
    pub active: bool,
    /// What its current secret opens.
    pub opens: Opens,
    /// Secrets it was rotated away from, oldest first.
    pub retired: Vec<Retired>,
}

/// What the harness expects of a request's credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// The operation accepts it.
    Accepted,
    /// The server must refuse it with 401.
    Refused,
    /// Not known (never learned).
    Unknown,
}

/// The machine's state.
#[derive(Debug, Clone, Default)]
pub struct Machine {
    /// Every key, in the key list's order.
    pub keys: Vec<Key>,
    /// The index of the configured key.
    pub configured: usize,
    /// The index of the key the user allowed to rotate.
    pub rotatable: Option<usize>,
}

/// A credential resolved: what is sent, and which secret it is.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The header sent.
    pub auth: Auth,
    /// The key and, for a retired secret, which one.
    pub holder: Holder,
}

/// Whose a resolved credential is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Holder {
    /// Key `n`'s current secret.
    Current(usize),
    /// Key `n`'s `r`-th retired secret.
    Retired(usize, usize),
    /// Nobody's.
    Nobody,
}

impl Machine {
    /// The keys of a key list (every page), the configured key found by
    /// its secret, the rotatable key by id.
    pub fn from_list(
        keys: &[&Value],
        is_configured: impl Fn(&str) -> bool,
        rotatable: Option<&str>,
    ) -> Option<Self> {
        let keys: Vec<Key> = keys
            .iter()
            .map(|k| Key {
                id: key_id(k).to_owned(),
                secret: k["secret"].as_str().unwrap_or("").to_owned(),
                active: k["is_active"].as_bool().unwrap_or(true),
                opens: Opens::new(),
                retired: Vec::new(),
            })
            .collect();
        let configured = keys.iter().position(|k| is_configured(&k.secret))?;
        let rotatable = rotatable
            .and_then(|id| keys.iter().position(|k| k.id == id))
            .filter(|i| *i != configured);
        Some(Self {
            keys,
            configured,
            rotatable,
        })
    }

    /// Every retired secret, as (key, index) pairs, in a stable order.
    fn retired(&self) -> Vec<(usize, usize)> {
        self.keys
            .iter()
            .enumerate()
            .flat_map(|(k, key)| (0..key.retired.len()).map(move |r| (k, r)))
            .collect()
    }

    /// The keys other than the configured one.
    fn others(&self) -> Vec<usize> {
        (0..self.keys.len())
            .filter(|i| *i != self.configured)
            .collect()
    }

    /// What `cred` sends now.
    pub fn resolve(&self, cred: Cred) -> Resolved {
        let current = |k: usize| Resolved {
            auth: if k == self.configured {
                Auth::Key
            } else {
                Auth::Secret(self.keys[k].secret.clone())
            },
            holder: Holder::Current(k),
        };
        match cred {
            Cred::Configured => current(self.configured),
            Cred::Key(n) => match self.others() {
                others if others.is_empty() => current(self.configured),
                others => current(others[usize::from(n) % others.len()]),
            },
            Cred::Retired(n) => match self.retired() {
                retired if retired.is_empty() => self.resolve(Cred::MadeUp(u16::from(n))),
                retired => {
                    let (k, r) = retired[usize::from(n) % retired.len()];
                    Resolved {
                        auth: Auth::Secret(self.keys[k].retired[r].secret.clone()),
                        holder: Holder::Retired(k, r),
                    }
                }
            },
            Cred::Missing => Resolved {
                auth: Auth::Missing,
                holder: Holder::Nobody,
            },
            Cred::Empty => Resolved {
                auth: Auth::Probe(String::new()),
                holder: Holder::Nobody,
            },
            Cred::MadeUp(n) => Resolved {
                auth: Auth::Probe(format!("aggsk_madeup{n:05}c0ffee")),
                holder: Holder::Nobody,
            },
        }
    }

    /// What `op` must do with `holder`'s secret.
    pub fn expect(&self, holder: Holder, op: OpId) -> Expect {
        let opens = match holder {
            Holder::Current(k) => &self.keys[k].opens,
            Holder::Retired(k, r) => &self.keys[k].retired[r].opens,
            Holder::Nobody => return Expect::Refused,
        };
        match opens.get(&op) {
            Some(true) => Expect::Accepted,
            Some(false) => Expect::Refused,
            None => Expect::Unknown,
        }
    }

    /// Every secret the machine knows, and whose it is: each key's
    /// current one, and the last `retired` each key was rotated away from.
    pub fn secrets(&self, retired: usize) -> Vec<(Holder, Auth)> {
        let mut out = Vec::new();
        for (k, key) in self.keys.iter().enumerate() {
            out.push((
                Holder::Current(k),
                if k == self.configured {
                    Auth::Key
                } else {
                    Auth::Secret(key.secret.clone())
                },
            ));
            let skip = key.retired.len().saturating_sub(retired);
            for (r, old) in key.retired.iter().enumerate().skip(skip) {
                out.push((Holder::Retired(k, r), Auth::Secret(old.secret.clone())));
            }
        }
        out
    }

    /// The learned map of `holder`, to be set by a sweep.
    pub fn opens_mut(&mut self, holder: Holder) -> Option<&mut Opens> {
        match holder {
            Holder::Current(k) => self.keys.get_mut(k).map(|k| &mut k.opens),
            Holder::Retired(k, r) => self
                .keys
                .get_mut(k)
                .and_then(|k| k.retired.get_mut(r))
                .map(|r| &mut r.opens),
            Holder::Nobody => None,
        }
    }

    /// How a report names `holder` (never the secret).
    pub fn name(&self, holder: Holder) -> String {
        match holder {
            Holder::Current(k) if k == self.configured => "the configured key".to_owned(),
            Holder::Current(k) => format!("key {}'s current secret", self.keys[k].id),
            Holder::Retired(k, r) => format!(
                "the secret key {} had {} rotation(s) ago",
                self.keys[k].id,
                self.keys[k].retired.len() - r
            ),
            Holder::Nobody => "a secret no key has".to_owned(),
        }
    }

    /// Key `k` rotated to `secret`: the old one is retired, and learns
    /// what it opens at the next sweep.
    pub fn rotated(&mut self, k: usize, secret: String, active: Option<bool>) {
        let key = &mut self.keys[k];
        // Which operations flip `is_active` is not shown (API.md Flags):
        // the rotation's own answer says where the rotated key stands.
        key.active = active.unwrap_or(key.active);
        let old = std::mem::replace(&mut key.secret, secret);
        key.retired.push(Retired {
            secret: old,
            opens: Opens::new(),
        });
    }
}

/// Which operations a sweep tries: every read.
pub fn swept() -> &'static [OpId] {
    READS
}

/// Why `opens` (a retired secret of a key that opens `key`) is not one
/// key's: it opens some of what its key opened and not the rest.
pub fn split(opens: &Opens, key: &Opens) -> Option<String> {
    let names = |of: &Opens, accepted: bool| -> Vec<&str> {
        of.iter()
            .filter(|(_, a)| **a == accepted)
            .map(|(op, _)| crate::contract::Op::get(*op).name)
            .collect()
    };
    let accepted = names(opens, true);
    if accepted.is_empty() {
        return None;
    }
    let differs = opens
        .iter()
        .any(|(op, a)| key.get(op).is_some_and(|k| k != a));
    differs.then(|| {
        let refused = names(opens, false);
        format!(
            "accepted by {} and refused by {}, where its key's secret was accepted by {}",
            accepted.join(", "),
            if refused.is_empty() {
                "nothing".to_owned()
            } else {
                refused.join(", ")
            },
            match names(key, true) {
                k if k.is_empty() => "nothing".to_owned(),
                k => k.join(", "),
            }
        )
    })
}

/// The operations where `after` differs from `before` (both learned).
pub fn drift(before: &Opens, after: &Opens) -> Vec<(OpId, bool, bool)> {
    after
        .iter()
        .filter_map(|(op, a)| before.get(op).filter(|b| *b != a).map(|b| (*op, *b, *a)))
        .collect()
}

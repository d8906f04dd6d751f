//! The commands of a random sequence: every operation, with every kind of
//! argument and credential the contract admits.
//!
//! A command is abstract: "the second known rail merchant", "a secret the
//! key was rotated away from", not a value. It is resolved against the
//! machine when it runs, so a command means the same thing in any state,
//! and proptest can drop and shrink commands freely: a shrunk sequence is
//! still a sequence the server can be asked.

use std::fmt;

use proptest::prelude::*;

use crate::contract::{Op, OpId};

/// The reads a sequence may make: every GET of API.md.
pub const READS: &[OpId] = &[
    OpId::Aggregator,
    OpId::Keys,
    OpId::Merchants,
    OpId::RailMerchants,
    OpId::RailMerchant,
    OpId::Qrs,
    OpId::Charges,
    OpId::Refunds,
    OpId::Batches,
    OpId::Transactions,
    OpId::AccountInfo,
    OpId::TitleFetch,
    OpId::Alias,
    OpId::Ledger,
    OpId::Webhooks,
];

/// Which secret a request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cred {
    /// The configured key.
    Configured,
    /// The current secret of another key of the aggregator (the n-th, in
    /// the key list's order, the configured key left out): active or not.
    Key(u8),
    /// A secret a rotation retired (the n-th the machine knows).
    Retired(u8),
    /// No key header.
    Missing,
    /// An empty key header.
    Empty,
    /// A secret no key has.
    MadeUp(u16),
}

/// Which value a path id or a lookup is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Naming {
    /// The n-th value the model knows of the operation's kind.
    Known(u8),
    /// A well-formed value of the right kind that names nothing.
    Unknown(u16),
    /// A known value of another kind (another prefix).
    Other(u8),
}

/// One step of a sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Command {
    /// A read of `op`.
    Read {
        /// Which operation.
        op: OpId,
        /// Its path id or lookup value (ignored by the others).
        target: Naming,
        /// The secret sent.
        cred: Cred,
    },
    /// A key rotation.
    Rotate {
        /// The key rotated: `Known` is the key the user allowed to rotate.
        target: Naming,
        /// The secret sent.
        cred: Cred,
    },
    /// A report export of a known batch.
    Export {
        /// Which batch (`Known`) or a well-formed unknown one.
        batch: Naming,
        /// A merchant export (of a known rail merchant) or a batch one.
        merchant: bool,
        /// The secret sent.
        cred: Cred,
    },
}

impl Command {
    /// True for the writes.
    pub fn is_write(&self) -> bool {
        !matches!(self, Command::Read { .. })
    }

    /// The secret it sends.
    pub fn cred(&self) -> Cred {
        match *self {
            Command::Read { cred, .. }
            | Command::Rotate { cred, .. }
            | Command::Export { cred, .. } => cred,
        }
    }
}

impl fmt::Display for Cred {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cred::Configured => f.write_str("the configured key"),
            Cred::Key(n) => write!(f, "other key #{n}'s secret"),
            Cred::Retired(n) => write!(f, "retired secret #{n}"),
            Cred::Missing => f.write_str("no key header"),
            Cred::Empty => f.write_str("an empty key"),
            Cred::MadeUp(n) => write!(f, "made-up secret #{n}"),
        }
    }
}

impl fmt::Display for Naming {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Naming::Known(n) => write!(f, "known #{n}"),
            Naming::Unknown(n) => write!(f, "unknown #{n}"),
            Naming::Other(n) => write!(f, "another kind's id #{n}"),
        }
    }
}

/// Whether `op` is given a value (a path id or a lookup value).
pub fn takes_target(op: OpId) -> bool {
    Op::get(op).path_id.is_some() || matches!(op, OpId::AccountInfo | OpId::TitleFetch)
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Command::Read { op, target, cred } if takes_target(*op) => {
                write!(f, "read {} of {target} with {cred}", Op::get(*op).name)
            }
            Command::Read { op, cred, .. } => write!(f, "read {} with {cred}", Op::get(*op).name),
            Command::Rotate { target, cred } => write!(f, "rotate {target} key with {cred}"),
            Command::Export {
                batch,
                merchant,
                cred,
            } => write!(
                f,
                "export {} of batch {batch} with {cred}",
                if *merchant { "a merchant" } else { "the batch" }
            ),
        }
    }
}

fn cred() -> impl Strategy<Value = Cred> {
    prop_oneof![
        6 => Just(Cred::Configured),
        2 => (0u8..8).prop_map(Cred::Key),
        2 => (0u8..8).prop_map(Cred::Retired),
        1 => Just(Cred::Missing),
        1 => Just(Cred::Empty),
        1 => any::<u16>().prop_map(Cred::MadeUp),
    ]
}

/// A write's credential: the configured key, or one that must be refused
/// (another valid key may be scoped: whether it may write is not shown).
fn write_cred() -> impl Strategy<Value = Cred> {
    prop_oneof![
        4 => Just(Cred::Configured),
        1 => Just(Cred::Missing),
        1 => Just(Cred::Empty),
        1 => any::<u16>().prop_map(Cred::MadeUp),
    ]
}

fn target() -> impl Strategy<Value = Naming> {
    prop_oneof![
        5 => (0u8..8).prop_map(Naming::Known),
        2 => any::<u16>().prop_map(Naming::Unknown),
        1 => (0u8..8).prop_map(Naming::Other),
    ]
}

/// One command; writes only when allowed.
pub fn command(writes: bool) -> BoxedStrategy<Command> {
    let read = (proptest::sample::select(READS), target(), cred())
        .prop_map(|(op, target, cred)| Command::Read {
            op,
            // A target an operation does not take is one value, so that
            // two commands that send the same request are one command.
            target: if takes_target(op) {
                target
            } else {
                Naming::Known(0)
            },
            cred,
        })
        .boxed();
    if !writes {
        return read;
    }
    // A rotation aimed at no key is as telling as one aimed at the key:
    // what it must leave alone is everything.
    let rotate_target = prop_oneof![
        1 => (0u8..8).prop_map(Naming::Known),
        3 => any::<u16>().prop_map(Naming::Unknown),
        1 => (0u8..8).prop_map(Naming::Other),
    ];
    let rotate =
        (rotate_target, write_cred()).prop_map(|(target, cred)| Command::Rotate { target, cred });
    let export = (
        prop_oneof![4 => (0u8..8).prop_map(Naming::Known), 1 => any::<u16>().prop_map(Naming::Unknown)],
        any::<bool>(),
        write_cred(),
    )
        .prop_map(|(batch, merchant, cred)| Command::Export {
            batch,
            merchant,
            cred,
        });
    prop_oneof![8 => read, 4 => rotate, 1 => export].boxed()
}

/// A sequence of one to `steps` commands.
pub fn sequence(writes: bool, steps: usize) -> impl Strategy<Value = Vec<Command>> {
    proptest::collection::vec(command(writes), 1..=steps.max(1))
}

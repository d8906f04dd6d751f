//! A model of the server's own data, read before any rule runs: every
//! list unfiltered (whole when small, in windows when large), reads of
//! records chosen to discriminate (deep in a list, at its end, non-ASCII),
//! and the writes with the state before and after them. Rules derive the
//! expected answer of every filtered, paged or by-id request from it
//! (`expect`).
//!
//! Read in waves (`sampling`), each wave's requests side by side: a remote
//! server costs a few round trips, not hundreds.

pub mod expect;
mod filter_names;
pub mod invariants;
mod list;
mod paging_names;
mod pick;
pub mod writes;

use serde_json::Value;

pub use list::{FilterDefault, ListModel, NamedOtherwise, Several, Source, id_of, num, token_of};
pub use pick::Picker;
pub use writes::{Rotation, key_id};

use crate::contract::OpId;
use crate::http::Exchange;

/// What the sampling read.
#[derive(Debug, Default)]
pub struct Model {
    /// Every list read (after the writes, for the key list).
    pub lists: Vec<ListModel>,
    /// The key list before the rotation, when one was made.
    pub keys_before: Option<ListModel>,
    /// The rotation, when one was made.
    pub rotation: Option<Rotation>,
}

impl Model {
    /// The unqualified list of `op`.
    pub fn list(&self, op: OpId) -> Option<&ListModel> {
        self.lists
            .iter()
            .find(|l| l.source.op.id == op && l.source.base.is_empty())
    }

    /// Every list of `op` (the transactions of several batches, the QR
    /// types).
    pub fn lists(&self, op: OpId) -> impl Iterator<Item = &ListModel> {
        self.lists.iter().filter(move |l| l.source.op.id == op)
    }

    /// The batch transactions lists (not payouts), largest first.
    pub fn transaction_lists(&self) -> Vec<&ListModel> {
        let mut out: Vec<&ListModel> = self
            .lists(OpId::Transactions)
            .filter(|l| l.source.base.is_empty() && l.usable().is_ok())
            .collect();
        out.sort_by_key(|l| std::cmp::Reverse(l.len.unwrap_or(0)));
        out
    }

    /// Rows of the unqualified list of `op` known.
    pub fn rows(&self, op: OpId) -> Vec<&Value> {
        self.list(op)
            .map(|l| l.known().collect())
            .unwrap_or_default()
    }
}

/// The encoded last segment of a path that names an id.
pub fn path_id(exchange: &Exchange) -> Option<&str> {
    let op = exchange.op()?;
    let at = op.path.split('/').position(|s| s.starts_with('{'))?;
    exchange.request.path.split('/').nth(at)
}

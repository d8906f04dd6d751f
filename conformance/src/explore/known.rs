//! The values the model knows, by kind, and values of their shape that
//! name nothing.

use crate::contract::OpId;
use crate::ctx::Ctx;
use crate::model::token_of;

/// The values the model knows, by kind.
#[derive(Debug, Default)]
pub(super) struct KnownValues {
    pub(super) rail_merchants: Vec<String>,
    pub(super) payments: Vec<String>,
    pub(super) batches: Vec<String>,
    pub(super) aliases: Vec<String>,
    pub(super) merchants: Vec<String>,
    /// Lookup values of account-info: (alias type, value); `None` for IBAN.
    pub(super) accounts: Vec<(Option<&'static str>, String)>,
    pub(super) till_codes: Vec<String>,
}

impl KnownValues {
    pub(super) fn of(ctx: &Ctx) -> Self {
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
    pub(super) fn ids(&self, op: OpId) -> &[String] {
        match op {
            OpId::RailMerchant => &self.rail_merchants,
            OpId::Charges => &self.payments,
            OpId::Transactions => &self.batches,
            OpId::Alias => &self.aliases,
            _ => &[],
        }
    }

    /// Known ids of every kind but `prefix`'s.
    pub(super) fn others(&self, prefix: &str) -> Vec<&String> {
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

/// A value that names nothing: `known` with its last quarter changed
/// within its alphabet (so its prefix, length and alphabet stay; `salt`
/// picks one of several), or the prefix and digits.
pub(super) fn unknown_like(known: Option<&String>, prefix: &str, len: usize, salt: u16) -> String {
    known
        .filter(|k| k.len() > prefix.len() + 4)
        .and_then(|k| crate::rules::forms::unknown_nth(k, salt))
        .unwrap_or_else(|| {
            let tail = format!("{:04x}", salt ^ 0x5a5a);
            let body = len.saturating_sub(prefix.len() + 4);
            format!("{prefix}{}{tail}", "0".repeat(body))
        })
}

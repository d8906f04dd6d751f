//! What a run did: printed as one line, as JSON with `--json`, and kept
//! in the database's `runs` table.

use serde_json::{Value, json};

/// The totals of a run.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Summary {
    /// The server mirrored: its base URL, "(built-in mock)" after it when
    /// it is one; empty when the run stopped before it was known.
    pub target: String,
    /// The mirror, as messages show it (a URL's password redacted).
    pub database: String,
    /// Why the run could not be made or finished (exit 2), if it could not.
    pub error: Option<String>,
    /// Batches not seen before.
    pub batches_new: u64,
    /// Batches whose status changed.
    pub batches_changed: u64,
    /// Batches in the mirror.
    pub batches_total: u64,
    /// Final batches whose rows were verified in this run.
    pub batches_verified: u64,
    /// Final batches of the mirror whose rows are verified, in this run
    /// or an earlier one.
    pub batches_verified_total: u64,
    /// Batches still open (their rows walked as far as they go).
    pub batches_open: u64,
    /// Transactions added.
    pub transactions_new: u64,
    /// Transactions in the mirror.
    pub transactions_total: u64,
    /// Payouts added.
    pub payouts_new: u64,
    /// Payouts in the mirror.
    pub payouts_total: u64,
    /// Refunds added.
    pub refunds_new: u64,
    /// Refunds in the mirror.
    pub refunds_total: u64,
    /// Aggregator merchants in the mirror.
    pub merchants_total: u64,
    /// Rail merchants in the mirror.
    pub rail_merchants_total: u64,
    /// Pages fetched.
    pub pages: u64,
    /// HTTP requests, retries included.
    pub requests: u64,
    /// Retries after retryable failures.
    pub retries: u64,
    /// Time the retries waited, all requests together.
    pub waited_seconds: f64,
    /// Time the database waited for the server: the writer thread idle,
    /// every page fetched so far written. Near `seconds` the network is
    /// the limit; near 0 the database is.
    pub idle_seconds: f64,
    /// Wall time.
    pub seconds: f64,
    /// The process's peak resident memory, where the system tells it.
    pub peak_rss_mb: Option<f64>,
    /// Integrity errors found (each also in the `integrity_errors` table).
    pub integrity_errors: Vec<String>,
    /// What was set aside, and why: the run went on without it.
    pub left: Vec<Left>,
}

/// A piece of the run set aside: a batch's rows, or a list.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Left {
    /// The batch token, or the list (`refunds`, `batch list`…).
    pub subject: String,
    /// `transactions`, `payouts`, `batches`, `refunds`, `merchants`…
    pub kind: String,
    /// Why, in words (the server's text escaped).
    pub reason: String,
    /// It failed only for now (its retries ran out): the next run will
    /// likely get it.
    pub transient: bool,
    /// It broke the mirror's rules (an integrity error, recorded).
    pub integrity: bool,
}

impl Summary {
    /// The summary of a run that could not be made: `error` says why.
    pub fn of_error(error: impl Into<String>) -> Self {
        Self {
            error: Some(error.into()),
            ..Self::default()
        }
    }

    /// 0 when everything synced; 1 for integrity errors or a server fault
    /// (a piece set aside for good); 2 when the run could not be made or
    /// finished, or only transient failures left something unsynced (try
    /// again later).
    pub fn exit_code(&self) -> u8 {
        if self.error.is_some() {
            crate::EXIT_UNUSABLE
        } else if !self.integrity_errors.is_empty() || self.left.iter().any(|l| !l.transient) {
            crate::EXIT_INTEGRITY
        } else if self.left.is_empty() {
            crate::EXIT_OK
        } else {
            crate::EXIT_UNUSABLE
        }
    }

    /// The JSON of `--json`.
    pub fn to_json(&self) -> Value {
        json!({
            "target": self.target,
            "database": self.database,
            "error": self.error,
            "batches": {
                "new": self.batches_new,
                "changed": self.batches_changed,
                "total": self.batches_total,
                "verified": self.batches_verified,
                "verified_total": self.batches_verified_total,
                "open": self.batches_open,
            },
            "transactions": { "new": self.transactions_new, "total": self.transactions_total },
            "payouts": { "new": self.payouts_new, "total": self.payouts_total },
            "refunds": { "new": self.refunds_new, "total": self.refunds_total },
            "merchants": { "total": self.merchants_total },
            "rail_merchants": { "total": self.rail_merchants_total },
            "pages": self.pages,
            "requests": self.requests,
            "retries": self.retries,
            "waited_seconds": (self.waited_seconds * 10.0).round() / 10.0,
            "idle_seconds": (self.idle_seconds * 10.0).round() / 10.0,
            "seconds": (self.seconds * 1000.0).round() / 1000.0,
            "peak_rss_mb": self.peak_rss_mb.map(|m| (m * 10.0).round() / 10.0),
            "integrity_errors": self.integrity_errors,
            "left": self.left.iter().map(|l| json!({
                "subject": l.subject,
                "kind": l.kind,
                "reason": l.reason,
                "transient": l.transient,
                "integrity": l.integrity,
            })).collect::<Vec<_>>(),
            "exit_code": self.exit_code(),
        })
    }

    /// One line for a log: what changed, what the mirror holds, the cost.
    pub fn line(&self) -> String {
        format!(
            "{} new and {} changed batches; the mirror holds {} batches ({} verified, {} of them in this run; {} still open), {} transactions ({} new), {} new payouts, {} new refunds, {} merchants; {} pages, {} requests, {} retries in {:.1} s; {}",
            self.batches_new,
            self.batches_changed,
            self.batches_total,
            self.batches_verified_total,
            self.batches_verified,
            self.batches_open,
            self.transactions_total,
            self.transactions_new,
            self.payouts_new,
            self.refunds_new,
            self.merchants_total,
            self.pages,
            self.requests,
            self.retries,
            self.seconds,
            match (&self.error, self.integrity_errors.len(), self.left.len()) {
                (Some(_), _, _) => "stopped early".to_owned(),
                (None, 0, 0) => "every final batch verified".to_owned(),
                (None, errors, left) => format!("{errors} integrity errors, {left} set aside"),
            }
        )
    }
}

/// Peak resident memory (Linux `VmHWM`), in MB.
pub fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

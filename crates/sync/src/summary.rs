//! What a run did: printed as one line, as JSON with `--json`, and kept
//! in the database's `runs` table.

use serde_json::{Value, json};

/// The totals of a run.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Summary {
    /// Batches not seen before.
    pub batches_new: u64,
    /// Batches whose status changed.
    pub batches_changed: u64,
    /// Batches in the mirror.
    pub batches_total: u64,
    /// Final batches whose rows were verified in this run.
    pub batches_verified: u64,
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
    /// Pages fetched.
    pub pages: u64,
    /// HTTP requests, retries included.
    pub requests: u64,
    /// Retries after retryable failures.
    pub retries: u64,
    /// Wall time.
    pub seconds: f64,
    /// The process's peak resident memory, where the system tells it.
    pub peak_rss_mb: Option<f64>,
    /// Integrity errors found (each also in the `integrity_errors` table).
    pub integrity_errors: Vec<String>,
}

impl Summary {
    /// 0, or 1 with integrity errors.
    pub fn exit_code(&self) -> u8 {
        if self.integrity_errors.is_empty() {
            crate::EXIT_OK
        } else {
            crate::EXIT_INTEGRITY
        }
    }

    /// The JSON of `--json`.
    pub fn to_json(&self) -> Value {
        json!({
            "batches": {
                "new": self.batches_new,
                "changed": self.batches_changed,
                "total": self.batches_total,
                "verified": self.batches_verified,
                "open": self.batches_open,
            },
            "transactions": { "new": self.transactions_new, "total": self.transactions_total },
            "payouts": { "new": self.payouts_new, "total": self.payouts_total },
            "pages": self.pages,
            "requests": self.requests,
            "retries": self.retries,
            "seconds": (self.seconds * 1000.0).round() / 1000.0,
            "peak_rss_mb": self.peak_rss_mb.map(|m| (m * 10.0).round() / 10.0),
            "integrity_errors": self.integrity_errors,
            "exit_code": self.exit_code(),
        })
    }

    /// One line for a log.
    pub fn line(&self) -> String {
        format!(
            "{} new and {} changed batches ({} in all, {} verified, {} open); {} new transactions ({} in all), {} new payouts; {} pages, {} requests, {} retries in {:.1} s; {}",
            self.batches_new,
            self.batches_changed,
            self.batches_total,
            self.batches_verified,
            self.batches_open,
            self.transactions_new,
            self.transactions_total,
            self.payouts_new,
            self.pages,
            self.requests,
            self.retries,
            self.seconds,
            match self.integrity_errors.len() {
                0 => "every final batch verified".to_owned(),
                n => format!("{n} integrity errors"),
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

//! Baselines: the known failures of a server not yet conformant. A
//! failure is known by its rule and a fingerprint that stays the same from
//! run to run (the numbers, quoted values and addresses of its message do
//! not count); known failures do not fail the run, new ones do, and the
//! report says which known ones are fixed.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// A failure as a baseline records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Known {
    /// The rule id.
    pub rule: String,
    /// The failure's fingerprint.
    pub fingerprint: String,
    /// Its message when it was recorded, for the reader.
    pub message: String,
}

/// A baseline file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Baseline {
    /// `aggpay-conformance`.
    pub tool: String,
    /// The file format version.
    pub format: u32,
    /// The known failures.
    pub known: Vec<Known>,
}

/// The file format this harness writes and reads.
const FORMAT: u32 = 1;

impl Baseline {
    /// A baseline of these failures.
    pub fn of(known: Vec<Known>) -> Self {
        Self {
            tool: "aggpay-conformance".into(),
            format: FORMAT,
            known,
        }
    }

    /// Reads a baseline file.
    ///
    /// # Errors
    ///
    /// Why the file cannot be used.
    pub fn read(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the baseline {}: {e}", path.display()))?;
        let baseline: Self = serde_json::from_str(&text)
            .map_err(|e| format!("the baseline {} is not one: {e}", path.display()))?;
        if baseline.format != FORMAT {
            return Err(format!(
                "the baseline {} has format {}, this harness reads {FORMAT}",
                path.display(),
                baseline.format
            ));
        }
        Ok(baseline)
    }

    /// Writes the baseline file.
    ///
    /// # Errors
    ///
    /// Why it cannot be written.
    pub fn write(&self, path: &Path) -> Result<(), String> {
        let text = serde_json::to_string_pretty(self).unwrap_or_default();
        std::fs::write(path, format!("{text}\n"))
            .map_err(|e| format!("cannot write the baseline {}: {e}", path.display()))
    }

    /// True when the baseline knows this failure.
    pub fn knows(&self, rule: &str, fingerprint: &str) -> bool {
        self.known
            .iter()
            .any(|k| k.rule == rule && k.fingerprint == fingerprint)
    }
}

/// The fingerprint of a failure of `rule` with `message`: a hash of the
/// message's shape. Numbers, quoted values, identifiers, addresses and
/// ports are left out, so the same fault found with other data (another
/// seed, another port, other rows) has the same fingerprint.
pub fn fingerprint(rule: &str, message: &str) -> String {
    let text: Vec<u8> = rule
        .bytes()
        .chain([0])
        .chain(shape(message).bytes())
        .collect();
    let h = aggpay_internal::mix::fnv1a(0, &text);
    format!("{:016x}", aggpay_internal::mix::splitmix64(h))
}

/// A message with its variable parts replaced by `#`.
fn shape(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut quote: Option<char> = None;
    for word in message.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        let mut kept = String::new();
        for ch in word.chars() {
            match quote {
                Some(q) if ch == q => {
                    quote = None;
                    kept.push('#');
                }
                Some(_) => {}
                None if ch == '"' || ch == '`' => quote = Some(ch),
                None if ch.is_ascii_digit() => {
                    if !kept.ends_with('#') {
                        kept.push('#');
                    }
                }
                None => kept.push(ch),
            }
        }
        // Identifiers (prefix_hex…), URLs and long tokens carry data.
        let data = kept.contains("://")
            || kept.contains('_') && kept.len() > 12
            || kept.chars().filter(char::is_ascii_hexdigit).count() >= 8;
        out.push_str(if data { "#" } else { &kept });
    }
    // Lists of data are data too, whatever their length.
    while out.contains("#, #") {
        out = out.replace("#, #", "#");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_ignore_the_data_of_a_message() {
        let a = fingerprint(
            "cursor.order",
            "direction \"asc\": ids [1003, 1006] are not strictly descending",
        );
        let b = fingerprint(
            "cursor.order",
            "direction \"aSc\": ids [2011, 2019, 2031] are not strictly descending",
        );
        assert_eq!(a, b);
        assert_ne!(
            a,
            fingerprint(
                "cursor.walk",
                "direction \"asc\": ids [1003, 1006] are not strictly descending"
            )
        );
        let c = fingerprint(
            "ids.prefixes",
            "transactions: transactions[3].token: \"tx_9f2\" lacks the prefix txn_",
        );
        let d = fingerprint(
            "ids.prefixes",
            "transactions: transactions[17].token: \"tx_1ab\" lacks the prefix txn_",
        );
        assert_eq!(c, d);
        assert_ne!(
            c,
            fingerprint(
                "ids.prefixes",
                "qrs: qr_codes[0].token: \"qrd_1\" lacks the prefix qr_"
            )
        );
        let e = fingerprint(
            "x.y",
            "GET http://127.0.0.1:41234/v1/aggregators/agg_1f2e3d4c5b6a/keys failed",
        );
        let f = fingerprint(
            "x.y",
            "GET http://127.0.0.1:39999/v1/aggregators/agg_9a8b7c6d5e4f/keys failed",
        );
        assert_eq!(e, f);
    }

    #[test]
    fn baselines_round_trip() {
        let dir = aggpay_testkit::TempDir::new("aggpay-baseline");
        let path = dir.join("b.json");
        let b = Baseline::of(vec![Known {
            rule: "a.b".into(),
            fingerprint: "0123".into(),
            message: "m".into(),
        }]);
        b.write(&path).unwrap();
        assert_eq!(Baseline::read(&path).unwrap(), b);
        assert!(b.knows("a.b", "0123") && !b.knows("a.b", "9"));
        std::fs::write(&path, "{}").unwrap();
        assert!(Baseline::read(&path).is_err());
    }
}

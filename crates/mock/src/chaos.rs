//! Transport chaos and latency: a test bed for tools built on the client.
//! Off by default; deterministic for a seed (the n-th request of a server
//! always meets the same fate).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use aggpay_internal::mix::splitmix64;

/// What chaos can do to a request (see [`Chaos`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mishap {
    /// Answer with this 5xx status instead.
    Status(u16),
    /// Answer 429 with `Retry-After`.
    TooMany,
    /// Send the head and half the body, then reset the connection.
    Reset,
    /// Send the head and half the body, then close cleanly.
    Truncate,
    /// Send the answer in pieces, spread over [`Chaos::slow_for`].
    Slow,
    /// For a write (PUT, POST): carry it out, then lose the answer (half
    /// of it, then a TCP reset). Nothing for a read.
    LostWrite,
}

/// A mishap as a chaos spec names it (`5xx` stands for any server error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SpecMishap {
    Status(u16),
    AnyServerError,
    TooMany,
    Reset,
    Truncate,
    Slow,
    LostWrite,
}

impl SpecMishap {
    const NAMES: &'static str = "500, 502, 503, 504, 5xx, 429, reset, truncate, slow, lost-write";

    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "500" => SpecMishap::Status(500),
            "502" => SpecMishap::Status(502),
            "503" => SpecMishap::Status(503),
            "504" => SpecMishap::Status(504),
            "5xx" => SpecMishap::AnyServerError,
            "429" => SpecMishap::TooMany,
            "reset" => SpecMishap::Reset,
            "truncate" => SpecMishap::Truncate,
            "slow" => SpecMishap::Slow,
            "lost-write" => SpecMishap::LostWrite,
            _ => return None,
        })
    }

    fn name(self) -> String {
        match self {
            SpecMishap::Status(s) => s.to_string(),
            SpecMishap::AnyServerError => "5xx".into(),
            SpecMishap::TooMany => "429".into(),
            SpecMishap::Reset => "reset".into(),
            SpecMishap::Truncate => "truncate".into(),
            SpecMishap::Slow => "slow".into(),
            SpecMishap::LostWrite => "lost-write".into(),
        }
    }
}

/// Transport chaos: the share of requests that meet each mishap.
///
/// Written `KIND=SHARE,…`, for example
/// `503=0.05,429=0.05,reset=0.02,truncate=0.01,slow=0.01`:
///
/// | kind | on the wire |
/// |---|---|
/// | `500`, `503` | that status, the envelope error body `error.internal_server_error` |
/// | `502`, `504` | that status, an HTML page, as a gateway sends it |
/// | `5xx` | one of 500, 502, 503, 504 |
/// | `429` | 429 with `Retry-After` ([`Chaos::retry_after`], 1 s by default) and a bare error body |
/// | `reset` | the real answer's head and half its body, then a TCP reset |
/// | `truncate` | the real answer's head (its full `Content-Length`) and half its body, then a clean close |
/// | `slow` | the real answer in 16 pieces spread over [`Chaos::slow_for`] (2 s by default) |
/// | `lost-write` | for a PUT or POST only: the write is carried out, then its answer is cut by a TCP reset (a read is untouched) |
///
/// Shares are between 0 and 1 and add up to at most 1. Which request meets
/// which fate is a function of the server's seed and the request's number,
/// so a run is repeatable.
///
/// ```
/// use aggpay_mock::Chaos;
///
/// let chaos: Chaos = "503=0.1,429=0.05,reset=0.02".parse()?;
/// assert!("reset=2".parse::<Chaos>().is_err());
/// # Ok::<(), aggpay_mock::ChaosError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Chaos {
    shares: Vec<(SpecMishap, f64)>,
    retry_after: Duration,
    slow: Duration,
}

impl Default for Chaos {
    fn default() -> Self {
        Self {
            shares: Vec::new(),
            retry_after: Duration::from_secs(1),
            slow: Duration::from_secs(2),
        }
    }
}

/// A chaos or latency spec that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ChaosError(String);

impl FromStr for Chaos {
    type Err = ChaosError;

    fn from_str(spec: &str) -> Result<Self, ChaosError> {
        let mut chaos = Chaos::default();
        let mut sum = 0.0;
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, share) = part
                .split_once('=')
                .ok_or_else(|| ChaosError(format!("`{part}` is not KIND=SHARE")))?;
            let kind = SpecMishap::parse(name.trim()).ok_or_else(|| {
                ChaosError(format!(
                    "unknown kind `{}` (known: {})",
                    name.trim(),
                    SpecMishap::NAMES
                ))
            })?;
            let share: f64 = share
                .trim()
                .parse()
                .ok()
                .filter(|s: &f64| (0.0..=1.0).contains(s))
                .ok_or_else(|| {
                    ChaosError(format!(
                        "the share of `{}` must be a number from 0 to 1, got `{}`",
                        name.trim(),
                        share.trim()
                    ))
                })?;
            if chaos.shares.iter().any(|(k, _)| *k == kind) {
                return Err(ChaosError(format!("`{}` is given twice", name.trim())));
            }
            sum += share;
            chaos.shares.push((kind, share));
        }
        if sum > 1.0 + 1e-9 {
            return Err(ChaosError(format!(
                "the shares add up to {sum}, more than 1"
            )));
        }
        Ok(chaos)
    }
}

impl fmt::Display for Chaos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .shares
            .iter()
            .map(|(k, s)| format!("{}={s}", k.name()))
            .collect();
        f.write_str(&parts.join(","))
    }
}

impl Chaos {
    /// The `Retry-After` of chaos 429 answers (default 1 s; whole seconds).
    pub fn retry_after(mut self, after: Duration) -> Self {
        self.retry_after = after;
        self
    }

    /// How long a `slow` answer takes to send (default 2 s).
    pub fn slow_for(mut self, duration: Duration) -> Self {
        self.slow = duration;
        self
    }

    /// True when no request meets any mishap.
    pub fn is_off(&self) -> bool {
        self.shares.iter().all(|(_, s)| *s == 0.0)
    }

    pub(crate) fn retry_after_secs(&self) -> u64 {
        self.retry_after.as_secs()
    }

    pub(crate) fn slow_duration(&self) -> Duration {
        self.slow
    }

    /// The fate of request number `n` of a server seeded `seed`.
    pub(crate) fn decide(&self, seed: u64, n: u64) -> Option<Mishap> {
        if self.is_off() {
            return None;
        }
        let draw = splitmix64(seed ^ splitmix64(n ^ 0xc4a0_5c4a_05c4_a05c));
        let mut u = unit(draw);
        for (kind, share) in &self.shares {
            if u < *share {
                return Some(match kind {
                    SpecMishap::Status(s) => Mishap::Status(*s),
                    SpecMishap::AnyServerError => {
                        Mishap::Status([500, 502, 503, 504][(draw % 4) as usize])
                    }
                    SpecMishap::TooMany => Mishap::TooMany,
                    SpecMishap::Reset => Mishap::Reset,
                    SpecMishap::Truncate => Mishap::Truncate,
                    SpecMishap::Slow => Mishap::Slow,
                    SpecMishap::LostWrite => Mishap::LostWrite,
                });
            }
            u -= share;
        }
        None
    }
}

/// A uniform number in `[0, 1)` from 53 bits of `x`.
fn unit(x: u64) -> f64 {
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// Latency added before every answer: fixed (`50`) or uniform in a range
/// (`20..80`), in milliseconds.
///
/// ```
/// use aggpay_mock::Latency;
///
/// let fixed: Latency = "50".parse()?;
/// let range: Latency = "20..80".parse()?;
/// assert!("80..20".parse::<Latency>().is_err());
/// # let _ = (fixed, range);
/// # Ok::<(), aggpay_mock::ChaosError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Latency {
    min_ms: u64,
    max_ms: u64,
}

/// The most latency one answer can be given: a minute.
const MAX_LATENCY_MS: u64 = 60_000;

impl FromStr for Latency {
    type Err = ChaosError;

    fn from_str(spec: &str) -> Result<Self, ChaosError> {
        let ms = |s: &str| {
            s.trim()
                .parse::<u64>()
                .ok()
                .filter(|v| *v <= MAX_LATENCY_MS)
                .ok_or_else(|| {
                    ChaosError(format!(
                        "`{}` is not a number of milliseconds from 0 to {MAX_LATENCY_MS}",
                        s.trim()
                    ))
                })
        };
        let (min_ms, max_ms) = match spec.split_once("..") {
            Some((a, b)) => (ms(a)?, ms(b)?),
            None => {
                let v = ms(spec)?;
                (v, v)
            }
        };
        if min_ms > max_ms {
            return Err(ChaosError(format!("the range {min_ms}..{max_ms} is empty")));
        }
        Ok(Self { min_ms, max_ms })
    }
}

impl Latency {
    /// A fixed latency.
    pub fn fixed(delay: Duration) -> Self {
        let ms = u64::try_from(delay.as_millis())
            .unwrap_or(MAX_LATENCY_MS)
            .min(MAX_LATENCY_MS);
        Self {
            min_ms: ms,
            max_ms: ms,
        }
    }

    /// True when nothing is added.
    pub fn is_zero(&self) -> bool {
        self.max_ms == 0
    }

    /// The delay of request number `n` of a server seeded `seed`.
    pub(crate) fn delay(&self, seed: u64, n: u64) -> Duration {
        let spread = self.max_ms - self.min_ms;
        let extra = if spread == 0 {
            0
        } else {
            splitmix64(seed ^ splitmix64(n ^ 0x1a7e_1a7e)) % (spread + 1)
        };
        Duration::from_millis(self.min_ms + extra)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_are_read_and_checked() {
        let chaos: Chaos = "503=0.05, 429=0.05,reset=0.02,truncate=0.01,slow=0.01"
            .parse()
            .unwrap();
        assert_eq!(
            chaos.to_string(),
            "503=0.05,429=0.05,reset=0.02,truncate=0.01,slow=0.01"
        );
        for bad in [
            "503",
            "418=0.1",
            "503=-0.1",
            "503=1.5",
            "503=x",
            "503=0.6,429=0.6",
            "reset=0.1,reset=0.1",
        ] {
            assert!(bad.parse::<Chaos>().is_err(), "{bad}");
        }
        assert!("".parse::<Chaos>().unwrap().is_off());
    }

    #[test]
    fn decisions_are_deterministic_and_proportioned() {
        let chaos: Chaos = "503=0.1,429=0.05,reset=0.02".parse().unwrap();
        let fates: Vec<_> = (0..20_000).map(|n| chaos.decide(7, n)).collect();
        let again: Vec<_> = (0..20_000).map(|n| chaos.decide(7, n)).collect();
        assert_eq!(fates, again);
        let share = |m: Mishap| fates.iter().filter(|f| **f == Some(m)).count() as f64 / 20_000.0;
        assert!((share(Mishap::Status(503)) - 0.1).abs() < 0.01);
        assert!((share(Mishap::TooMany) - 0.05).abs() < 0.01);
        assert!((share(Mishap::Reset) - 0.02).abs() < 0.005);
        let other: Vec<_> = (0..20_000).map(|n| chaos.decide(8, n)).collect();
        assert_ne!(fates, other);
    }

    #[test]
    fn latency_stays_in_its_range() {
        let l: Latency = "20..80".parse().unwrap();
        for n in 0..1_000 {
            let d = l.delay(3, n).as_millis();
            assert!((20..=80).contains(&d), "{d}");
        }
        assert_eq!(
            "50".parse::<Latency>().unwrap().delay(1, 1),
            Duration::from_millis(50)
        );
        for bad in ["", "x", "80..20", "1..999999999", "-5"] {
            assert!(bad.parse::<Latency>().is_err(), "{bad}");
        }
    }
}

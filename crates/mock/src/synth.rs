//! Deterministic generation: every value of the dataset is a pure function
//! of (seed, tag, index), so any row can be made on demand in O(1).

use jiff::{SignedDuration, Timestamp};

pub(crate) use aggpay_internal::mix::{splitmix64 as mix, splitmix64_inverse as unmix};

/// A stream of hashed values for one record.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64, tag: &str, index: u64) -> Self {
        let mut h = mix(seed ^ 0x5151_5151);
        for b in tag.bytes() {
            h = mix(h ^ u64::from(b));
        }
        Self(mix(h ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }

    /// A value in `0..n` (n > 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    pub(crate) fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }

    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        // Callers pass non-empty constant tables; index is in range.
        &items[self.below(items.len() as u64) as usize]
    }

    /// `digits` hex digits: the 16-digit renderings of the next values,
    /// one after another, cut at `digits`.
    pub(crate) fn hex(&mut self, digits: usize) -> String {
        self.token("", digits)
    }

    /// `prefix` then `hex(digits)`, built in place: rows are made on
    /// demand, a page at a time, so no intermediate strings.
    pub(crate) fn token(&mut self, prefix: &str, digits: usize) -> String {
        let mut out = String::with_capacity(prefix.len() + digits);
        out.push_str(prefix);
        let mut left = digits;
        while left > 0 {
            let n = left.min(16);
            push_hex(&mut out, self.next(), n);
            left -= n;
        }
        out
    }

    pub(crate) fn digits(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| char::from(b'0' + self.below(10) as u8))
            .collect()
    }
}

/// Appends the first `digits` (at most 16) of `value`'s 16-digit
/// lowercase hex rendering (`{:016x}`), without formatting machinery.
pub(crate) fn push_hex(out: &mut String, value: u64, digits: usize) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for k in 0..digits.min(16) {
        let nibble = (value >> (60 - 4 * k)) & 0xf;
        out.push(char::from(HEX[nibble as usize]));
    }
}

/// The dataset's epoch: 2024-01-01T00:00:00Z.
pub(crate) const EPOCH: i64 = 1_704_067_200;

/// A timestamp `secs` after the epoch, with `millis` of fraction.
pub(crate) fn at(secs: i64, millis: i64) -> Timestamp {
    Timestamp::from_second(EPOCH + secs)
        .ok()
        .and_then(|t| t.checked_add(SignedDuration::from_millis(millis)).ok())
        .unwrap_or(Timestamp::UNIX_EPOCH)
}

pub(crate) const FIRST_NAMES: &[&str] = &[
    "Karachi",
    "Lahore",
    "Indus",
    "Ravi",
    "Margalla",
    "Chenab",
    "Khyber",
    "Saddar",
    "Clifton",
    "Gulberg",
    "Anarkali",
    "Mall Road",
    "Zamzama",
    "Blue Area",
    "Liberty",
    "Jinnah",
];
pub(crate) const SECOND_NAMES: &[&str] = &[
    "Traders",
    "Mart",
    "Pharmacy",
    "Bakers",
    "Electronics",
    "Textiles",
    "Foods",
    "Motors",
    "Books",
    "Tea House",
    "Grocers",
    "Tailors",
    "Café",
    "کریانہ",
];
pub(crate) const PROVINCES: &[&str] = &[
    "Sindh",
    "Punjab",
    "Khyber Pakhtunkhwa",
    "Balochistan",
    "Islamabad Capital Territory",
];
pub(crate) const CITIES: &[&str] = &[
    "Karachi",
    "Lahore",
    "Peshawar",
    "Quetta",
    "Islamabad",
    "Multan",
    "Faisalabad",
];
pub(crate) const BANKS: &[(&str, &str)] = &[
    ("HABB", "Habib Bank"),
    ("MUCB", "MCB Bank"),
    ("UNIL", "United Bank"),
    ("ALFH", "Bank Alfalah"),
    ("MEZN", "Meezan Bank"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_is_deterministic() {
        let a: Vec<u64> = {
            let mut r = Rng::new(7, "t", 3);
            (0..4).map(|_| r.next()).collect()
        };
        let b: Vec<u64> = {
            let mut r = Rng::new(7, "t", 3);
            (0..4).map(|_| r.next()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(Rng::new(7, "t", 3).next(), Rng::new(8, "t", 3).next());
        assert_eq!(Rng::new(1, "x", 1).hex(36).len(), 36);
    }

    /// The hand-rolled hex is `{:016x}` exactly: every identifier the mock
    /// ever served is made of it, so a seed must keep serving the same.
    #[test]
    fn hex_is_the_formatted_rendering_cut() {
        for value in [0, 1, 0xf, 0xdead_beef, u64::MAX, 0x0123_4567_89ab_cdef] {
            for digits in 0..=16 {
                let mut out = String::new();
                push_hex(&mut out, value, digits);
                assert_eq!(out, format!("{value:016x}")[..digits]);
            }
        }
        for digits in [0, 4, 12, 16, 20, 40, 64] {
            let mut r = Rng::new(3, "hex", 9);
            let mut formatted = String::new();
            while formatted.len() < digits {
                formatted.push_str(&format!("{:016x}", r.next()));
            }
            formatted.truncate(digits);
            assert_eq!(Rng::new(3, "hex", 9).hex(digits), formatted);
            assert_eq!(
                Rng::new(3, "hex", 9).token("pfx_", digits),
                format!("pfx_{formatted}")
            );
        }
    }
}

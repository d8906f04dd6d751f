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

    pub(crate) fn hex(&mut self, digits: usize) -> String {
        let mut out = String::with_capacity(digits);
        while out.len() < digits {
            out.push_str(&format!("{:016x}", self.next()));
        }
        out.truncate(digits);
        out
    }

    pub(crate) fn digits(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| char::from(b'0' + self.below(10) as u8))
            .collect()
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
}

//! Seeded choices: values a wrong server would answer differently, drawn
//! the same way for the same seed.

use aggpay_internal::mix::{fnv1a, splitmix64};

/// A stream of seeded choices, one per purpose (its tag), so that what
/// one rule draws does not depend on what another drew.
#[derive(Debug, Clone)]
pub struct Picker {
    state: u64,
}

impl Picker {
    /// The choices of `tag` under `seed`.
    pub fn new(seed: u64, tag: &str) -> Self {
        Self {
            state: fnv1a(seed, tag.as_bytes()),
        }
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        if n == 0 {
            0
        } else {
            (splitmix64(self.state) % n as u64) as usize
        }
    }

    /// One of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        (!items.is_empty()).then(|| &items[self.below(items.len())])
    }

    /// Indices into a list of `len` that a wrong server would answer
    /// differently: the first, the last, and `deep` drawn from the rest.
    pub fn positions(&mut self, len: usize, deep: usize) -> Vec<usize> {
        let mut out = Vec::new();
        if len == 0 {
            return out;
        }
        out.push(0);
        out.push(len - 1);
        for _ in 0..deep {
            if len > 2 {
                out.push(1 + self.below(len - 2));
            }
        }
        let mut seen = std::collections::HashSet::new();
        out.retain(|i| seen.insert(*i));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_repeat_for_a_seed_and_differ_by_tag() {
        let draw = |seed, tag| {
            let mut p = Picker::new(seed, tag);
            (0..8).map(|_| p.below(1000)).collect::<Vec<_>>()
        };
        assert_eq!(draw(1, "a"), draw(1, "a"));
        assert_ne!(draw(1, "a"), draw(1, "b"));
        assert_ne!(draw(1, "a"), draw(2, "a"));
        let mut p = Picker::new(3, "x");
        let at = p.positions(50, 3);
        assert_eq!(at[..2], [0, 49]);
        assert!(at.iter().all(|i| *i < 50));
        assert_eq!(p.positions(1, 3), vec![0]);
        assert!(p.positions(0, 3).is_empty());
    }
}

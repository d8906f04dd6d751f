//! The workspace's hashes: splitmix64 and its inverse, and FNV-1a of
//! bytes (seeds per purpose, fingerprints). Not for anything secret.
//!
//! ```
//! use aggpay_internal::mix::{splitmix64, splitmix64_inverse};
//!
//! assert_eq!(splitmix64_inverse(splitmix64(42)), 42);
//! ```

const MUL1: u64 = 0xbf58_476d_1ce4_e5b9;
const MUL2: u64 = 0x94d0_49bb_1331_11eb;

/// The splitmix64 finaliser: a bijection on `u64` with good avalanche.
/// Not for anything secret.
pub const fn splitmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(MUL1);
    z = (z ^ (z >> 27)).wrapping_mul(MUL2);
    z ^ (z >> 31)
}

/// Multiplicative inverse modulo 2^64 of an odd number (Newton's method:
/// each step doubles the correct low bits, 6 steps cover 64).
const fn inverse(a: u64) -> u64 {
    let mut x = a;
    let mut i = 0;
    while i < 6 {
        x = x.wrapping_mul(2u64.wrapping_sub(a.wrapping_mul(x)));
        i += 1;
    }
    x
}

/// Undoes `z ^= z >> s`.
const fn unshift(z: u64, s: u32) -> u64 {
    let mut x = z;
    let mut k = s;
    while k < 64 {
        x = z ^ (x >> s);
        k += s;
    }
    x
}

/// The inverse of [`splitmix64`]: `splitmix64_inverse(splitmix64(x)) == x`.
pub const fn splitmix64_inverse(mut z: u64) -> u64 {
    z = unshift(z, 31);
    z = z.wrapping_mul(inverse(MUL2));
    z = unshift(z, 27);
    z = z.wrapping_mul(inverse(MUL1));
    unshift(z, 30)
}

/// FNV-1a of `bytes`, started from `basis` mixed into the standard offset
/// basis: the one stable hash of bytes (seeds per purpose, fingerprints).
pub fn fnv1a(basis: u64, bytes: &[u8]) -> u64 {
    let mut h: u64 = basis ^ 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn mixing_is_a_bijection(x in any::<u64>()) {
            prop_assert_eq!(splitmix64_inverse(splitmix64(x)), x);
        }
    }
}

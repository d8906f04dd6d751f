//! Money: integer paisa, never floats.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::Error;
use crate::id::excerpt;
use crate::syntax;

/// An amount in the lowest currency denomination (paisa), serialized as a
/// decimal integer string such as `"483"`.
///
/// Arithmetic is checked: an overflow is `None`, never a wrapped value.
/// There is no `+`: a sum is an `Option<Paisa>`, so that an overflow
/// cannot go unnoticed.
///
/// ```
/// use aggpay::Paisa;
///
/// let gross: Paisa = "500".parse()?;
/// let fee = Paisa::new(2);
/// assert_eq!(gross.checked_sub(fee), Some(Paisa::new(498)));
/// assert_eq!(serde_json::to_string(&fee)?, "\"2\"");
///
/// // Sums: `None` when they overflow.
/// let amounts = [Paisa::new(483), Paisa::new(17)];
/// let total: Option<Paisa> = amounts.iter().sum();
/// assert_eq!(total, Some(Paisa::new(500)));
/// let huge: Option<Paisa> = [Paisa::new(i64::MAX), Paisa::new(1)].into_iter().sum();
/// assert_eq!(huge, None);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Paisa(i64);

impl Paisa {
    /// Zero paisa.
    pub const ZERO: Paisa = Paisa(0);

    /// Wraps a number of paisa.
    pub const fn new(paisa: i64) -> Self {
        Self(paisa)
    }

    /// The number of paisa.
    pub const fn get(self) -> i64 {
        self.0
    }

    /// `self + other`, or `None` on overflow.
    pub fn checked_add(self, other: Paisa) -> Option<Paisa> {
        self.0.checked_add(other.0).map(Paisa)
    }

    /// `self - other`, or `None` on overflow.
    pub fn checked_sub(self, other: Paisa) -> Option<Paisa> {
        self.0.checked_sub(other.0).map(Paisa)
    }

    /// Parses the wire form: a decimal integer string, an optional leading
    /// `-`, no leading zero.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for decimals, exponents, signs other than a
    /// leading `-`, leading zeros, blanks or values out of `i64` range.
    pub fn parse(value: &str) -> Result<Self, Error> {
        if let Some(n) = syntax::paisa(value) {
            return Ok(Self(n));
        }
        Err(Error::invalid_input(
            "amount",
            format!(
                "`{}` is not an amount in paisa (a decimal integer string)",
                excerpt(value)
            ),
        ))
    }
}

/// The sum of amounts, `None` when it overflows.
impl std::iter::Sum<Paisa> for Option<Paisa> {
    fn sum<I: Iterator<Item = Paisa>>(mut iter: I) -> Self {
        iter.try_fold(Paisa::ZERO, Paisa::checked_add)
    }
}

/// The sum of borrowed amounts, `None` when it overflows.
impl<'a> std::iter::Sum<&'a Paisa> for Option<Paisa> {
    fn sum<I: Iterator<Item = &'a Paisa>>(iter: I) -> Self {
        iter.copied().sum()
    }
}

/// The amount in paisa as the API writes it (`48300`); the alternate form
/// (`{:#}`) in rupees as people read them, 100 paisa to the rupee, with
/// thousands separated (`Rs 483.00`, `-Rs 1,234,567.89`).
///
/// ```
/// use aggpay::Paisa;
///
/// assert_eq!(Paisa::new(48300).to_string(), "48300");
/// assert_eq!(format!("{:#}", Paisa::new(48300)), "Rs 483.00");
/// assert_eq!(format!("{:#}", Paisa::new(-123456789)), "-Rs 1,234,567.89");
/// assert_eq!(format!("{:#}", Paisa::new(5)), "Rs 0.05");
/// ```
impl fmt::Display for Paisa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !f.alternate() {
            return fmt::Display::fmt(&self.0, f);
        }
        let abs = self.0.unsigned_abs();
        let rupees = (abs / 100).to_string();
        let mut grouped = String::new();
        for (i, c) in rupees.chars().enumerate() {
            if i > 0 && (rupees.len() - i).is_multiple_of(3) {
                grouped.push(',');
            }
            grouped.push(c);
        }
        let sign = if self.0 < 0 { "-" } else { "" };
        write!(f, "{sign}Rs {grouped}.{:02}", abs % 100)
    }
}

impl FromStr for Paisa {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        Self::parse(s)
    }
}

impl From<i64> for Paisa {
    fn from(value: i64) -> Self {
        Self(value)
    }
}

impl Serialize for Paisa {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(itoa::Buffer::new().format(self.0))
    }
}

impl<'de> Deserialize<'de> for Paisa {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::model_util::parsed_str(deserializer, "an amount in paisa as a string", Self::parse)
    }
}

/// `gross` minus every deduction, or `None` on overflow: the rule that ties
/// `net_amount` to the other amounts of charges and transactions.
pub(crate) fn net_of(gross: Paisa, deductions: [Paisa; 5]) -> Option<Paisa> {
    deductions.into_iter().try_fold(gross, Paisa::checked_sub)
}

/// An ISO 4217 alphabetic currency code such as `PKR`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Currency([u8; 3]);

impl Currency {
    /// Pakistani rupee, the currency of the rail.
    pub const PKR: Currency = Currency(*b"PKR");

    /// Parses a code of three uppercase ASCII letters.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for anything else.
    pub fn parse(value: &str) -> Result<Self, Error> {
        match <[u8; 3]>::try_from(value.as_bytes()) {
            Ok(code) if syntax::is_currency(value) => Ok(Self(code)),
            _ => Err(Error::invalid_input(
                "currency",
                format!("`{}` is not an ISO 4217 code", excerpt(value)),
            )),
        }
    }

    /// The code.
    pub fn as_str(&self) -> &str {
        // Only three ASCII uppercase letters are ever stored (see `parse`).
        std::str::from_utf8(&self.0).unwrap_or("???")
    }
}

impl fmt::Debug for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Currency({})", self.as_str())
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Currency {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        Self::parse(s)
    }
}

impl Serialize for Currency {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Currency {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::model_util::parsed_str(deserializer, "an ISO 4217 code", Self::parse)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn wire_form() {
        assert_eq!(Paisa::parse("483").unwrap(), Paisa::new(483));
        assert_eq!(Paisa::parse("-12").unwrap().get(), -12);
        for bad in ["4.83", "", "1e2", "007", "-0", "99999999999999999999"] {
            assert!(Paisa::parse(bad).is_err(), "{bad}");
        }
        assert!(
            serde_json::from_str::<Paisa>("483").is_err(),
            "numbers are not paisa strings"
        );
    }

    #[test]
    fn checked_math() {
        assert_eq!(Paisa::new(i64::MAX).checked_add(Paisa::new(1)), None);
        assert_eq!(Paisa::new(i64::MIN).checked_sub(Paisa::new(1)), None);
    }

    #[test]
    fn currency() {
        assert_eq!(Currency::parse("PKR").unwrap(), Currency::PKR);
        assert_eq!(serde_json::to_string(&Currency::PKR).unwrap(), "\"PKR\"");
        for bad in ["pkr", "PK", "PKRX", "", "P1R"] {
            assert!(Currency::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn net_rule() {
        let net = net_of(Paisa::new(500), [2, 0, 10, 5, 0].map(Paisa::new));
        assert_eq!(net, Some(Paisa::new(483)));
        assert_eq!(
            net_of(Paisa::new(i64::MIN), [1, 0, 0, 0, 0].map(Paisa::new)),
            None
        );
    }

    proptest! {
        #[test]
        fn roundtrip(n in any::<i64>()) {
            let json = serde_json::to_string(&Paisa::new(n)).unwrap();
            prop_assert_eq!(json.clone(), format!("\"{n}\""));
            prop_assert_eq!(serde_json::from_str::<Paisa>(&json).unwrap(), Paisa::new(n));
        }
    }
}

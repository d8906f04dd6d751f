//! Command-line values the tools share, refused the same way everywhere.

use crate::text::excerpt;

/// The slowest and the fastest request rates a client accepts
/// (`aggpay::ClientBuilder::rate_limit`), in
/// requests a second: one an hour to a million a second.
pub const RATE_LIMIT_RANGE: std::ops::RangeInclusive<f64> = (1.0 / 3_600.0)..=1_000_000.0;

/// A command-line number of seconds, from 1 ms to a day (a timeout, a run
/// budget); the error says the range. The tools refuse the same values
/// the same way.
///
/// ```
/// assert_eq!(aggpay_internal::cli::parse_seconds("2.5"), Ok(2.5));
/// assert!(aggpay_internal::cli::parse_seconds("1e20").is_err());
/// assert!(aggpay_internal::cli::parse_seconds("NaN").is_err());
/// ```
pub fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if (0.001..=86_400.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "`{}` is not a number of seconds from 0.001 to 86400",
            excerpt(text, 40)
        )),
    }
}

/// A command-line request rate within [`RATE_LIMIT_RANGE`]; the error
/// says the range.
///
/// ```
/// assert_eq!(aggpay_internal::cli::parse_rate("50"), Ok(50.0));
/// assert!(aggpay_internal::cli::parse_rate("1e-300").is_err());
/// ```
pub fn parse_rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if RATE_LIMIT_RANGE.contains(&v) => Ok(v),
        _ => Err(format!(
            "`{}` is not a number of requests per second from 0.0003 (one an hour) to 1000000",
            excerpt(text, 40)
        )),
    }
}

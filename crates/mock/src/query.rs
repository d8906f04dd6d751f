//! Query strings: percent-decoding and validated, typed parameters.
//!
//! Every failure is a message naming the parameter; the router turns it into
//! a 400 in the bare form.

/// A failed validation: the detail of a 400.
pub(crate) type Invalid = String;

/// Decodes `%XX` escapes (and `+` as a space, as forms send it); refuses
/// broken escapes and bytes that are not UTF-8.
pub(crate) fn percent_decode(raw: &str, plus_as_space: bool) -> Result<String, Invalid> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok());
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) if hex.is_some_and(|h| h.bytes().all(|c| c.is_ascii_hexdigit())) => {
                        out.push(b);
                        i += 3;
                    }
                    _ => return Err("malformed percent-encoding".to_owned()),
                }
            }
            b'+' if plus_as_space => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| "percent-encoding is not UTF-8".to_owned())
}

/// The decoded parameters of one request, in order.
#[derive(Debug, Default)]
pub(crate) struct Query {
    pairs: Vec<(String, String)>,
}

/// Longest value echoed back in a message.
fn shown(value: &str) -> String {
    format!("{:?}", aggpay_internal::text::truncate(value, 40))
}

impl Query {
    pub(crate) fn parse(raw: &str) -> Result<Self, Invalid> {
        let mut pairs = Vec::new();
        for part in raw.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').unwrap_or((part, ""));
            let key = percent_decode(k, true)?;
            let value = percent_decode(v, true)
                .map_err(|e| format!("{e} in the value of `{}`", shown(&key)))?;
            pairs.push((key, value));
        }
        Ok(Self { pairs })
    }

    /// The query as a server that names parameters otherwise reads it:
    /// for each `(ours, theirs)`, the pairs named `ours` are not read and
    /// the pairs named `theirs` are read as `ours`.
    pub(crate) fn renamed(mut self, names: &[(&str, &str)]) -> Self {
        self.pairs
            .retain(|(k, _)| !names.iter().any(|(ours, _)| k == ours));
        for (k, _) in &mut self.pairs {
            if let Some((ours, _)) = names.iter().find(|(_, theirs)| k == theirs) {
                *k = (*ours).to_owned();
            }
        }
        self
    }

    /// The query as a server that does not read `names` at all reads it.
    pub(crate) fn without(mut self, names: &[&str]) -> Self {
        self.pairs.retain(|(k, _)| !names.contains(&k.as_str()));
        self
    }

    /// The single value of `name`; a repeated scalar parameter is refused
    /// rather than silently picking one.
    pub(crate) fn one(&self, name: &str) -> Result<Option<&str>, Invalid> {
        let mut values = self
            .pairs
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str());
        let first = values.next();
        if values.next().is_some() {
            return Err(format!("`{name}` given more than once"));
        }
        Ok(first)
    }

    /// Every value of a repeated-key parameter.
    /// True when a decoded name or value is not ASCII.
    pub(crate) fn has_non_ascii(&self) -> bool {
        self.pairs
            .iter()
            .any(|(k, v)| !k.is_ascii() || !v.is_ascii())
    }

    /// True when a value is all digits and beyond 64 bits.
    pub(crate) fn has_huge_number(&self) -> bool {
        self.pairs.iter().any(|(_, v)| {
            !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) && v.parse::<u64>().is_err()
        })
    }

    pub(crate) fn all(&self, name: &str) -> Vec<&str> {
        self.pairs
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// A non-negative integer; digits beyond `u64` saturate (a page size or
    /// offset far beyond any list is still a valid request).
    pub(crate) fn count(&self, name: &str) -> Result<Option<u64>, Invalid> {
        let Some(raw) = self.one(name)? else {
            return Ok(None);
        };
        if raw.is_empty() || !raw.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!(
                "`{name}` must be a non-negative integer, got {}",
                shown(raw)
            ));
        }
        Ok(Some(raw.parse().unwrap_or(u64::MAX)))
    }

    /// A page size: absent or 0 gives `default`, above `max` is clamped.
    pub(crate) fn limit(&self, default: u64, max: u64) -> Result<u64, Invalid> {
        Ok(match self.count("limit")? {
            None | Some(0) => default,
            Some(n) => n.min(max),
        })
    }

    pub(crate) fn offset(&self) -> Result<u64, Invalid> {
        Ok(self.count("offset")?.unwrap_or(0))
    }

    /// A cursor: a previous `next_cursor`, an integer.
    pub(crate) fn cursor(&self) -> Result<u64, Invalid> {
        let Some(raw) = self.one("cursor")? else {
            return Ok(0);
        };
        if raw.is_empty() {
            return Ok(0);
        }
        raw.parse()
            .ok()
            .filter(|_| raw.bytes().all(|b| b.is_ascii_digit()))
            .ok_or_else(|| {
                format!(
                    "`cursor` must be a non-negative integer, got {}",
                    shown(raw)
                )
            })
    }

    /// `true` or `false`, exactly.
    pub(crate) fn boolean(&self, name: &str) -> Result<Option<bool>, Invalid> {
        match self.one(name)? {
            None => Ok(None),
            Some("true") => Ok(Some(true)),
            Some("false") => Ok(Some(false)),
            Some(other) => Err(format!(
                "`{name}` must be true or false, got {}",
                shown(other)
            )),
        }
    }

    /// True for ascending order: exactly `ASC`; anything else is DESC.
    pub(crate) fn ascending(&self) -> Result<bool, Invalid> {
        Ok(self.one("direction")? == Some("ASC"))
    }

    /// One of `allowed`, exactly.
    pub(crate) fn choice<'a>(
        &self,
        name: &str,
        allowed: &[&'a str],
    ) -> Result<Option<&'a str>, Invalid> {
        match self.one(name)? {
            None => Ok(None),
            Some(v) => allowed
                .iter()
                .copied()
                .find(|a| *a == v)
                .map(Some)
                .ok_or_else(|| {
                    format!(
                        "`{name}` must be one of {}, got {}",
                        allowed.join(", "),
                        shown(v)
                    )
                }),
        }
    }

    /// A comma-separated list; empty items are dropped.
    pub(crate) fn list(&self, name: &str) -> Result<Vec<String>, Invalid> {
        Ok(self
            .one(name)?
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default())
    }

    /// A UNIX timestamp in seconds.
    pub(crate) fn unix(&self, name: &str) -> Result<Option<i64>, Invalid> {
        match self.one(name)? {
            None => Ok(None),
            Some(v) => v
                .parse::<i64>()
                .ok()
                .filter(|_| !v.starts_with('+'))
                .map(Some)
                .ok_or_else(|| {
                    format!(
                        "`{name}` must be a UNIX timestamp in seconds, got {}",
                        shown(v)
                    )
                }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn decoding() {
        assert_eq!(percent_decode("a%20b+c", true).unwrap(), "a b c");
        assert_eq!(percent_decode("a+b", false).unwrap(), "a+b");
        for bad in ["%", "%2", "%zz", "%ff", "%+1"] {
            assert!(percent_decode(bad, true).is_err(), "{bad}");
        }
    }

    #[test]
    fn typed_values() {
        let q = Query::parse("limit=500&offset=&cursor=12&direction=asc&x=1&x=2&b=true").unwrap();
        assert_eq!(q.limit(30, 100).unwrap(), 100);
        assert!(q.offset().is_err());
        assert_eq!(q.cursor().unwrap(), 12);
        assert!(!q.ascending().unwrap());
        assert!(q.one("x").is_err());
        assert_eq!(q.all("x"), ["1", "2"]);
        assert_eq!(q.boolean("b").unwrap(), Some(true));
        let q = Query::parse("limit=-1&cursor=-5&b=TRUE").unwrap();
        assert!(q.limit(30, 100).is_err());
        assert!(q.cursor().is_err());
        assert!(q.boolean("b").is_err());
        let q = Query::parse("limit=99999999999999999999999").unwrap();
        assert_eq!(q.limit(30, 100).unwrap(), 100);
        assert_eq!(Query::parse("limit=0").unwrap().limit(30, 100).unwrap(), 30);
    }

    proptest! {
        #[test]
        fn never_panics(raw in ".{0,200}") {
            if let Ok(q) = Query::parse(&raw) {
                let _ = q.limit(30, 100);
                let _ = q.cursor();
                let _ = q.ascending();
                let _ = q.unix("start_date");
                let _ = q.list("names");
            }
        }
    }
}

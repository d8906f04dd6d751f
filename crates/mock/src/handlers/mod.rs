//! The 17 operations, grouped by resource family; the query helpers they
//! share (page sizes and directions, with the faults that bend them).

mod aggregator;
mod keys;
mod lookups;
mod merchants;
mod payments;
mod qrs;
mod settlements;
mod webhooks;

use crate::fault::Fault;
use crate::legal::Legal;
use crate::query::{Invalid, Query};
use crate::router::App;

/// Page size rules of the cursor lists (API.md Limits).
const CURSOR_DEFAULT: u64 = 30;
const CURSOR_MAX: u64 = 100;
/// Page size rules of the offset lists (WIRE.md).
const OFFSET_DEFAULT: u64 = 10;
const OFFSET_MAX: u64 = 100;
/// The largest page size API.md shows (cursor lists, access keys).
const LIMIT_MAX: u64 = 100;

impl App {
    fn cursor_limit(&self, q: &Query) -> Result<u64, Invalid> {
        let f = &self.faults;
        let default = if f.has(Fault::DefaultLimit10) {
            10
        } else {
            CURSOR_DEFAULT
        };
        let max = if f.has(Fault::NoLimitCap) {
            1_000
        } else {
            CURSOR_MAX
        };
        self.limit(q, default, max)
    }

    /// The page size of an offset list; `keys`: the access-key list,
    /// whose maximum API.md shows (100).
    fn offset_limit(&self, q: &Query, keys: bool) -> Result<u64, Invalid> {
        let (default, max) = self.offset_sizes(keys);
        if self.faults.has(Fault::OffsetLimitIgnored) {
            self.limit(q, default, max)?;
            return Ok(1_000);
        }
        if self.legal.has(Legal::LimitZeroEmpty) && q.count("limit").ok().flatten() == Some(0) {
            return Ok(0);
        }
        self.limit(q, default, max)
    }

    /// The default and largest page size of an offset list.
    fn offset_sizes(&self, keys: bool) -> (u64, u64) {
        let default = if self.legal.has(Legal::OffsetDefault20) {
            20
        } else {
            OFFSET_DEFAULT
        };
        let max = if !keys && self.legal.has(Legal::OffsetMax7) {
            7
        } else {
            OFFSET_MAX
        };
        (default, max)
    }

    /// The offset and page size of a list whose paging parameters API.md
    /// gives by purpose only (refunds, webhooks): `offset` and `limit`,
    /// or with `page-names`, `page` (from 1) and `page_size`, while
    /// `offset` and `limit` are not read at all.
    fn purpose_paging(&self, q: &Query) -> Result<(u64, u64), Invalid> {
        let (default, max) = self.offset_sizes(false);
        if self.faults.has(Fault::PagingUnread) {
            return Ok((0, default));
        }
        if !self.legal.has(Legal::PageNames) {
            return Ok((self.offset(q)?, self.offset_limit(q, false)?));
        }
        let size = match q.count("page_size")? {
            None | Some(0) => default,
            Some(n) => n.min(max),
        };
        let page = q.count("page")?.unwrap_or(1).max(1);
        Ok(((page - 1).saturating_mul(size), size))
    }

    fn limit(&self, q: &Query, default: u64, max: u64) -> Result<u64, Invalid> {
        let negative = q.one("limit")?.is_some_and(|l| l.starts_with('-'));
        if negative && self.faults.has(Fault::NegativeLimitAccepted) {
            return Ok(default);
        }
        if let Some(limit) = q.count("limit").ok().flatten() {
            self.not_huge("limit", limit)?;
        }
        if self.legal.has(Legal::LimitAboveMax400)
            && q.count("limit")?.is_some_and(|l| l > LIMIT_MAX)
        {
            return Err(format!("`limit` must be at most {LIMIT_MAX}"));
        }
        self.lenient(q.limit(default, max), default)
    }

    /// With `lenient-numbers`, a page size, offset or cursor that is not a
    /// non-negative integer is taken as absent (its `default`).
    fn lenient(&self, value: Result<u64, Invalid>, default: u64) -> Result<u64, Invalid> {
        match value {
            Err(_) if self.legal.has(Legal::LenientNumbers) => Ok(default),
            other => other,
        }
    }

    /// The cursor of a cursor list (0 for the first page).
    fn cursor(&self, q: &Query) -> Result<u64, Invalid> {
        self.lenient(q.cursor(), 0)
    }

    /// With `huge-numbers-400`, an offset or page size of 2^31 or more is
    /// refused (a cursor is an id the server gave, however large).
    fn not_huge(&self, name: &str, value: u64) -> Result<(), Invalid> {
        if self.legal.has(Legal::HugeNumbers400) && value >= 1 << 31 {
            return Err(format!("`{name}` must be below 2^31"));
        }
        Ok(())
    }

    /// The rows of an offset list in the server's order: the mock's, or
    /// the reverse with `offset-order-reversed`.
    fn in_order<'a, T: 'a>(
        &self,
        rows: impl DoubleEndedIterator<Item = T> + 'a,
    ) -> Box<dyn Iterator<Item = T> + 'a> {
        if self.legal.has(Legal::ReversedOffsetOrder) {
            Box::new(rows.rev())
        } else {
            Box::new(rows)
        }
    }

    /// A token as the handlers compare it: as sent, or lowercased with
    /// the `tokens-case-insensitive` fault.
    fn token_case(&self, token: &str) -> String {
        if self.faults.has(Fault::TokensCaseInsensitive) {
            token.to_ascii_lowercase()
        } else {
            token.to_owned()
        }
    }

    /// The name fragments of a filter, as `matches` compares them: folded
    /// to lowercase unless `fragments-case-exact`.
    fn fragments(&self, items: Vec<String>) -> Vec<String> {
        if self.legal.has(Legal::FragmentsCaseExact) {
            items
        } else {
            items.into_iter().map(|s| s.to_lowercase()).collect()
        }
    }

    /// True when no fragments are given or `name` contains one (without
    /// case, unless `fragments-case-exact`).
    fn matches_any(&self, name: &str, fragments: &[String]) -> bool {
        let name = self.fold(name);
        fragments.is_empty() || fragments.iter().any(|f| self.contains(&name, f))
    }

    /// Whether `name` holds `fragment`: as text, or with the
    /// `filter-like-wildcards` fault as the SQL pattern `%fragment%`.
    fn contains(&self, name: &str, fragment: &str) -> bool {
        if self.faults.has(Fault::FilterLikeWildcards) {
            let name: Vec<char> = name.chars().collect();
            let pattern: Vec<char> = format!("%{fragment}%").chars().collect();
            like(&name, &pattern)
        } else {
            name.contains(fragment)
        }
    }

    /// With `wildcards-refused`, a name filter or lookup value holding a
    /// character a pattern language reads as a wildcard is refused.
    fn plain_value(&self, name: &str, value: &str) -> Result<(), Invalid> {
        if self.legal.has(Legal::WildcardsRefused) && value.contains(['%', '_', '*', '?']) {
            return Err(format!("`{name}` must not hold %, _, * or ?"));
        }
        Ok(())
    }

    /// `name` as fragments are compared with it.
    fn fold(&self, name: &str) -> String {
        if self.legal.has(Legal::FragmentsCaseExact) {
            name.to_owned()
        } else {
            name.to_lowercase()
        }
    }

    fn offset(&self, q: &Query) -> Result<u64, Invalid> {
        let offset = self.lenient(q.offset(), 0)?;
        self.not_huge("offset", offset)?;
        Ok(if self.faults.has(Fault::OffsetIgnored) {
            0
        } else if self.faults.has(Fault::OffsetTruncated32) {
            offset & u64::from(u32::MAX)
        } else if offset > 0 && self.faults.has(Fault::OffsetOffByOne) {
            offset.saturating_add(1)
        } else {
            offset
        })
    }

    /// One page of an offset list.
    fn page<T>(&self, rows: impl Iterator<Item = T>, offset: u64, limit: u64) -> Vec<T> {
        self.counted_page(rows, offset, limit).0
    }

    /// One page and the number of rows that matched, in a single pass.
    fn counted_page<T>(
        &self,
        rows: impl Iterator<Item = T>,
        offset: u64,
        limit: u64,
    ) -> (Vec<T>, u64) {
        let wraps = self.faults.has(Fault::OffsetPastEndWraps);
        let mut out = Vec::new();
        let mut first = Vec::new();
        let mut count = 0u64;
        for row in rows {
            if count >= offset && (out.len() as u64) < limit {
                out.push(row);
            } else if wraps && (first.len() as u64) < limit {
                first.push(row);
            }
            count += 1;
        }
        if wraps && out.is_empty() && offset > 0 {
            return (first, count);
        }
        if self.legal.has(Legal::CountPage) {
            let page = out.len() as u64;
            return (out, page);
        }
        (out, count)
    }

    fn ascending(&self, q: &Query) -> Result<bool, Invalid> {
        if self.faults.has(Fault::LowercaseAsc) {
            return Ok(q
                .one("direction")?
                .is_some_and(|d| d.eq_ignore_ascii_case("ASC")));
        }
        q.ascending()
    }
}

/// SQL `LIKE`: `%` matches any run of characters, `_` any one.
fn like(text: &[char], pattern: &[char]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some(('%', rest)) => (0..=text.len()).any(|i| like(&text[i..], rest)),
        Some((p, rest)) => text
            .split_first()
            .is_some_and(|(t, more)| (*p == '_' || p == t) && like(more, rest)),
    }
}

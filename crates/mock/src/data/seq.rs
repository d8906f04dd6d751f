//! Cursor pagination over virtual, id-ordered sequences.
//!
//! A sequence knows its length and the numeric id at any position, and ids
//! grow strictly with the position. A page at any cursor is then a binary
//! search plus `limit` lookups: O(log n), never a scan.

/// An id-ordered virtual list.
pub(crate) trait Seq {
    fn len(&self) -> u64;
    /// The numeric id at position `k` (`k < len`), strictly increasing in `k`.
    fn id_at(&self, k: u64) -> u64;
}

/// The first position whose id is greater than or equal to `id`.
fn lower_bound(seq: &impl Seq, id: u64) -> u64 {
    let (mut lo, mut hi) = (0, seq.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if seq.id_at(mid) < id {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Positions of one page. Ascending: ids above `cursor`. Descending: ids
/// below `cursor`, or from the top when `cursor` is 0.
pub(crate) fn cursor_page(seq: &impl Seq, cursor: u64, limit: u64, ascending: bool) -> Vec<u64> {
    let len = seq.len();
    if ascending {
        let start = if cursor == 0 {
            0
        } else {
            lower_bound(seq, cursor.saturating_add(1))
        };
        (start..len.min(start.saturating_add(limit))).collect()
    } else {
        let end = if cursor == 0 {
            len
        } else {
            lower_bound(seq, cursor)
        };
        (end.saturating_sub(limit)..end).rev().collect()
    }
}

/// Positions of an ascending page whose cursor is compared the
/// descending way (the `cursor-asc-as-desc` fault): the ids below
/// `cursor`, from the first.
pub(crate) fn below_from_first(seq: &impl Seq, cursor: u64, limit: u64) -> Vec<u64> {
    (0..lower_bound(seq, cursor).min(limit)).collect()
}

/// The settlement batches a filter selects, as positions into the batch list.
///
/// Statuses are dealt in blocks of four, each block a permutation of the
/// four statuses, so the k-th batch of a status is found in O(1) in the
/// fixed dataset; live data, whose statuses move, lists the matches.
#[derive(Debug, Clone)]
pub(crate) enum BatchSeq<'a> {
    All(super::View<'a>),
    Status(&'a super::Dataset, u8),
    Listed(super::View<'a>, Vec<u64>),
    One(super::View<'a>, Option<u64>),
}

impl<'a> BatchSeq<'a> {
    /// The batches with status `status` (filter integer).
    pub(crate) fn with_status(view: super::View<'a>, status: u8) -> Self {
        if view.is_live() {
            let matching = (0..view.batch_count())
                .filter(|i| view.batch_status(*i) == status)
                .collect();
            BatchSeq::Listed(view, matching)
        } else {
            BatchSeq::Status(view.data, status)
        }
    }

    pub(crate) fn index_at(&self, k: u64) -> u64 {
        match self {
            BatchSeq::All(_) => k,
            BatchSeq::Status(data, status) => 4 * k + data.status_position(k, *status),
            BatchSeq::Listed(_, indices) => indices.get(k as usize).copied().unwrap_or(0),
            BatchSeq::One(_, index) => index.unwrap_or(0),
        }
    }

    fn data(&self) -> &super::Dataset {
        match self {
            BatchSeq::Status(d, _) => d,
            BatchSeq::All(v) | BatchSeq::Listed(v, _) | BatchSeq::One(v, _) => v.data,
        }
    }
}

impl Seq for BatchSeq<'_> {
    fn len(&self) -> u64 {
        match self {
            BatchSeq::All(view) => view.batch_count(),
            BatchSeq::Status(data, status) => {
                let n = data.sizes.batches;
                let partial = n % 4;
                let full = n / 4;
                full + u64::from(data.status_position(full, *status) < partial)
            }
            BatchSeq::Listed(_, indices) => indices.len() as u64,
            BatchSeq::One(_, index) => u64::from(index.is_some()),
        }
    }

    fn id_at(&self, k: u64) -> u64 {
        self.data().batch_numeric_id(self.index_at(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Evens(u64);

    impl Seq for Evens {
        fn len(&self) -> u64 {
            self.0
        }
        fn id_at(&self, k: u64) -> u64 {
            2 * k + 2
        }
    }

    #[test]
    fn pages_walk_both_ways() {
        let seq = Evens(7); // ids 2,4,..,14
        assert_eq!(cursor_page(&seq, 0, 3, true), vec![0, 1, 2]);
        assert_eq!(cursor_page(&seq, 6, 3, true), vec![3, 4, 5]);
        assert_eq!(cursor_page(&seq, 5, 3, true), vec![2, 3, 4]);
        assert_eq!(cursor_page(&seq, 14, 3, true), Vec::<u64>::new());
        assert_eq!(cursor_page(&seq, 0, 3, false), vec![6, 5, 4]);
        assert_eq!(cursor_page(&seq, 10, 3, false), vec![3, 2, 1]);
        assert_eq!(cursor_page(&seq, 4, 3, false), vec![0]);
        assert_eq!(cursor_page(&seq, 2, 3, false), Vec::<u64>::new());
        assert_eq!(cursor_page(&seq, u64::MAX, 2, false), vec![6, 5]);
        assert_eq!(cursor_page(&seq, u64::MAX, 2, true), Vec::<u64>::new());
    }
}

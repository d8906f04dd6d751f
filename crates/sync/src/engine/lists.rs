//! What a reconciliation joins to the rows: the aggregator merchants and
//! rail merchants (small lists: read whole each run), and the refunds
//! (incrementally by creation time, re-reading the recent ones whose
//! status may still change). Each list is counted against the count the
//! server gives; one that fails is set aside, the run goes on.

use aggpay::{AggregatorMerchant, Direction, MerchantQuery, Pages, RailMerchantQuery, RefundQuery};

use super::Engine;
use crate::error::SyncError;
use crate::store::tables::{MERCHANTS, RAIL_MERCHANTS, REFUNDS, Table};

/// The cursor keeping the newest refund's creation time (UNIX seconds).
const NEWEST_REFUND: &str = "newest_refund_created";

/// A list's rows, checked before they are kept.
trait Checked: aggpay::ListRecord + Sized {
    /// Why the row is not ours, if it is not.
    fn foreign(&self, _aggregator: &aggpay::AggregatorId) -> Option<String> {
        None
    }
}

impl Checked for AggregatorMerchant {
    fn foreign(&self, aggregator: &aggpay::AggregatorId) -> Option<String> {
        (self.aggregator_id != *aggregator).then(|| {
            format!(
                "merchant {} names aggregator {}, not {aggregator}: not stored",
                self.token,
                aggpay_internal::text::excerpt(self.aggregator_id.as_str(), 60)
            )
        })
    }
}

impl Checked for aggpay::RailMerchant {}
impl Checked for aggpay::Refund {}

impl Engine<'_> {
    /// The merchants, rail merchants and refunds.
    pub(super) fn lists(&mut self) -> Result<(), SyncError> {
        self.progress.stage("merchants");
        let merchants = self.client.merchants(&MerchantQuery::new().limit(100));
        self.list("merchants", &MERCHANTS, merchants)?;
        let rail = self
            .client
            .rail_merchants(&RailMerchantQuery::new().limit(100));
        self.list("rail_merchants", &RAIL_MERCHANTS, rail)?;
        self.refunds()
    }

    /// Refunds created since the newest one mirrored, less the window of
    /// those whose status may still change; the newest one remembered for
    /// the next run once the list was read whole and counted.
    fn refunds(&mut self) -> Result<(), SyncError> {
        self.progress.stage("refunds");
        let mut query = RefundQuery::new().direction(Direction::Asc).limit(100);
        if let Some(newest) = self.store.cursor(NEWEST_REFUND)? {
            let since = jiff::Timestamp::from_second(newest)
                .ok()
                .and_then(|t| t.checked_sub(self.plan.refund_window).ok());
            if let Some(since) = since {
                query = query.created_from(since);
            }
        }
        let walk = self.client.refunds(&query);
        let Some(newest) = self.list("refunds", &REFUNDS, walk)? else {
            return Ok(());
        };
        if let Some(at) = newest {
            let before = self.store.cursor(NEWEST_REFUND)?;
            self.store
                .set_cursor(NEWEST_REFUND, before.map_or(at, |b| b.max(at)))?;
        }
        Ok(())
    }

    /// Reads a whole list page by page, keeps its rows (a row of another
    /// aggregator is an integrity error, never kept), and counts them
    /// against the server's count. `None` when it was set aside; else the
    /// newest `created_at` read (refunds), in UNIX seconds.
    fn list<T: Checked + CreatedAt>(
        &mut self,
        name: &'static str,
        table: &'static Table<T>,
        mut walk: Pages<T>,
    ) -> Result<Option<Option<i64>>, SyncError> {
        let mut read = 0u64;
        let mut newest: Option<i64> = None;
        while let Some(page) = walk.next_page() {
            let page = match page {
                Ok(page) => page.items,
                Err(e) => {
                    // What was read is kept; the list is read again next run.
                    self.store.commit(&[])?;
                    let setback = self.server(e)?;
                    self.set_aside(name, name, &setback);
                    return Ok(None);
                }
            };
            self.summary.pages += 1;
            if let Some(why) = page.iter().find_map(|r| r.foreign(&self.aggregator)) {
                let setback = self.integrity(name, name, why)?;
                self.set_aside(name, name, &setback);
                return Ok(None);
            }
            read += page.len() as u64;
            newest = page.iter().map(CreatedAt::created).chain(newest).max();
            let rows: Vec<_> = page.iter().map(|r| table.row(None, r)).collect();
            self.store.write(table, &rows)?;
            self.store.commit(&[])?;
        }
        let count = walk.reported_count();
        if count.is_some_and(|c| c != read) {
            let message = format!(
                "{name}: {read} read, the server counts {}; they will be read again",
                count.map_or_else(|| "none".to_owned(), |c| c.to_string())
            );
            let setback = self.integrity(name, name, message)?;
            self.set_aside(name, name, &setback);
            return Ok(None);
        }
        Ok(Some(newest))
    }
}

/// When a listed row was created, in UNIX seconds (for the refunds'
/// incremental reads).
trait CreatedAt {
    fn created(&self) -> i64;
}

impl CreatedAt for aggpay::Refund {
    fn created(&self) -> i64 {
        self.created_at.as_second()
    }
}

impl CreatedAt for AggregatorMerchant {
    fn created(&self) -> i64 {
        self.created_at.as_second()
    }
}

impl CreatedAt for aggpay::RailMerchant {
    fn created(&self) -> i64 {
        self.created_at.as_second()
    }
}

//! One page of a list: the one generic page type of the crate.

/// One page of a list operation: its records, the counts the server gave,
/// and, for cursor lists, where the next page starts.
///
/// ```
/// # fn demo(client: &aggpay::Client) -> Result<(), aggpay::Error> {
/// use aggpay::BatchQuery;
///
/// let page = client.list_settlement_batches(&BatchQuery::new().limit(100))?;
/// println!("{} of {} batches", page.items.len(), page.count);
/// for batch in page {
///     println!("{}", batch.token);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Page<T> {
    /// The page's records, in the server's order.
    pub items: Vec<T>,
    /// Records that match the query: the `count` of an offset list, the
    /// `count.filtered_count` of a cursor list.
    pub count: u64,
    /// Cursor lists only: `count.total_count`, the records in the same
    /// scope before filters.
    pub total_count: Option<u64>,
    /// Cursor lists only: the `next_cursor` the server handed out (`None`
    /// when it sent an empty one). Pass it to the query's `cursor` for the
    /// next page; the iterators ([`Pages`](crate::Pages)) do this for you
    /// and know when the list ends.
    pub next_cursor: Option<String>,
}

impl<T> Page<T> {
    pub(crate) fn new(
        items: Vec<T>,
        count: u64,
        total_count: Option<u64>,
        next_cursor: Option<String>,
    ) -> Self {
        Self {
            items,
            count,
            total_count,
            next_cursor,
        }
    }
}

impl<T> IntoIterator for Page<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

impl<'a, T> IntoIterator for &'a Page<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

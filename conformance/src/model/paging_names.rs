//! Which paging parameters a list reads under WIRE.md's names, where
//! API.md gives them by purpose only (Conventions 6: "a parameter given
//! only by its purpose has a wire name that is not shown"). A server may
//! name them otherwise: a name it reads is held to what API.md says it
//! does; one it shows it does not read is left to the observation
//! `wire.paging-names`, and the rules that need it do not apply to that
//! list.

use super::list::{ListModel, NamedOtherwise, PAGE, PageRead, Source, page_of, repeats_first};
use crate::contract::{Named, Role, names};
use crate::http::{Exchange, Http};

/// Whether API.md shows the name of `source`'s parameter of this role
/// (then the server reads it by that name).
fn shown(source: &Source, role: fn(&Role) -> bool) -> bool {
    source.op.role(role).is_some_and(|p| p.named == Named::Api)
}

/// Asks whether the server reads `limit` and `offset` on a list whose
/// page at offset `step` repeated its first page: the list at offset 1,
/// at page size 1, and with a value of each that is not a number. A
/// name is read when its value changes the answer or a bad value of it
/// is refused; `None` when `offset` is read (the offset rules judge what
/// it does), or when API.md shows the name `offset` for this list.
pub(super) fn offset(
    http: &Http,
    model: &ListModel,
    repeated: &Exchange,
) -> Option<NamedOtherwise> {
    let shown = |role: fn(&Role) -> bool| shown(&model.source, role);
    if shown(|r| *r == Role::Offset) {
        return None;
    }
    let base = model.source.request();
    let probes = [
        base.clone().q(names::LIMIT, PAGE).q(names::OFFSET, 1),
        base.clone().q(names::LIMIT, 1).q(names::OFFSET, 0),
        base.clone().q(names::LIMIT, PAGE).q(names::OFFSET, "x"),
        base.clone().q(names::LIMIT, "x").q(names::OFFSET, 0),
    ];
    let answers = http.pool().map(&probes, |r| http.send(r.clone()));
    let [at_one, one, bad_offset, bad_limit] = &answers[..] else {
        unreachable!("four probes, four answers")
    };
    let rows = |e: &Exchange| page_of(e, &model.source).ok().map(|p| p.rows);
    let refused = |e: &Exchange| e.refused();
    let first = &model.head;
    let offset_read = refused(bad_offset)
        || rows(at_one).is_some_and(|r| first.len() > 1 && !repeats_first(&r, first));
    if offset_read {
        return None;
    }
    let limit_read = shown(|r| matches!(r, Role::Limit { .. }))
        || refused(bad_limit)
        || rows(one).is_some_and(|r| first.len() > 1 && r.len() != first.len());
    let mut names = vec![names::OFFSET];
    if !limit_read {
        names.push(names::LIMIT);
    }
    Some(NamedOtherwise {
        seen: format!(
            "the page at offset {} repeats the first, offset 1 answers it too, offset=x is not refused{}",
            first.len(),
            if limit_read {
                String::new()
            } else {
                format!(
                    ", limit 1 answers {} rows and limit=x is not refused",
                    rows(one).map_or(0, |r| r.len())
                )
            }
        ),
        names,
        evidence: Box::new(repeated.clone()),
    })
}

/// The paging names of a cursor list the server shows it does not read,
/// learned from the pages the model reads: the first page asked `ASC`
/// with 100 rows, a page asked for one row beside it, and the page after
/// a `next_cursor`.
#[derive(Debug, Default)]
pub(super) struct Cursor {
    /// The names not read, each with what showed it.
    unread: Vec<(&'static str, String)>,
}

impl Cursor {
    /// What the first pages show: the first, asked `ASC`, that came in
    /// descending ids does not read the direction; the one asked for one
    /// row that holds more does not read the page size.
    pub(super) fn of_first_pages(source: &Source, page: &PageRead, one: Option<&PageRead>) -> Self {
        let mut unread = Vec::new();
        let ids: Vec<u64> = page.rows.iter().filter_map(super::id_of).collect();
        if !shown(source, |r| *r == Role::Direction)
            && ids.len() >= 2
            && ids.windows(2).all(|w| w[0] > w[1])
        {
            unread.push((
                names::DIRECTION,
                format!(
                    "asked {}=ASC, the first page came in descending ids ({} first)",
                    names::DIRECTION,
                    ids[0]
                ),
            ));
        }
        if let Some(one) = one
            && !shown(source, |r| matches!(r, Role::Limit { .. }))
            && one.rows.len() > 1
        {
            unread.push((
                names::LIMIT,
                format!(
                    "asked {}=1, the page holds {} rows",
                    names::LIMIT,
                    one.rows.len()
                ),
            ));
        }
        Self { unread }
    }

    /// Whether the list reads `name`.
    pub(super) fn reads(&self, name: &str) -> bool {
        self.unread.iter().all(|(n, _)| *n != name)
    }

    /// Rows a full page holds when `asked` are asked: the default page
    /// size when the size is not read.
    pub(super) fn page_size(&self, source: &Source, asked: u64) -> u64 {
        match source.default_page_size() {
            Some(d) if !self.reads(names::LIMIT) => d,
            _ => asked,
        }
    }

    /// Whether the page asked after `next` repeats the page `first` that
    /// gave it (the cursor is not read), noting it if so.
    pub(super) fn cursor_repeated(
        &mut self,
        source: &Source,
        page: &PageRead,
        first: &[serde_json::Value],
        next: &str,
    ) -> bool {
        let repeated = !shown(source, |r| *r == Role::Cursor) && repeats_first(&page.rows, first);
        if repeated {
            self.unread.push((
                names::CURSOR,
                format!(
                    "the page asked with {}={next} (the next_cursor of the page before) repeats that page",
                    names::CURSOR
                ),
            ));
        }
        repeated
    }

    /// The names not read, for [`ListModel::named_otherwise`]; `None`
    /// when every name is read.
    pub(super) fn into_named_otherwise(self, evidence: Option<Exchange>) -> Option<NamedOtherwise> {
        let evidence = evidence?;
        if self.unread.is_empty() {
            return None;
        }
        Some(NamedOtherwise {
            names: self.unread.iter().map(|(n, _)| *n).collect(),
            seen: self
                .unread
                .iter()
                .map(|(_, why)| why.as_str())
                .collect::<Vec<_>>()
                .join("; "),
            evidence: Box::new(evidence),
        })
    }
}

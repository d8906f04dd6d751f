//! Which paging parameters a list reads under WIRE.md's names, where
//! API.md gives them by purpose only (Conventions 6: "a parameter given
//! only by its purpose has a wire name that is not shown"). A server may
//! name them otherwise: a name it reads is held to what API.md says it
//! does; one it shows it does not read is left to the observation
//! `wire.paging-names`, and the rules that need it do not apply to that
//! list.

use super::list::{ListModel, NamedOtherwise, PAGE, PageRead, Source, page_of, repeats_first};
use crate::contract::{Role, ServerNames, names};
use crate::http::{Exchange, Http};

/// Whether the server is held to `source`'s parameter of this role
/// whatever its answers show: API.md shows its name, or the run was given
/// the server's name for it, or WIRE.md's names are required
/// ([`ServerNames::held`]).
fn shown(names: &ServerNames, source: &Source, role: fn(&Role) -> bool) -> bool {
    source
        .op
        .role(role)
        .is_some_and(|p| names.held(source.op.id, p.wire))
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
    let shown = |role: fn(&Role) -> bool| shown(http.names(), &model.source, role);
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
    // One answer per probe, in order.
    let (at_one, one, bad_offset, bad_limit) = (&answers[0], &answers[1], &answers[2], &answers[3]);
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
    /// Whether the server is held to the cursor whatever its answers
    /// show ([`shown`]).
    cursor_held: bool,
    /// Whether a descending walk's second page moved past its first,
    /// once asked.
    descending_walk_moves: Option<bool>,
}

/// Whether the list's descending walk moves on: its page of two rows
/// asked `DESC`, then the page after its `next_cursor`, which must not
/// start with the same row. A server that reads the cursor shows it here
/// even where its ascending walk repeats a page.
fn descending_walk_moves(http: &Http, source: &Source) -> bool {
    let first_two = source
        .request()
        .q(names::DIRECTION, "DESC")
        .q(names::LIMIT, 2);
    let Ok(first) = page_of(&http.send(first_two.clone()), source) else {
        return false;
    };
    let Some(next) = first
        .next
        .as_deref()
        .filter(|n| !n.is_empty() && *n != "0" && first.rows.len() == 2)
    else {
        return false;
    };
    page_of(&http.send(first_two.q(names::CURSOR, next)), source)
        .is_ok_and(|after| !after.rows.is_empty() && !repeats_first(&after.rows, &first.rows))
}

impl Cursor {
    /// What the first pages show: the first, asked `ASC`, that came in
    /// descending ids does not read the direction; the one asked for one
    /// row that holds more does not read the page size.
    pub(super) fn of_first_pages(
        names: &ServerNames,
        source: &Source,
        page: &PageRead,
        one: Option<&PageRead>,
    ) -> Self {
        let shown = |role: fn(&Role) -> bool| shown(names, source, role);
        let mut unread = Vec::new();
        let ids: Vec<u64> = page.rows.iter().filter_map(super::id_of).collect();
        if !shown(|r| *r == Role::Direction)
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
            && !shown(|r| matches!(r, Role::Limit { .. }))
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
        Self {
            unread,
            cursor_held: shown(|r| *r == Role::Cursor),
            descending_walk_moves: None,
        }
    }

    /// Asks each name the first pages showed unread with a value that is
    /// none of its values (`x`): a server that refuses it reads the name,
    /// and is held to what API.md says it does.
    pub(super) fn unless_refused(mut self, http: &Http, source: &Source) -> Self {
        let asked: Vec<&'static str> = self.unread.iter().map(|(n, _)| *n).collect();
        let refused = http.pool().map(&asked, |name| {
            http.send(source.request().q(name, "x")).refused()
        });
        let read: Vec<&str> = asked
            .iter()
            .zip(refused)
            .filter(|(_, refused)| *refused)
            .map(|(n, _)| *n)
            .collect();
        self.unread.retain(|(n, _)| !read.contains(n));
        self
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
    /// gave it and no answer shows the cursor read, noting it if so. A
    /// descending walk whose second page moves on shows the cursor read:
    /// then an ascending page that repeats is the server's fault, for the
    /// rules to judge, not a name it reads otherwise.
    pub(super) fn cursor_repeated(
        &mut self,
        http: &Http,
        source: &Source,
        page: &PageRead,
        first: &[serde_json::Value],
        next: &str,
    ) -> bool {
        if self.cursor_held || !repeats_first(&page.rows, first) {
            return false;
        }
        if *self
            .descending_walk_moves
            .get_or_insert_with(|| descending_walk_moves(http, source))
        {
            return false;
        }
        self.unread.push((
            names::CURSOR,
            format!(
                "the page asked with {}={next} (the next_cursor of the page before) repeats that page, and so does a descending walk's second page",
                names::CURSOR
            ),
        ));
        true
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

//! The contract as data: API.md's operations, their parameters (with the
//! wire names WIRE.md fixes) and what each parameter means, the resources
//! and their fields, the error conditions, and the facts that tie one
//! operation's answer to another's.
//!
//! Rules do not hand-write their probes: they enumerate their cases from
//! this table, so a rule applies at every operation, parameter and field
//! where the table says it can be seen, and the expected answers are
//! derived from it (`model::expect`). COVERAGE.md is generated from it.

mod errors;
mod ops;
pub mod resources;
mod rooms;
mod server_names;
pub mod subject;
mod text;
mod walk;

pub use errors::{ERRORS, Form, Message, REFERENCES, error_case};

/// The query parameters rules and the model send by name (paging, the
/// lookups' inputs, the filters a sample needs): the table of operations
/// writes its parameters with these, so a rule's request and the table
/// cannot name a parameter two ways, and a misspelt name does not compile.
pub mod names {
    /// The page size of every list.
    pub const LIMIT: &str = "limit";
    /// Where an offset list's page starts.
    pub const OFFSET: &str = "offset";
    /// Where a cursor list's page starts.
    pub const CURSOR: &str = "cursor";
    /// The order of a list.
    pub const DIRECTION: &str = "direction";
    /// The account-info lookup by IBAN.
    pub const IBAN: &str = "iban";
    /// Which kind of alias a lookup is given.
    pub const ALIAS_TYPE: &str = "alias_type";
    /// The alias a lookup is given.
    pub const ALIAS_VALUE: &str = "alias_value";
    /// Whether a lookup fetches the title too.
    pub const WITH_TITLE_FETCH: &str = "with_title_fetch";
    /// The batch-list filter by batch token.
    pub const BATCH_ID: &str = "batch_id";
    /// The transactions filter that keeps settlement rows only.
    pub const ONLY_SETTLEMENT_TXNS: &str = "only_settlement_txns";
    /// The QR-list filter by type.
    pub const TYPE: &str = "type";
    /// The filter by status of the lists that have one.
    pub const STATUS: &str = "status";
}
pub use ops::{BATCH_STATUSES, OPS};
pub use resources::{CountForm, Field, FieldKind};
pub use rooms::ROOMS;
pub use server_names::{Renamed, ServerNames};
pub use subject::{At, Place, Said, Subject};
pub use text::SILENT;
pub use walk::Walk;

/// The 17 operations of API.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpId {
    /// GET the aggregator record.
    Aggregator,
    /// GET the access-key list.
    Keys,
    /// PUT a key rotation.
    Rotate,
    /// GET the aggregator-merchant list.
    Merchants,
    /// GET the rail-merchant list.
    RailMerchants,
    /// GET one rail merchant.
    RailMerchant,
    /// GET the QR list.
    Qrs,
    /// GET a payment's charges.
    Charges,
    /// GET the refund list.
    Refunds,
    /// GET the settlement-batch list.
    Batches,
    /// GET a batch's transactions (or payouts).
    Transactions,
    /// POST a report export.
    ReportExport,
    /// GET account-info.
    AccountInfo,
    /// GET title-fetch by alias.
    TitleFetch,
    /// GET one alias.
    Alias,
    /// GET the ledger account.
    Ledger,
    /// GET the webhook list.
    Webhooks,
}

/// What an operation does to the server's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Nothing: safe to repeat.
    Read,
    /// Rotates a key: never repeated blindly (a second rotation would
    /// replace the secret of the first); a lost answer is recovered from
    /// the key list, where secrets are returned in clear.
    Rotation,
    /// Creates a new export job: repeating it makes one more job, harmless,
    /// so a lost answer is sent again (up to twice).
    NewJob,
}

/// The success status API.md states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Success {
    /// 200 exactly (Conventions 7: the payment-charges operation).
    Exactly200,
    /// Not shown: any 2xx.
    Any2xx,
}

/// An identifier in the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathId {
    /// Its placeholder in API.md (`settlement-batch-id`).
    pub name: &'static str,
    /// Its type prefix.
    pub prefix: &'static str,
    /// Its exact length, where API.md fixes one (the 39-character batch
    /// token).
    pub exact_len: Option<usize>,
    /// The field of the answer that names the record read (`token`,
    /// `payment_id`); `None` when the answer is a list of the record's
    /// children.
    pub answers_for: Option<&'static str>,
}

/// How a list pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paging {
    /// `cursor` and `next_cursor`, on the numeric id, with a direction.
    Cursor,
    /// `limit` and `offset`, in the server's own order.
    Offset,
}

/// A list operation's rows, count and paging.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListShape {
    /// The key of the rows under `data`.
    pub rows: &'static str,
    /// The fields of a row.
    pub fields: &'static [Field],
    /// How it pages.
    pub paging: Paging,
    /// Another kind of row the list gives when its row-kind switch is on
    /// (payouts in `settlement_transactions`).
    pub other_rows: Option<&'static str>,
}

/// Where a parameter's wire name comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named {
    /// API.md shows it.
    Api,
    /// API.md gives only its purpose; WIRE.md fixes the name.
    Wire,
}

/// The values a parameter takes (its domain), for generating hostile and
/// legal ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Domain {
    /// A non-negative integer.
    Int,
    /// `true` or `false`.
    Bool,
    /// One of these words.
    Choice(&'static [&'static str]),
    /// Any text.
    Text,
    /// An identifier with this prefix.
    Token(&'static str),
    /// A 39-character `sb_` batch token.
    BatchToken,
    /// UNIX seconds.
    Unix,
}

/// How a filter matches its field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Matching {
    /// The value equals the field.
    Exact,
    /// The value is a fragment of the field (API.md: "name fragments");
    /// whether case counts is not shown.
    Fragment,
    /// A name (API.md: "merchant names", "name filter"): exact or a
    /// fragment, with or without case: not shown.
    Name,
    /// `true` or `false` equals the boolean field.
    Bool,
    /// An integer code standing for the field's name, in this order
    /// (the batch status filter: 0 is `BATCH_CREATED`).
    Code(&'static [&'static str]),
    /// The field (a timestamp) is at or after the value (UNIX seconds).
    OnOrAfter,
    /// The field is at or before the value.
    OnOrBefore,
}

/// How many values a filter takes at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Many {
    /// One value.
    One,
    /// A comma-separated list.
    Comma,
    /// The parameter repeated (`?status=A&status=B`).
    Repeated,
}

/// A filter: the rows it keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Filter {
    /// The row field it matches.
    pub field: &'static str,
    /// How.
    pub matching: Matching,
    /// One value or several.
    pub many: Many,
}

/// What a parameter does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The page size.
    Limit {
        /// The default, where API.md states it.
        default: Option<u64>,
        /// The maximum, where API.md states it.
        max: Option<u64>,
        /// API.md says 0 means the default.
        zero_is_default: bool,
    },
    /// Rows skipped.
    Offset,
    /// The previous `next_cursor`; omit or 0 for the first page.
    Cursor,
    /// `ASC` or `DESC`, uppercase only; anything else is `DESC`.
    Direction,
    /// Keeps the rows that match.
    Filter(Filter),
    /// Splits the list into parts that are lists of their own (the QR
    /// type); the part given when the parameter is omitted.
    Part {
        /// The row field holding the part.
        field: &'static str,
        /// The part when omitted.
        default: &'static str,
    },
    /// Switches the kind of rows (`only_settlement_txns`).
    RowKind,
    /// A lookup key: the answer is for it (the IBAN of account-info).
    Lookup(Option<&'static str>),
    /// An option of a lookup.
    Option,
}

/// A query parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    /// Its name on the wire.
    pub wire: &'static str,
    /// Where the name comes from.
    pub named: Named,
    /// Its values.
    pub domain: Domain,
    /// What it does.
    pub role: Role,
}

impl Param {
    /// The filter, for a filter parameter.
    pub fn filter(&self) -> Option<Filter> {
        match self.role {
            Role::Filter(f) => Some(f),
            _ => None,
        }
    }
}

/// A field of a request body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyField {
    /// Its name.
    pub name: &'static str,
    /// Its values.
    pub domain: Domain,
    /// The list whose records it names, when it names one (the batch
    /// token of an export names a batch).
    pub names: Option<OpId>,
}

/// One operation of API.md.
#[derive(Debug)]
pub struct Op {
    /// Which.
    pub id: OpId,
    /// Its short name in reports (`batches`).
    pub name: &'static str,
    /// HTTP method.
    pub method: &'static str,
    /// The path below `/v1/aggregators/{aggregator-id}`, with `{…}` for
    /// the path id.
    pub path: &'static str,
    /// The identifier in the path.
    pub path_id: Option<PathId>,
    /// Query parameters.
    pub params: &'static [Param],
    /// The fields of its JSON request body.
    pub body: &'static [BodyField],
    /// The fields of `data`.
    pub data: &'static [Field],
    /// The list, for list operations.
    pub list: Option<ListShape>,
    /// Error statuses API.md lists for it (401 holds everywhere, by
    /// Authentication 1-2).
    pub errors: &'static [u16],
    /// The success status.
    pub success: Success,
    /// What it does to the data.
    pub effect: Effect,
    /// Its API.md section.
    pub section: &'static str,
}

impl Op {
    /// The operation `id`: `OPS` holds one row per `OpId`, in the
    /// enum's order (a test holds it to that), so the id is its index.
    pub fn get(id: OpId) -> &'static Op {
        &OPS[id as usize]
    }

    /// Its path with the path id filled in (encoded).
    pub fn path_with(&self, id: &str) -> String {
        match self.path.split_once('{') {
            Some((head, rest)) => {
                let tail = rest.split_once('}').map_or("", |(_, t)| t);
                format!("{head}{}{tail}", aggpay_internal::url::encode_component(id))
            }
            None => self.path.to_owned(),
        }
    }

    /// A parameter by wire name.
    pub fn param(&self, wire: &str) -> Option<&'static Param> {
        self.params.iter().find(|p| p.wire == wire)
    }

    /// Its filter parameters.
    pub fn filters(&self) -> impl Iterator<Item = &'static Param> + '_ {
        self.params.iter().filter(|p| p.filter().is_some())
    }

    /// The parameter of `role`'s kind.
    pub fn role(&self, pick: impl Fn(&Role) -> bool) -> Option<&'static Param> {
        self.params.iter().find(|p| pick(&p.role))
    }

    /// Whether API.md lists `status` among its errors (401 everywhere).
    pub fn lists_error(&self, status: u16) -> bool {
        status == 401 || self.errors.contains(&status)
    }

    /// True for the writes.
    pub fn is_write(&self) -> bool {
        self.effect != Effect::Read
    }

    /// The operation a request's method and path (below the aggregator)
    /// exercise.
    pub fn route(method: &str, path: &str) -> Option<&'static Op> {
        let path = path.split('?').next().unwrap_or("");
        let segments: Vec<&str> = path.split('/').skip(1).collect();
        OPS.iter().find(|op| {
            if op.method != method {
                return false;
            }
            let template: Vec<&str> = op.path.split('/').skip(1).collect();
            template.len() == segments.len()
                && template
                    .iter()
                    .zip(&segments)
                    .all(|(t, s)| t.starts_with('{') || t == s)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reads_a_rotation_changes_are_read_off_the_table() {
        let showing: Vec<OpId> = OPS
            .iter()
            .filter(|op| subject::on::shows_keys(op))
            .map(|op| op.id)
            .collect();
        assert_eq!(showing, [OpId::Aggregator, OpId::Keys]);
    }

    #[test]
    fn every_operation_is_routed_to_itself() {
        for op in OPS {
            let path = op.path_with("x_1");
            assert_eq!(Op::route(op.method, &path).map(|o| o.id), Some(op.id));
            assert_eq!(Op::get(op.id).name, op.name);
        }
        // Op::get indexes OPS by the id: one row per OpId, in its order.
        for (i, op) in OPS.iter().enumerate() {
            assert_eq!(op.id as usize, i, "{} is out of OpId's order", op.name);
        }
        assert_eq!(OPS.len(), 17);
        assert!(Op::route("GET", "/nothing").is_none());
        assert_eq!(
            Op::route("GET", "").map(|o| o.id),
            Some(OpId::Aggregator),
            "the aggregator record has an empty path"
        );
    }

    #[test]
    fn list_parameters_are_consistent() {
        for op in OPS {
            if let Some(list) = op.list {
                let limit = op.role(|r| matches!(r, Role::Limit { .. }));
                assert!(limit.is_some(), "{} has no limit", op.name);
                match list.paging {
                    Paging::Cursor => assert!(op.role(|r| *r == Role::Cursor).is_some()),
                    Paging::Offset => assert!(op.role(|r| *r == Role::Offset).is_some()),
                }
                for p in op.filters() {
                    assert!(
                        list.fields
                            .iter()
                            .any(|f| Some(f.name) == p.filter().map(|f| f.field)),
                        "{}: {} filters a field rows lack",
                        op.name,
                        p.wire
                    );
                }
            }
        }
    }
}

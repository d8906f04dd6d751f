//! What a rule judges, in the contract table's own terms. Each rule
//! carries its subjects (`Rule::judges`); COVERAGE.md asks every rule, row
//! by row of the table, whether it judges that row, so that no rule id is
//! written anywhere but in the rule itself.

use std::collections::BTreeSet;
use std::fmt;

use super::{
    BodyField, Effect, FieldKind, Many, Named, OPS, Op, OpId, Paging, Param, PathId, Role, Success,
};

/// A part of the contract a rule judges.
#[derive(Debug, Clone, Copy)]
pub enum Subject {
    /// The success answer of the operations it holds for.
    Answer(fn(&Op) -> bool),
    /// The path id of the operations it holds for.
    PathId(fn(&Op, &PathId) -> bool),
    /// The parameters it holds for, of their operation.
    Param(fn(&Op, &Param) -> bool),
    /// The error answers it holds for (an operation and a status API.md
    /// lists for it; 401 for every operation).
    Error(fn(&Op, u16) -> bool),
    /// Every error condition of API.md's error table.
    ErrorTable,
    /// Resource fields of the kinds it holds for.
    Field(fn(FieldKind) -> bool),
    /// The references between records (an id in one record names another).
    References,
    /// The request body of the operations it holds for.
    Body(fn(&Op) -> bool),
    /// The body fields it holds for, of their operation.
    BodyField(fn(&Op, &BodyField) -> bool),
    /// The key header (Authentication 1) of the operations it holds for.
    KeyHeader(fn(&Op) -> bool),
    /// A statement of API.md the table does not hold.
    Said(Said),
}

/// A place of the contract table where a request carries a value: an
/// operation's path id, a query parameter, its key header, a body field,
/// or its answer as a whole. The families of properties visit every place
/// their subjects hold for, and say which they visited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Place {
    /// The operation.
    pub op: OpId,
    /// Where in its request.
    pub at: At,
}

/// Where in a request a [`Place`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum At {
    /// The answer as a whole.
    Answer,
    /// The path id.
    PathId,
    /// The query parameter of this wire name.
    Param(&'static str),
    /// The key header.
    KeyHeader,
    /// The body field of this name.
    Body(&'static str),
}

impl Place {
    /// `op` at `at`.
    pub fn new(op: OpId, at: At) -> Self {
        Self { op, at }
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = Op::get(self.op);
        match self.at {
            At::Answer => write!(f, "{} answer", op.name),
            At::PathId => write!(f, "{} {{{}}}", op.name, op.path_id.map_or("id", |p| p.name)),
            At::Param(wire) => write!(f, "{} ?{wire}", op.name),
            At::KeyHeader => write!(
                f,
                "{} header {}",
                op.name,
                aggpay_internal::syntax::KEY_HEADER
            ),
            At::Body(field) => write!(f, "{} body {field}", op.name),
        }
    }
}

/// Every place of the contract table that `subjects` hold for: where a
/// rule naming them must send its cases. Derived from the table alone,
/// so that a new operation, parameter or body field is due at once.
pub fn due(subjects: &[Subject]) -> BTreeSet<Place> {
    let mut out = BTreeSet::new();
    for op in OPS {
        for subject in subjects {
            match subject {
                Subject::Answer(f) if f(op) => {
                    out.insert(Place::new(op.id, At::Answer));
                }
                Subject::PathId(f) if op.path_id.is_some_and(|id| f(op, &id)) => {
                    out.insert(Place::new(op.id, At::PathId));
                }
                Subject::Param(f) => out.extend(
                    op.params
                        .iter()
                        .filter(|p| f(op, p))
                        .map(|p| Place::new(op.id, At::Param(p.wire))),
                ),
                Subject::BodyField(f) => out.extend(
                    op.body
                        .iter()
                        .filter(|b| f(op, b))
                        .map(|b| Place::new(op.id, At::Body(b.name))),
                ),
                Subject::KeyHeader(f) if f(op) => {
                    out.insert(Place::new(op.id, At::KeyHeader));
                }
                _ => {}
            }
        }
    }
    out
}

/// The statements of API.md that are not rows of the contract table and
/// that a rule judges (COVERAGE.md, "Statements the table does not
/// hold", gives the words of each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Said {
    /// Every operation is scoped to the aggregator of the path.
    Scope,
    /// Typing rule 1: identifiers carry their type prefix.
    Prefixes,
    /// Typing rule 2: numeric ids are strings; the two access-key shapes.
    NumericIds,
    /// Typing rule 3: amounts in paisa, ISO 4217 currencies.
    Amounts,
    /// Typing rule 4: timestamps, null when unset, alias dates.
    Timestamps,
    /// Typing rule 5: what a count is and means.
    Counts,
    /// net_amount is gross minus the fee and the four taxes.
    NetAmount,
    /// refund_id is null for payment transactions.
    RefundIdNull,
    /// redacted_iban masks the IBAN's middle digits.
    RedactedIban,
    /// The aggregator record holds its access keys, as the key list does.
    KeysHeld,
    /// A rotation changes the rotated key's secret and nothing else.
    Rotation,
    /// A webhook's url and event filter.
    Webhooks,
    /// Batch status: integers in filters, names in answers.
    BatchStatus,
    /// A new report export's status, and storage_key until produced.
    ExportStatus,
    /// Overview: a JSON-over-HTTP API, so HTTP's requirements of a
    /// server (RFC 9112, RFC 9110) are the server's.
    Http,
    /// Conventions 1: paths appended to the base URL.
    BaseUrl,
    /// Conventions 2: JSON both ways; every operation requires the key.
    JsonWithKey,
    /// Conventions 2: a JSON answer is labelled so, one meaning per member.
    JsonMeaning,
    /// Conventions 3: the success envelope.
    Envelope,
    /// Conventions 4: Content-Length and Date.
    Headers,
    /// Conventions 5: next_cursor and the counts of cursor lists.
    CursorCounts,
    /// Authentication 1-2: no key, an empty or a wrong one is a 401.
    KeyRequired,
    /// Authentication 1: the key is carried in its header only.
    KeyHeader,
}

/// The predicates the rules name their subjects with, where one is
/// shared or longer than a line.
pub mod on {
    use super::*;

    /// Every operation.
    pub fn every_op(_: &Op) -> bool {
        true
    }

    /// A read (a GET).
    pub fn read(op: &Op) -> bool {
        op.method == "GET"
    }

    /// A read whose answer holds access keys, secrets in clear
    /// (Said::KeysHeld): what a rotation changes. Read off the table: an
    /// answer whose fields hold the AccessKey record, at any depth.
    pub fn shows_keys(op: &Op) -> bool {
        fn holds(fields: &[crate::contract::Field]) -> bool {
            fields.iter().any(|f| match f.kind {
                FieldKind::Obj(inner) | FieldKind::Arr(inner) => {
                    inner == crate::contract::resources::ACCESS_KEY || holds(inner)
                }
                _ => false,
            })
        }
        read(op) && holds(op.data)
    }

    /// A write (not a GET).
    pub fn write(op: &Op) -> bool {
        op.method != "GET"
    }

    /// Every parameter of every operation.
    pub fn every_param(_: &Op, _: &Param) -> bool {
        true
    }

    /// Every error of every operation.
    pub fn every_error(_: &Op, _: u16) -> bool {
        true
    }

    /// An operation whose success is exactly 200 (the charges).
    pub fn exactly_200(op: &Op) -> bool {
        op.success == Success::Exactly200
    }

    /// A cursor list.
    pub fn cursor_list(op: &Op) -> bool {
        op.list.map(|l| l.paging) == Some(Paging::Cursor)
    }

    /// The page size of a cursor list.
    pub fn cursor_limit(op: &Op, p: &Param) -> bool {
        matches!(p.role, Role::Limit { .. }) && cursor_list(op)
    }

    /// The page size of a list that is not a cursor list.
    pub fn offset_limit(op: &Op, p: &Param) -> bool {
        matches!(p.role, Role::Limit { .. }) && !cursor_list(op)
    }

    /// The direction of a cursor list.
    pub fn cursor_direction(op: &Op, p: &Param) -> bool {
        p.role == Role::Direction && cursor_list(op)
    }

    /// The direction of a list that is not a cursor list.
    pub fn offset_direction(op: &Op, p: &Param) -> bool {
        p.role == Role::Direction && !cursor_list(op)
    }

    /// A paging parameter (offset, page size, cursor, direction) whose
    /// name API.md gives by purpose only (WIRE.md names it).
    pub fn paging_named_by_wire(_: &Op, p: &Param) -> bool {
        matches!(
            p.role,
            Role::Offset | Role::Limit { .. } | Role::Cursor | Role::Direction
        ) && p.named == Named::Wire
    }

    /// A filter whose name API.md gives by purpose only (WIRE.md names
    /// it).
    pub fn filter_named_by_wire(op: &Op, p: &Param) -> bool {
        filter(op, p) && p.named == Named::Wire
    }

    /// A filter.
    pub fn filter(_: &Op, p: &Param) -> bool {
        matches!(p.role, Role::Filter(_))
    }

    /// A filter of a list with more than one.
    pub fn combined_filter(op: &Op, p: &Param) -> bool {
        filter(op, p) && op.filters().count() > 1
    }

    /// A filter that takes several values.
    pub fn multi_value_filter(_: &Op, p: &Param) -> bool {
        matches!(p.role, Role::Filter(f) if f.many != Many::One)
    }

    /// A looked-up value of any lookup.
    pub fn lookup(_: &Op, p: &Param) -> bool {
        matches!(p.role, Role::Lookup(_))
    }

    /// A looked-up value the answer names back (`Lookup(Some(field))`).
    pub fn lookup_named_back(_: &Op, p: &Param) -> bool {
        matches!(p.role, Role::Lookup(Some(_)))
    }

    /// A looked-up value required with its type (`Lookup(None)`).
    pub fn lookup_with_type(_: &Op, p: &Param) -> bool {
        matches!(p.role, Role::Lookup(None))
    }

    /// The path id of an operation that is not a rotation (a rotation's
    /// id is judged by what the rotation does).
    pub fn path_id_not_rotated(op: &Op, _: &PathId) -> bool {
        op.effect != Effect::Rotation
    }

    /// A 401 (every operation, Authentication 2).
    pub fn unauthorized(_: &Op, status: u16) -> bool {
        status == 401
    }

    /// A 404 for an unknown record named by the path.
    pub fn unknown_path_id(op: &Op, status: u16) -> bool {
        status == 404 && op.path_id.is_some()
    }

    /// A 400.
    pub fn bad_request(_: &Op, status: u16) -> bool {
        status == 400
    }

    /// The report export's body.
    pub fn report_export(op: &Op) -> bool {
        op.id == OpId::ReportExport
    }
}

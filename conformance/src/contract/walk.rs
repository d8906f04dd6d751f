//! Every field a table names in an answer, met once: the rules that judge
//! every answer each read the fields of their kinds, and a walk of its
//! own per rule (a map lookup per field, per row, per rule) was most of
//! what judging every answer cost.

use serde_json::Value;

use super::{Field, FieldKind};

/// The fields of `fields` in a value, recursing into objects and arrays
/// of objects, in the table's order (a field, then what it holds).
#[derive(Debug)]
pub struct Walk<'v> {
    links: Vec<Link>,
    met: Vec<Met<'v>>,
}

/// One field of the table in the value: where it is, what the table says
/// of it, and what was there (`None`: missing).
#[derive(Debug, Clone, Copy)]
pub struct Met<'v> {
    /// Where it is ([`Walk::path`] writes it out).
    pub at: Node,
    /// What the table says of it.
    pub field: &'static Field,
    /// What the value holds there.
    pub value: Option<&'v Value>,
}

/// A place in the walked value (`batches[2].token`), written out only
/// when shown ([`Walk::path`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node(usize);

/// A place: a step from the place before (none: the value walked).
#[derive(Debug)]
struct Link {
    before: Option<Node>,
    step: Step,
}

#[derive(Debug, Clone, Copy)]
enum Step {
    Field(&'static str),
    Index(usize),
}

impl<'v> Walk<'v> {
    /// Walks `value` by `fields`.
    pub fn new(value: &'v Value, fields: &'static [Field]) -> Self {
        let mut walk = Walk {
            links: Vec::new(),
            met: Vec::new(),
        };
        walk.object(value, fields, None);
        walk
    }

    /// Every field met, in the table's order.
    pub fn fields(&self) -> &[Met<'v>] {
        &self.met
    }

    /// Where `at` is, written out (`batches[2].token`).
    pub fn path(&self, at: Node) -> impl std::fmt::Display + '_ {
        Shown { walk: self, at }
    }

    fn place(&mut self, before: Option<Node>, step: Step) -> Node {
        let at = Node(self.links.len());
        self.links.push(Link { before, step });
        at
    }

    fn object(&mut self, value: &'v Value, fields: &'static [Field], before: Option<Node>) {
        for field in fields {
            let at = self.place(before, Step::Field(field.name));
            let v = value.get(field.name);
            self.met.push(Met {
                at,
                field,
                value: v,
            });
            match (field.kind, v) {
                (FieldKind::Obj(inner), Some(obj)) if obj.is_object() => {
                    self.object(obj, inner, Some(at))
                }
                (FieldKind::Arr(inner), Some(Value::Array(items))) if !inner.is_empty() => {
                    for (i, item) in items.iter().enumerate() {
                        let element = self.place(Some(at), Step::Index(i));
                        self.object(item, inner, Some(element));
                    }
                }
                _ => {}
            }
        }
    }
}

/// A place written out.
struct Shown<'w, 'v> {
    walk: &'w Walk<'v>,
    at: Node,
}

impl std::fmt::Display for Shown<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let place = &self.walk.links[self.at.0];
        if let Some(before) = place.before {
            Shown {
                walk: self.walk,
                at: before,
            }
            .fmt(f)?;
        }
        match (place.step, place.before) {
            (Step::Field(name), None) => f.write_str(name),
            (Step::Field(name), Some(_)) => write!(f, ".{name}"),
            (Step::Index(i), _) => write!(f, "[{i}]"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::resources::BATCH_LIST;

    #[test]
    fn every_field_is_met_in_the_tables_order_and_its_place_written_out() {
        let data = serde_json::json!({"batches": [{"id": "1"}, {"id": 2, "token": "b"}]});
        let walk = Walk::new(&data, BATCH_LIST);
        let seen: Vec<(String, &str, Option<&Value>)> = walk
            .fields()
            .iter()
            .map(|m| (walk.path(m.at).to_string(), m.field.name, m.value))
            .collect();
        let names: Vec<&str> = seen.iter().map(|(p, _, _)| p.as_str()).collect();
        assert_eq!(names[0], "batches");
        let first = names.iter().position(|p| *p == "batches[0].id").unwrap();
        let second = names.iter().position(|p| *p == "batches[1].id").unwrap();
        assert!(first < second, "{names:?}");
        assert!(names.contains(&"count.total_count") || names.contains(&"count"));
        let (_, name, value) = &seen[second];
        assert_eq!((*name, *value), ("id", Some(&serde_json::json!(2))));
        let token = seen
            .iter()
            .find(|(p, _, _)| p == "batches[0].token")
            .unwrap();
        assert_eq!(token.2, None, "a missing field is met as missing");
    }
}

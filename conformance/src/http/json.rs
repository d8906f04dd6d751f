//! The one reader of every body, for the rules and the model alike: JSON
//! read strictly. serde_json refuses what RFC 8259's grammar refuses
//! (numbers, escapes, UTF-8, trailing bytes after the text); this reader
//! also keeps every member an object names twice, which serde_json's
//! `Value` would fold into the last one silently: RFC 8259 section 4,
//! "When the names within an object are not unique, the behavior of
//! software that receives such an object is unpredictable", so a body
//! whose duplicates disagree means one thing to one client and another
//! to the next.

use std::cell::RefCell;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// A member an object names more than once.
#[derive(Debug, Clone, PartialEq)]
pub struct Duplicate {
    /// Where: the member's path from the top (`data.count`,
    /// `data.keys[0].secret`).
    pub path: String,
    /// Every value it was given, in order.
    pub values: Vec<Value>,
}

impl Duplicate {
    /// True when every value is the same.
    pub fn agrees(&self) -> bool {
        self.values.windows(2).all(|w| w[0] == w[1])
    }
}

/// `body` as JSON (a duplicated member keeps its last value, as
/// serde_json does), and every duplicated member.
///
/// # Errors
///
/// serde_json's, where the bytes are not one JSON text.
pub fn read(body: &[u8]) -> Result<(Value, Vec<Duplicate>), serde_json::Error> {
    let duplicates = RefCell::new(Vec::new());
    let mut de = serde_json::Deserializer::from_slice(body);
    let value = Reader {
        at: Step::Top,
        parent: None,
        duplicates: &duplicates,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok((value, duplicates.into_inner()))
}

/// Where a value sits: a member of its parent's object, or an element of
/// its parent's array. Held on the stack, parent to child: the path is
/// written out only for a duplicate (a string per member of every body
/// would cost more than the parse).
#[derive(Clone, Copy)]
enum Step<'p> {
    Top,
    Key(&'p str),
    Index(usize),
}

/// Reads one value, noting duplicates.
struct Reader<'p> {
    at: Step<'p>,
    parent: Option<&'p Reader<'p>>,
    duplicates: &'p RefCell<Vec<Duplicate>>,
}

impl Reader<'_> {
    /// The path of this value (`data.keys[0].secret`).
    fn path(&self) -> String {
        let mut steps = Vec::new();
        let mut at = Some(self);
        while let Some(r) = at {
            steps.push(r.at);
            at = r.parent;
        }
        let mut out = String::new();
        for step in steps.into_iter().rev() {
            match step {
                Step::Top => {}
                Step::Key(k) if out.is_empty() => out.push_str(k),
                Step::Key(k) => {
                    out.push('.');
                    out.push_str(k);
                }
                Step::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }
}

impl<'de> DeserializeSeed<'de> for Reader<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Reader<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            let child = Reader {
                at: Step::Index(items.len()),
                parent: Some(&self),
                duplicates: self.duplicates,
            };
            match seq.next_element_seed(child)? {
                Some(item) => items.push(item),
                None => break,
            }
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let child = Reader {
                at: Step::Key(&key),
                parent: Some(&self),
                duplicates: self.duplicates,
            };
            let value = map.next_value_seed(child)?;
            if out.contains_key(&key) {
                let path = Reader {
                    at: Step::Key(&key),
                    parent: Some(&self),
                    duplicates: self.duplicates,
                }
                .path();
                let earlier = out.insert(key, value.clone()).unwrap_or(Value::Null);
                let mut duplicates = self.duplicates.borrow_mut();
                match duplicates.iter_mut().find(|d| d.path == path) {
                    Some(d) => d.values.push(value),
                    None => duplicates.push(Duplicate {
                        path,
                        values: vec![earlier, value],
                    }),
                }
            } else {
                out.insert(key, value);
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn duplicates_are_kept_with_every_value_and_the_last_one_wins() {
        let (v, d) = read(br#"{"data":{"count":"61","keys":[{"a":1,"a":1}],"count":61}}"#).unwrap();
        assert_eq!(v["data"]["count"], 61, "as serde_json: the last member");
        assert_eq!(d.len(), 2);
        let count = d.iter().find(|d| d.path == "data.count").unwrap();
        assert_eq!(count.values, [json!("61"), json!(61)]);
        assert!(!count.agrees());
        let a = d.iter().find(|d| d.path == "data.keys[0].a").unwrap();
        assert!(a.agrees());
        let (v, d) = read(br#"{"a":[1,{"b":null}],"c":1.5}"#).unwrap();
        assert_eq!(v, json!({"a":[1,{"b":null}],"c":1.5}));
        assert!(d.is_empty());
    }

    #[test]
    fn what_json_refuses_is_refused() {
        for bad in [
            &b"{} x"[..],
            b"{\"a\":01}",
            b"{\"a\":\"\xff\"}",
            b"{\"a\":1,}",
            b"[1 2]",
            b"{\"a\":\"\\x\"}",
            b"",
        ] {
            assert!(read(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        assert!(
            read(b" {} \n").is_ok(),
            "whitespace around the text is JSON"
        );
    }
}

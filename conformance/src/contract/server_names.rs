//! The names a run holds a server to where API.md gives a parameter by
//! purpose only (Conventions 6: "a parameter given only by its purpose
//! has a wire name that is not shown").
//!
//! By default the harness asks each such parameter under WIRE.md's name,
//! and what a server's answers show it reads decides what is judged: a
//! name no answer shows read is reported "not judged". Two options make
//! the run judge in full instead: `--param-name LIST.PURPOSE=NAME` gives
//! a server's own name for one parameter (every request of that list
//! then carries it), and `--require-wire-names` holds the server to
//! WIRE.md's names and to its form for several values of one filter
//! (the key repeated), as clients built on the published reference send
//! them.

use super::{Named, OPS, Op, OpId};

/// A server's own name for one parameter of one list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Renamed {
    /// The operation.
    pub op: OpId,
    /// The parameter, by WIRE.md's name (which stands for its purpose).
    pub wire: &'static str,
    /// The name the server reads.
    pub name: String,
}

impl std::str::FromStr for Renamed {
    type Err = String;

    /// `LIST.PURPOSE=NAME`: LIST an operation's name (`refunds`,
    /// `batches`), PURPOSE the parameter's name in WIRE.md (`limit`,
    /// `status`), NAME the server's. Only a parameter API.md gives by
    /// purpose only can be renamed: the others' names API.md shows.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (target, name) = s
            .split_once('=')
            .ok_or_else(|| format!("{s:?}: expected LIST.PURPOSE=NAME"))?;
        let (list, purpose) = target
            .split_once('.')
            .ok_or_else(|| format!("{s:?}: expected LIST.PURPOSE=NAME"))?;
        let op = OPS.iter().find(|o| o.name == list).ok_or_else(|| {
            let names: Vec<&str> = OPS
                .iter()
                .filter(|o| o.params.iter().any(|p| p.named == Named::Wire))
                .map(|o| o.name)
                .collect();
            format!(
                "{s:?}: no operation {list:?} (those with a parameter to rename: {})",
                names.join(", ")
            )
        })?;
        let wire = renamable(op).find(|w| *w == purpose).ok_or_else(|| {
            let names: Vec<&str> = renamable(op).collect();
            format!(
                "{s:?}: {list} has no parameter {purpose:?} that API.md gives by purpose only ({})",
                if names.is_empty() {
                    "it has none".to_owned()
                } else {
                    format!("those are: {}", names.join(", "))
                }
            )
        })?;
        let valid = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.[]".contains(&b));
        if !valid {
            return Err(format!(
                "{s:?}: {name:?} is not a query parameter name (letters, digits, - _ . [ ])"
            ));
        }
        Ok(Self {
            op: op.id,
            wire,
            name: name.to_owned(),
        })
    }
}

/// The parameters of `op` that API.md gives by purpose only, by WIRE.md's
/// names.
fn renamable(op: &'static Op) -> impl Iterator<Item = &'static str> {
    op.params
        .iter()
        .filter(|p| p.named == Named::Wire)
        .map(|p| p.wire)
}

/// The names a run holds a server to: see the module's documentation.
#[derive(Debug, Clone, Default)]
pub struct ServerNames {
    require_wire: bool,
    renamed: Vec<Renamed>,
}

impl ServerNames {
    /// WIRE.md's names, required or not, with the server's own names for
    /// some parameters.
    ///
    /// # Errors
    ///
    /// One parameter given two names.
    pub fn new(require_wire: bool, renamed: Vec<Renamed>) -> Result<Self, String> {
        for (i, a) in renamed.iter().enumerate() {
            if let Some(b) = renamed[..i]
                .iter()
                .find(|b| b.op == a.op && b.wire == a.wire)
            {
                return Err(format!(
                    "--param-name {}.{}: given twice ({} and {})",
                    Op::get(a.op).name,
                    a.wire,
                    b.name,
                    a.name
                ));
            }
        }
        Ok(Self {
            require_wire,
            renamed,
        })
    }

    /// Whether `--require-wire-names` holds the server to WIRE.md's names
    /// and its form for several values.
    pub fn wire_required(&self) -> bool {
        self.require_wire
    }

    /// Whether the server is held to what `op`'s parameter `wire` means
    /// whatever its answers show: API.md shows its name, or the run was
    /// given the server's name for it, or WIRE.md's names are required.
    pub fn held(&self, op: OpId, wire: &str) -> bool {
        let shown = Op::get(op)
            .params
            .iter()
            .any(|p| p.wire == wire && p.named == Named::Api);
        shown || self.require_wire || self.renamed(op, wire).is_some()
    }

    /// The server's own name for `op`'s parameter `wire`, if given.
    fn renamed(&self, op: OpId, wire: &str) -> Option<&str> {
        self.renamed
            .iter()
            .find(|r| r.op == op && r.wire == wire)
            .map(|r| r.name.as_str())
    }

    /// The query of a request of `method` and `path` as the server reads
    /// it: each parameter the run was given the server's name for, under
    /// that name.
    pub fn on_the_wire<'q>(
        &self,
        method: &str,
        path: &str,
        query: &'q [(String, String)],
    ) -> std::borrow::Cow<'q, [(String, String)]> {
        if self.renamed.is_empty() {
            return std::borrow::Cow::Borrowed(query);
        }
        let Some(op) = Op::route(method, path) else {
            return std::borrow::Cow::Borrowed(query);
        };
        std::borrow::Cow::Owned(
            query
                .iter()
                .map(|(k, v)| {
                    let k = self.renamed(op.id, k).unwrap_or(k);
                    (k.to_owned(), v.clone())
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_renaming_names_a_list_and_a_parameter_given_by_purpose_only() {
        let r: Renamed = "refunds.limit=per_page".parse().unwrap();
        assert_eq!(
            (r.op, r.wire, r.name.as_str()),
            (OpId::Refunds, "limit", "per_page")
        );
        for bad in [
            "refunds.limit",
            "refunds=per_page",
            "nowhere.limit=x",
            "refunds.nothing=x",
            "refunds.limit=",
            "refunds.limit=a b",
        ] {
            assert!(bad.parse::<Renamed>().is_err(), "{bad}");
        }
        // A name API.md shows cannot be renamed.
        let shown = OPS
            .iter()
            .find_map(|o| {
                o.params
                    .iter()
                    .find(|p| p.named == Named::Api)
                    .map(|p| format!("{}.{}=x", o.name, p.wire))
            })
            .unwrap();
        assert!(shown.parse::<Renamed>().is_err(), "{shown}");
    }

    #[test]
    fn a_renamed_parameter_is_sent_under_the_servers_name_and_held() {
        let names =
            ServerNames::new(false, vec!["refunds.limit=per_page".parse().unwrap()]).unwrap();
        let path = Op::get(OpId::Refunds).path;
        let query = vec![
            ("limit".to_owned(), "5".to_owned()),
            ("offset".to_owned(), "0".to_owned()),
        ];
        let sent = names.on_the_wire("GET", path, &query);
        assert_eq!(sent[0], ("per_page".to_owned(), "5".to_owned()));
        assert_eq!(sent[1], ("offset".to_owned(), "0".to_owned()));
        assert!(names.held(OpId::Refunds, "limit"));
        assert!(!names.held(OpId::Refunds, "offset"));
        let required = ServerNames::new(true, Vec::new()).unwrap();
        assert!(required.held(OpId::Refunds, "offset"));
        let twice = vec![
            "refunds.limit=a".parse().unwrap(),
            "refunds.limit=b".parse().unwrap(),
        ];
        assert!(ServerNames::new(false, twice).is_err());
    }
}

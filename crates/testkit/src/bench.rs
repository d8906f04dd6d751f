//! The figures of `just bench`. Each bench adds its own to
//! `target/bench.json` (name, value, target, how it is measured), and
//! `BENCHMARKS.md` is written anew from the whole file and the machine it
//! ran on: the current figures only, git keeps their history.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

/// One figure of a bench.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// Its name in `target/bench.json`.
    pub name: String,
    /// What was measured.
    pub value: f64,
    /// What it should be (`<= 2`), or `(info)`.
    pub target: String,
    /// How it is measured, in a sentence.
    pub how: String,
}

impl Figure {
    /// A figure.
    pub fn new(
        name: impl Into<String>,
        value: f64,
        target: impl Into<String>,
        how: impl Into<String>,
    ) -> Self {
        Self {
            name: name.into(),
            value,
            target: target.into(),
            how: how.into(),
        }
    }
}

/// A target as a bound a figure meets or misses, read from its text: `<=
/// 2`, `< 50`, `>= 1.5`, `> 0`, or a number alone (`0 (10 runs)`), each
/// maybe followed by words. Any other text (`(info)`, `bounded`, `>= 2x
/// before`) is no bound: the figure is shown, not judged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// At most this.
    AtMost(f64),
    /// Below this.
    Below(f64),
    /// At least this.
    AtLeast(f64),
    /// Above this.
    Above(f64),
    /// Exactly this.
    Exactly(f64),
}

impl Bound {
    /// The bound a target's text states, if it states one.
    pub fn of(target: &str) -> Option<Self> {
        let t = target.trim();
        let (make, rest): (fn(f64) -> Bound, &str) = if let Some(r) = t.strip_prefix("<=") {
            (Bound::AtMost, r)
        } else if let Some(r) = t.strip_prefix(">=") {
            (Bound::AtLeast, r)
        } else if let Some(r) = t.strip_prefix('<') {
            (Bound::Below, r)
        } else if let Some(r) = t.strip_prefix('>') {
            (Bound::Above, r)
        } else {
            (Bound::Exactly, t)
        };
        let number = rest.split_whitespace().next()?.parse::<f64>().ok()?;
        Some(make(number))
    }

    /// Whether `value` meets it.
    pub fn met_by(self, value: f64) -> bool {
        match self {
            Bound::AtMost(n) => value <= n,
            Bound::Below(n) => value < n,
            Bound::AtLeast(n) => value >= n,
            Bound::Above(n) => value > n,
            Bound::Exactly(n) => value == n,
        }
    }
}

/// The workspace's root folder.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Prints `figures` as a table, puts them into `target/bench.json` (in
/// place of earlier figures of the same names, the others kept in their
/// order), and writes `BENCHMARKS.md` from the whole file.
pub fn record(figures: &[Figure]) {
    println!("\n{:<38} {:>14}  target", "benchmark", "value");
    println!("{}", "-".repeat(64));
    for f in figures {
        println!("{:<38} {:>14.3}  {}", f.name, f.value, f.target);
    }
    let path = root().join("target/bench.json");
    let mut all: Vec<Value> = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v.get("figures").and_then(Value::as_array).cloned())
        .unwrap_or_default();
    for f in figures {
        let entry = json!({
            "name": f.name,
            "value": serde_json::Number::from_f64(f.value).map_or(Value::Null, Value::Number),
            "target": f.target,
            "met": Bound::of(&f.target).map(|b| b.met_by(f.value)),
            "how": f.how,
        });
        match all.iter_mut().find(|e| e["name"] == f.name.as_str()) {
            Some(old) => *old = entry,
            None => all.push(entry),
        }
    }
    let machine = machine();
    let file = json!({ "machine": machine, "figures": all });
    match std::fs::write(
        &path,
        serde_json::to_string_pretty(&file).unwrap_or_default() + "\n",
    ) {
        Ok(()) => println!("\nadded to {}", path.display()),
        Err(e) => eprintln!("could not write {}: {e}", path.display()),
    }
    let markdown = root().join("BENCHMARKS.md");
    if let Err(e) = std::fs::write(&markdown, render(&machine, &all)) {
        eprintln!("could not write {}: {e}", markdown.display());
    }
}

/// What the figures were measured on.
fn machine() -> String {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let cpu = read("/proc/cpuinfo")
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .map(|r| r.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_else(|| "an unknown processor".to_owned());
    let memory_gib = read("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or_else(String::new, |kb| {
            format!(", {:.0} GiB", kb / 1024.0 / 1024.0)
        });
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let output = |cmd: &str, args: &[&str]| {
        Command::new(cmd)
            .args(args)
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default()
    };
    format!(
        "{cores} cores ({cpu}){memory_gib}, Linux {}; {}; measured {}",
        read("/proc/sys/kernel/osrelease").trim(),
        output("rustc", &["-V"]),
        output("date", &["-u", "+%Y-%m-%d"]),
    )
}

/// BENCHMARKS.md.
fn render(machine: &str, figures: &[Value]) -> String {
    let cell = |v: &Value| v.as_str().unwrap_or("").replace('|', "\\|");
    let mut out = String::from(
        "# Benchmarks\n\n\
         Written by `just bench` from `target/bench.json`; do not edit. \
         `cargo bench --locked -p aggpay-conformance --bench evidence` and \
         `cargo bench --locked -p aggpay-sync --features ceilings --bench sync` (release profile) \
         each measure their figures and write them here; `cargo bench --bench evidence -- NAME` \
         measures only the figures whose names hold `NAME`. Comparisons run both sides in one \
         process, interleaved round by round, so that the machine's noise cancels out; this shared \
         host's speed still moves by a fifth from hour to hour, so compare ratios rather than times. \
         Speed is never asserted by a test: the targets stand beside the figures.\n\n",
    );
    out.push_str(&format!(
        "Machine: {machine}; everything on loopback (127.0.0.1).\n\n"
    ));
    out.push_str("| figure | value | target | met | how it is measured |\n|---|---|---|---|---|\n");
    for f in figures {
        let value = f["value"]
            .as_f64()
            .map_or_else(|| "-".to_owned(), |v| format!("{v:.3}"));
        // Judged again from the target's text: a file written before the
        // bounds were read has none.
        let met = match (
            f["value"].as_f64(),
            f["target"].as_str().and_then(Bound::of),
        ) {
            (Some(v), Some(b)) if b.met_by(v) => "yes",
            (_, Some(_)) => "**no**",
            (_, None) => "",
        };
        out.push_str(&format!(
            "| `{}` | {value} | {} | {met} | {} |\n",
            cell(&f["name"]),
            cell(&f["target"]),
            cell(&f["how"]),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_read_as_bounds_and_every_miss_is_marked() {
        assert_eq!(
            Bound::of("<= 4 (50 ms round trip)"),
            Some(Bound::AtMost(4.0))
        );
        assert_eq!(Bound::of("< 50"), Some(Bound::Below(50.0)));
        assert_eq!(Bound::of("0 (10 runs)"), Some(Bound::Exactly(0.0)));
        assert_eq!(Bound::of(">= 2x before"), None);
        assert_eq!(Bound::of("(info)"), None);
        assert_eq!(Bound::of("bounded"), None);
        let figures = [
            json!({"name": "a", "value": 5.5, "target": "<= 4", "how": ""}),
            json!({"name": "b", "value": 0.8, "target": "<= 2", "how": ""}),
            json!({"name": "c", "value": 3.0, "target": "(info)", "how": ""}),
        ];
        let md = render("m", &figures);
        assert!(md.contains("| `a` | 5.500 | <= 4 | **no** |"), "{md}");
        assert!(md.contains("| `b` | 0.800 | <= 2 | yes |"), "{md}");
        assert!(md.contains("| `c` | 3.000 | (info) |  |"), "{md}");
    }
}

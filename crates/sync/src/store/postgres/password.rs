//! The password of a connection whose URL carries none, found where libpq
//! looks: `PGPASSWORD`, then the password file (`PGPASSFILE`, or
//! `~/.pgpass`), so that no password need be typed on a command line.
//!
//! The password file's format is libpq's (PostgreSQL documentation,
//! "The Password File"): lines `hostname:port:database:username:password`,
//! `*` matching anything in the first four fields, `\:` and `\\` escaping,
//! `#` starting a comment line; the first matching line wins. As libpq
//! does, a file that its group or others may read is not used (a warning
//! says why). The `postgres` crate reads neither; no kept crate does it
//! alone, and the format is this small.

use std::path::{Path, PathBuf};

/// Where a password came from, for the run's messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// `PGPASSWORD`.
    Env,
    /// A line of this password file.
    File(PathBuf),
}

/// The password for `host:port`, `database`, `user`, and a warning to show
/// (a password file that is not private, so not used).
pub fn lookup(
    host: &str,
    port: u16,
    database: &str,
    user: &str,
) -> (Option<(String, Found)>, Option<String>) {
    if let Some(p) = std::env::var_os("PGPASSWORD").filter(|p| !p.is_empty()) {
        return (Some((p.to_string_lossy().into_owned(), Found::Env)), None);
    }
    let Some(path) = password_file() else {
        return (None, None);
    };
    match private(&path) {
        Ok(true) => {}
        Ok(false) => {
            return (
                None,
                Some(format!(
                    "the password file {} can be read by other users, so it is not used (as libpq does): chmod 600 {}",
                    path.display(),
                    path.display()
                )),
            );
        }
        Err(()) => return (None, None),
    }
    let Ok(text) = std::fs::read_to_string(&path) else {
        return (None, None);
    };
    let found = find(&text, host, &port.to_string(), database, user);
    (found.map(|p| (p, Found::File(path))), None)
}

/// `PGPASSFILE`, or `~/.pgpass`.
fn password_file() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PGPASSFILE").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("HOME").map(|h| Path::new(&h).join(".pgpass"))
}

/// `Ok(true)` for a regular file only its owner may read; `Err` when
/// there is no such file.
#[cfg(unix)]
fn private(path: &Path) -> Result<bool, ()> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).map_err(|_| ())?;
    if !meta.is_file() {
        return Err(());
    }
    Ok(meta.permissions().mode() & 0o077 == 0)
}

#[cfg(not(unix))]
fn private(path: &Path) -> Result<bool, ()> {
    if path.is_file() { Ok(true) } else { Err(()) }
}

/// The password of the first line of `text` matching the four values.
fn find(text: &str, host: &str, port: &str, database: &str, user: &str) -> Option<String> {
    let wanted = [host, port, database, user];
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .find_map(|line| {
            let fields = split(line);
            if fields.len() < 5 {
                return None;
            }
            let matches = fields[..4]
                .iter()
                .zip(wanted)
                .all(|(f, w)| f == "*" || f == w || (f == "localhost" && w.starts_with('/')));
            matches.then(|| fields[4].clone())
        })
}

/// The fields of a line: `:` separates, `\` escapes the next character.
fn split(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let (Some(next), Some(f)) = (chars.next(), fields.last_mut()) {
                    f.push(next);
                }
            }
            // The password is the rest of the line, colons and all.
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => {
                if let Some(f) = fields.last_mut() {
                    f.push(c);
                }
            }
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_matching_line_wins_with_wildcards_and_escapes() {
        let text = "# comment\n\
                    other:5432:*:*:no\n\
                    127.0.0.1:5433:mirror:sync:pa\\:ss\\\\word\n\
                    *:*:*:sync:fallback\n";
        assert_eq!(
            find(text, "127.0.0.1", "5433", "mirror", "sync").as_deref(),
            Some("pa:ss\\word")
        );
        assert_eq!(
            find(text, "db.example", "5432", "x", "sync").as_deref(),
            Some("fallback")
        );
        assert_eq!(find(text, "db.example", "5432", "x", "someone"), None);
        assert_eq!(split("h:1:d:u:a:b"), ["h", "1", "d", "u", "a:b"]);
    }
}

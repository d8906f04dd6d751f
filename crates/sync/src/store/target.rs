//! Where a run writes, as the user names it (`--db`), and how it is shown:
//! a PostgreSQL URL's password never is.

use std::path::PathBuf;

/// Where a run writes: a SQLite file, or a PostgreSQL database.
#[derive(Clone, PartialEq, Eq)]
pub enum Target {
    /// A SQLite file (created when missing).
    Sqlite(PathBuf),
    /// A PostgreSQL connection URL (`postgres://user@host:port/dbname`).
    Postgres(String),
}

impl Target {
    /// `postgres://` or `postgresql://` URLs are PostgreSQL; anything else
    /// a SQLite path.
    pub fn parse(text: &str) -> Self {
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            Target::Postgres(text.to_owned())
        } else {
            Target::Sqlite(PathBuf::from(text))
        }
    }

    /// True for a PostgreSQL URL that carries a password (of the user
    /// part, or a `password=` parameter).
    pub fn password_in_url(&self) -> bool {
        match self {
            Target::Sqlite(_) => false,
            Target::Postgres(url) => redact_url(url) != *url,
        }
    }

    /// How messages name it: a URL's password never shows.
    pub fn shown(&self) -> String {
        match self {
            Target::Sqlite(path) => path.display().to_string(),
            Target::Postgres(url) => redact_url(url),
        }
    }
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown())
    }
}

/// A URL with its password (of the user part, or a `password=` parameter)
/// replaced by `<redacted>`.
pub(super) fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, tail) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
    let authority = match authority.rsplit_once('@') {
        Some((user, host)) if user.contains(':') => {
            let name = user.split(':').next().unwrap_or("");
            format!("{name}:<redacted>@{host}")
        }
        _ => authority.to_owned(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let params: Vec<String> = query
                .split('&')
                .map(|p| match p.split_once('=') {
                    Some((k, _)) if k.eq_ignore_ascii_case("password") => {
                        format!("{k}=<redacted>")
                    }
                    _ => p.to_owned(),
                })
                .collect();
            format!("{path}?{}", params.join("&"))
        }
        None => tail.to_owned(),
    };
    format!("{scheme}://{authority}{tail}")
}

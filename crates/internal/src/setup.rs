//! Which server a tool talks to, and with what credentials: the same
//! arguments, rules and words in the harness and the sync.
//!
//! There is no silent default: a real server is named with `--base-url`
//! (with its key and aggregator id), the built-in mock with `--mock`, and
//! neither is an error that names both. The key comes from a file
//! (`--key-file`, `-` for standard input), from `AGGPAY_SECRET_KEY`, or,
//! with a warning, from `--key` (where every user of the host can read it
//! in the process list).

use std::fmt;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;

use crate::text::excerpt;

/// The environment variable of the base URL.
pub const ENV_BASE_URL: &str = "AGGPAY_BASE_URL";
/// The environment variable of the key.
pub const ENV_KEY: &str = "AGGPAY_SECRET_KEY";
/// The environment variable of the key file.
pub const ENV_KEY_FILE: &str = "AGGPAY_SECRET_KEY_FILE";
/// The environment variable of the aggregator id.
pub const ENV_AGGREGATOR: &str = "AGGPAY_AGGREGATOR_ID";

/// The most a key file's first line is read up to: a key is short, a
/// file given by mistake (a log, a binary) must not be read whole.
const MAX_KEY_FILE: u64 = 64 * 1024;

/// A secret given on the command line or in the environment: `Debug`
/// never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretArg(String);

impl SecretArg {
    /// The secret itself, to send.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SecretArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(crate::text::REDACTED)
    }
}

fn secret_arg(text: &str) -> Result<SecretArg, String> {
    if text.is_empty() {
        return Err("the key is empty".to_owned());
    }
    Ok(SecretArg(text.to_owned()))
}

/// The server arguments of a tool (`#[command(flatten)]`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ServerArgs {
    /// Base URL of the server, its own path prefix included (for example
    /// https://staging.example.com/api). Every path of the API is added
    /// to it, starting with /v1/aggregators/.
    #[allow(
        rustdoc::bare_urls,
        reason = "this comment is the --help text, where a URL shows as written"
    )]
    #[arg(long, env = ENV_BASE_URL, value_name = "URL")]
    pub base_url: Option<String>,
    /// Use the built-in mock server (its own key, aggregator and demo
    /// data) instead of a real one. Without it, --base-url is required.
    #[arg(long)]
    pub mock: bool,
    /// A file whose first line is the access key secret (`-`: standard
    /// input). Keep it readable by its owner only (chmod 600).
    #[arg(long, env = ENV_KEY_FILE, value_name = "PATH")]
    pub key_file: Option<PathBuf>,
    /// The access key secret, never printed. Prefer --key-file or the
    /// environment: a value given here is visible to every user of the
    /// host in the process list.
    #[arg(long, env = ENV_KEY, hide_env_values = true, value_name = "SECRET", value_parser = secret_arg)]
    pub key: Option<SecretArg>,
    /// The aggregator id (agg_…) the key belongs to.
    #[arg(long, env = ENV_AGGREGATOR, value_name = "ID")]
    pub aggregator: Option<String>,
    /// A PEM file of CA certificates to trust instead of the bundled
    /// roots: for a server behind a private CA.
    #[arg(long, env = "AGGPAY_CA_CERT", value_name = "PEM")]
    pub ca_cert: Option<PathBuf>,
    /// Where each value came from, when the tool recorded it
    /// ([`ServerArgs::record_sources`]); unknown counts as the command
    /// line.
    #[arg(skip)]
    sources: Sources,
}

/// Where the values of [`ServerArgs`] came from.
#[derive(Debug, Clone, Copy, Default)]
struct Sources {
    base_url: Origin,
    key: Origin,
    key_file: Origin,
    aggregator: Origin,
}

/// Where one value came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Origin {
    /// Typed on the command line, or not recorded.
    #[default]
    CommandLine,
    /// Read from the environment.
    Env,
}

impl Origin {
    fn of(matches: &clap::ArgMatches, id: &str) -> Self {
        match matches.value_source(id) {
            Some(ValueSource::EnvVariable) => Origin::Env,
            _ => Origin::CommandLine,
        }
    }
}

/// The server a tool talks to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Server {
    /// The built-in mock, asked for with `--mock`.
    Mock,
    /// A real server.
    Remote {
        /// The base URL, normalised (no trailing slash).
        base: String,
        /// The access key secret.
        key: SecretArg,
        /// The aggregator id.
        aggregator: String,
    },
}

/// A setup that can run, and what the user should hear about it.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The server.
    pub server: Server,
    /// Warnings to print (one line each, without the tool's name).
    pub warnings: Vec<String>,
}

/// Parses a tool's command line `argv` (the program's name first): the
/// arguments, and clap's matches, which tell where each value came from
/// ([`ServerArgs::record_sources`]).
///
/// # Errors
///
/// clap's, to print and exit with (`--help`, `--version` included).
pub fn parse<A, I, T>(argv: I) -> Result<(A, clap::ArgMatches), clap::Error>
where
    A: clap::Parser,
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let matches = A::command().try_get_matches_from(argv)?;
    let args = A::from_arg_matches(&matches)?;
    Ok((args, matches))
}

/// Why clap refused a command line, on one line and escaped, for the
/// record a job reads (a report, a JSON summary); `None` for `--help` and
/// `--version`, which are not refusals.
pub fn refusal(e: &clap::Error) -> Option<String> {
    if !e.use_stderr() {
        return None;
    }
    let text = e.to_string();
    let first = text.lines().next().unwrap_or("");
    Some(crate::text::escape_control(first.trim_start_matches("error: ")).into_owned())
}

/// The words a tool prints when no server is named: both ways.
pub const NO_SERVER: &str = "no server given: name one with --base-url URL (or AGGPAY_BASE_URL) and its key and aggregator id, or pass --mock for the built-in mock server";

impl ServerArgs {
    /// Records which values came from the environment (the command line
    /// is warned about, the environment is not).
    pub fn record_sources(&mut self, matches: &clap::ArgMatches) {
        self.sources = Sources {
            base_url: Origin::of(matches, "base_url"),
            key: Origin::of(matches, "key"),
            key_file: Origin::of(matches, "key_file"),
            aggregator: Origin::of(matches, "aggregator"),
        };
    }

    /// The server and its credentials, or why the setup cannot run (one
    /// sentence with the fix). `stdin` is read for `--key-file -`.
    ///
    /// # Errors
    ///
    /// Neither a base URL nor `--mock`; both; a base URL without a key
    /// or an aggregator id; a malformed URL or id; an unreadable key file.
    pub fn resolve(&self, stdin: &mut dyn Read) -> Result<Setup, String> {
        let mut warnings = Vec::new();
        if self.mock {
            return self.resolve_mock(warnings);
        }
        let Some(base) = &self.base_url else {
            return Err(NO_SERVER.to_owned());
        };
        let base = crate::syntax::parse_base_url(base)
            .map_err(|why| format!("the base URL {} {why}", excerpt(base, 80)))?;
        let key = self.key(stdin, &mut warnings)?;
        let aggregator = self.aggregator.clone().ok_or_else(|| {
            format!("the aggregator id is missing: give --aggregator agg_… (or {ENV_AGGREGATOR}) with --base-url")
        })?;
        if !crate::syntax::has_prefix(&aggregator, "agg_") {
            return Err(format!(
                "the aggregator id {} is not an agg_ identifier",
                excerpt(&aggregator, 80)
            ));
        }
        Ok(Setup {
            server: Server::Remote {
                base,
                key,
                aggregator,
            },
            warnings,
        })
    }

    /// `--mock`: refused beside a named server; credentials given in the
    /// environment are ignored (and said so), on the command line refused.
    fn resolve_mock(&self, mut warnings: Vec<String>) -> Result<Setup, String> {
        if self.base_url.is_some() {
            let named = match self.sources.base_url {
                Origin::Env => format!("{ENV_BASE_URL} names a server"),
                Origin::CommandLine => "--base-url names a server".to_owned(),
            };
            return Err(format!(
                "--mock asks for the built-in mock, but {named}: give one of them"
            ));
        }
        let given = [
            (self.key.is_some(), self.sources.key, "--key", ENV_KEY),
            (
                self.key_file.is_some(),
                self.sources.key_file,
                "--key-file",
                ENV_KEY_FILE,
            ),
            (
                self.aggregator.is_some(),
                self.sources.aggregator,
                "--aggregator",
                ENV_AGGREGATOR,
            ),
        ];
        let mut ignored = Vec::new();
        for (present, origin, flag, env) in given {
            match (present, origin) {
                (false, _) => {}
                (true, Origin::CommandLine) => {
                    return Err(format!(
                        "{flag} is for a real server: the built-in mock (--mock) has its own key and aggregator"
                    ));
                }
                (true, Origin::Env) => ignored.push(env),
            }
        }
        if !ignored.is_empty() {
            warnings.push(format!(
                "{} ignored: the built-in mock (--mock) has its own key and aggregator",
                ignored.join(" and ")
            ));
        }
        Ok(Setup {
            server: Server::Mock,
            warnings,
        })
    }

    /// The key, from exactly one place: the command line wins over the
    /// environment; two places on the same level are refused.
    fn key(&self, stdin: &mut dyn Read, warnings: &mut Vec<String>) -> Result<SecretArg, String> {
        let from_line = |o: Origin, present: bool| present && o == Origin::CommandLine;
        let key_line = from_line(self.sources.key, self.key.is_some());
        let file_line = from_line(self.sources.key_file, self.key_file.is_some());
        let use_file = match (key_line, file_line) {
            (true, true) => {
                return Err("give the key once: --key or --key-file, not both".to_owned());
            }
            (true, false) => false,
            (false, true) => true,
            // Both from the environment, or one of them.
            (false, false) => match (&self.key, &self.key_file) {
                (Some(_), Some(_)) => {
                    return Err(format!(
                        "give the key once: {ENV_KEY} and {ENV_KEY_FILE} are both set"
                    ));
                }
                (_, file) => file.is_some(),
            },
        };
        if use_file {
            let path = self.key_file.as_deref().unwrap_or(Path::new("-"));
            let (key, warning) = read_key_file(path, stdin)?;
            warnings.extend(warning);
            return Ok(key);
        }
        match &self.key {
            Some(key) => {
                if key_line {
                    warnings.push(format!(
                        "--key puts the secret in the process list, where every user of this host can read it: use --key-file PATH (or - for standard input) or {ENV_KEY}"
                    ));
                }
                Ok(key.clone())
            }
            None => Err(format!(
                "the access key is missing: give --key-file PATH (or - for standard input), or set {ENV_KEY}"
            )),
        }
    }
}

/// The key in the first line of `path` (`-`: `stdin`), its line end
/// dropped; a warning when others may read the file.
///
/// # Errors
///
/// The file cannot be read, is not text, or its first line is empty.
pub fn read_key_file(
    path: &Path,
    stdin: &mut dyn Read,
) -> Result<(SecretArg, Option<String>), String> {
    let shown = excerpt(&path.display().to_string(), 200);
    let (mut reader, name, warning): (Box<dyn Read + '_>, String, Option<String>) =
        if path == Path::new("-") {
            (Box::new(stdin), "standard input".to_owned(), None)
        } else {
            let file = std::fs::File::open(path)
                .map_err(|e| format!("cannot read the key file {shown}: {e}"))?;
            let warning = readable_by_others(&file, &shown);
            (Box::new(file), format!("the key file {shown}"), warning)
        };
    let mut first = Vec::new();
    std::io::BufReader::new((&mut reader).take(MAX_KEY_FILE))
        .read_until(b'\n', &mut first)
        .map_err(|e| format!("cannot read {name}: {e}"))?;
    if first.last() == Some(&b'\n') {
        first.pop();
        if first.last() == Some(&b'\r') {
            first.pop();
        }
    }
    let key = String::from_utf8(first).map_err(|_| format!("{name} is not UTF-8 text"))?;
    if key.is_empty() {
        return Err(format!(
            "the first line of {name} is empty: it must hold the access key secret"
        ));
    }
    Ok((SecretArg(key), warning))
}

/// A warning with the fix when a regular file may be read by its group or
/// by others.
#[cfg(unix)]
fn readable_by_others(file: &std::fs::File, shown: &str) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = file.metadata().ok()?;
    let mode = meta.permissions().mode() & 0o777;
    (meta.is_file() && mode & 0o077 != 0).then(|| {
        format!(
            "the key file {shown} can be read by other users (mode {mode:04o}): chmod 600 {shown}"
        )
    })
}

#[cfg(not(unix))]
fn readable_by_others(_file: &std::fs::File, _shown: &str) -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, FromArgMatches, Parser};

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        server: ServerArgs,
    }

    fn args(argv: &[&str]) -> ServerArgs {
        let mut all = vec!["tool"];
        all.extend_from_slice(argv);
        let matches = Cli::command().get_matches_from(all);
        let mut cli = Cli::from_arg_matches(&matches).unwrap();
        cli.server.record_sources(&matches);
        cli.server
    }

    fn resolve(argv: &[&str]) -> Result<Setup, String> {
        args(argv).resolve(&mut std::io::empty())
    }

    const REMOTE: [&str; 4] = [
        "--base-url",
        "http://127.0.0.1:9/api/",
        "--aggregator",
        "agg_1",
    ];

    #[test]
    fn no_server_names_both_ways() {
        let err = resolve(&[]).unwrap_err();
        assert!(
            err.contains("--base-url") && err.contains("--mock"),
            "{err}"
        );
        // A key and an aggregator are not a server.
        let err = resolve(&["--key", "k", "--aggregator", "agg_1"]).unwrap_err();
        assert_eq!(err, NO_SERVER);
    }

    #[test]
    fn mock_only_when_asked_and_alone() {
        assert_eq!(resolve(&["--mock"]).unwrap().server, Server::Mock);
        let err = resolve(&["--mock", "--base-url", "http://h"]).unwrap_err();
        assert!(err.contains("--base-url names a server"), "{err}");
        let err = resolve(&["--mock", "--key", "k"]).unwrap_err();
        assert!(err.contains("--key is for a real server"), "{err}");
    }

    #[test]
    fn the_command_line_key_is_taken_with_a_warning() {
        let mut argv = REMOTE.to_vec();
        argv.extend(["--key", "s3cret"]);
        let setup = resolve(&argv).unwrap();
        let Server::Remote { key, base, .. } = &setup.server else {
            panic!("{setup:?}")
        };
        assert_eq!(
            (key.expose(), base.as_str()),
            ("s3cret", "http://127.0.0.1:9/api")
        );
        assert_eq!(setup.warnings.len(), 1);
        assert!(
            setup.warnings[0].contains("--key-file"),
            "{:?}",
            setup.warnings
        );
        assert!(!format!("{setup:?}").contains("s3cret"));
    }

    #[test]
    fn the_key_from_a_file_or_stdin_is_its_first_line() {
        let dir = std::env::temp_dir().join(format!("aggpay-setup-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("key");
        std::fs::write(&path, "s3cret\r\nsecond line\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let (key, warning) = read_key_file(&path, &mut std::io::empty()).unwrap();
        assert_eq!((key.expose(), warning), ("s3cret", None));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            let (_, warning) = read_key_file(&path, &mut std::io::empty()).unwrap();
            let warning = warning.unwrap();
            assert!(
                warning.contains("0644") && warning.contains("chmod 600"),
                "{warning}"
            );
        }
        let (key, _) = read_key_file(Path::new("-"), &mut &b"from-stdin\n"[..]).unwrap();
        assert_eq!(key.expose(), "from-stdin");
        std::fs::write(&path, "\nkey on the second line\n").unwrap();
        let err = read_key_file(&path, &mut std::io::empty()).unwrap_err();
        assert!(
            err.contains("first line") && !err.contains("second"),
            "{err}"
        );
        let err = read_key_file(&dir.join("missing"), &mut std::io::empty()).unwrap_err();
        assert!(err.contains("cannot read the key file"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_key_is_given_once_and_never_missing() {
        let mut argv = REMOTE.to_vec();
        argv.extend(["--key", "a", "--key-file", "-"]);
        assert!(resolve(&argv).unwrap_err().contains("once"));
        let err = resolve(&REMOTE).unwrap_err();
        assert!(err.contains("--key-file") && err.contains(ENV_KEY), "{err}");
        let err = resolve(&["--base-url", "http://h", "--key", "k"]).unwrap_err();
        assert!(err.contains("--aggregator"), "{err}");
        let err =
            resolve(&["--base-url", "http://h", "--key", "k", "--aggregator", "x"]).unwrap_err();
        assert!(err.contains("not an agg_"), "{err}");
        let err = resolve(&[
            "--base-url",
            "ftp://h",
            "--key",
            "k",
            "--aggregator",
            "agg_1",
        ])
        .unwrap_err();
        assert!(err.contains("http://"), "{err}");
    }
}

//! Rotates an access key and stores the new secret safely.
//!
//! ```text
//! cargo run -p aggpay --example rotate_key -- [--force] [--print-secret-on-failure] new-secret.txt [ak_...]
//! ```
//!
//! A rotation kills the old secret at once, so the new one must never be
//! lost. The order is therefore:
//!
//! 1. **Prepare** before rotating: the destination's folder must exist, the
//!    destination must not exist (unless `--force`) and must not be a
//!    symbolic link, and a temporary file is created beside it, exclusively
//!    and with mode 0600 (never through a link). Any failure here stops the
//!    program with nothing rotated.
//! 2. **Rotate**, never retried: if the answer is lost, the keys are listed
//!    to tell whether the rotation happened. If the answer holds the new
//!    secret but does not decode in full, the secret is still stored.
//! 3. **Store**: write, fsync, then move into place (an atomic rename with
//!    `--force`; a link that fails if the destination appeared meanwhile
//!    without it), and fsync the folder.
//! 4. **Try** the new secret once.
//!
//! If storing fails after the rotation, the message says which path failed
//! and that the key was rotated; the secret is printed only with
//! `--print-secret-on-failure`.
//!
//! Exit codes: 0 rotated and stored; 1 failed (the message says whether
//! the key was rotated); 2 bad arguments.

mod common;

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use aggpay::{AccessKeyId, Client, Error, KeyQuery, Secret};
use clap::Parser;

/// Rotate an access key and store its new secret in a file.
#[derive(Debug, Parser)]
struct Args {
    /// Where to store the new secret.
    destination: PathBuf,
    /// The key to rotate (ak_…); by default the first active key that is
    /// not the one in use.
    access_key_id: Option<String>,
    /// Replace the destination if it exists.
    #[arg(long)]
    force: bool,
    /// If the new secret cannot be stored after the rotation, print it on
    /// standard output rather than lose it.
    #[arg(long)]
    print_secret_on_failure: bool,
}

/// The destination, checked, with its temporary file already created.
struct Prepared {
    destination: PathBuf,
    folder: PathBuf,
    temp: PathBuf,
    file: File,
    force: bool,
}

fn prepare(destination: &Path, force: bool) -> Result<Prepared, String> {
    let name = destination
        .file_name()
        .ok_or_else(|| format!("{} names no file", destination.display()))?;
    let folder = match destination.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    match std::fs::metadata(&folder) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(format!("{} is not a folder", folder.display())),
        Err(e) => {
            return Err(format!(
                "the folder {} is not usable: {e}",
                folder.display()
            ));
        }
    }
    match std::fs::symlink_metadata(destination) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(format!(
                "{} is a symbolic link: refusing to write through it",
                destination.display()
            ));
        }
        Ok(m) if !m.is_file() => {
            return Err(format!(
                "{} exists and is not a file",
                destination.display()
            ));
        }
        Ok(_) if !force => {
            return Err(format!(
                "{} exists: pass --force to replace it",
                destination.display()
            ));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot inspect {}: {e}", destination.display())),
    }
    let unique = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let temp = folder.join(format!(
        ".{}.{}.{unique}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let mut options = std::fs::OpenOptions::new();
    // create_new is O_CREAT|O_EXCL: it fails on any existing path, a
    // symbolic link included, so nothing is ever written through one.
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options
        .open(&temp)
        .map_err(|e| format!("cannot create {}: {e}", temp.display()))?;
    Ok(Prepared {
        destination: destination.to_path_buf(),
        folder,
        temp,
        file,
        force,
    })
}

impl Prepared {
    /// Gives up before any rotation: the temporary file goes.
    fn abandon(self) {
        drop(self.file);
        let _ = std::fs::remove_file(&self.temp);
    }

    /// Writes, syncs and moves the secret into place. On failure, says
    /// which path failed and whether the temporary file holds the secret.
    fn store(mut self, secret: &Secret) -> Result<PathBuf, (String, bool)> {
        let written = self
            .file
            .write_all(secret.expose().as_bytes())
            .and_then(|()| self.file.sync_all());
        if let Err(e) = written {
            let _ = std::fs::remove_file(&self.temp);
            return Err((
                format!("writing {} failed: {e}", self.temp.display()),
                false,
            ));
        }
        drop(self.file);
        let placed = if self.force {
            std::fs::rename(&self.temp, &self.destination)
        } else {
            // A hard link never replaces: if the destination appeared since
            // the check, this fails instead of overwriting it.
            std::fs::hard_link(&self.temp, &self.destination)
                .and_then(|()| std::fs::remove_file(&self.temp))
        };
        if let Err(e) = placed {
            return Err((
                format!(
                    "moving {} to {} failed: {e}",
                    self.temp.display(),
                    self.destination.display()
                ),
                true,
            ));
        }
        // The rename is durable only once the folder is synced.
        if let Err(e) = File::open(&self.folder).and_then(|f| f.sync_all()) {
            eprintln!("warning: could not sync {}: {e}", self.folder.display());
        }
        Ok(self.destination)
    }
}

fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    common::exit(run(&args).map_err(Into::into))
}

fn run(args: &Args) -> Result<(), String> {
    let id = match &args.access_key_id {
        Some(arg) => Some(AccessKeyId::parse(arg.as_str()).map_err(|e| e.to_string())?),
        None => None,
    };
    let prepared = prepare(&args.destination, args.force)
        .map_err(|why| format!("{why}; nothing was rotated"))?;
    let (client, _mock) = match common::client() {
        Ok(c) => c,
        Err(e) => {
            prepared.abandon();
            return Err(format!("{e}; nothing was rotated"));
        }
    };
    let id = match id.map_or_else(|| default_key(&client), Ok) {
        Ok(id) => id,
        Err(e) => {
            prepared.abandon();
            return Err(format!("{e}; nothing was rotated"));
        }
    };
    let rotated = client.rotate_access_key(&id);
    let (secret, active) = match rotated {
        Ok(key) => (key.secret, Some(key.is_active)),
        Err(err) => match err.rotated_secret() {
            // The answer was partly broken, but the rotation happened and
            // its secret came back: store it like any other.
            Some(secret) => {
                eprintln!("warning: the rotation answer did not decode in full ({err})");
                (secret.clone(), None)
            }
            None => {
                prepared.abandon();
                return Err(lost_answer(&client, &id, &err));
            }
        },
    };
    let path = match prepared.store(&secret) {
        Ok(path) => path,
        Err((why, in_temp)) => {
            let mut message =
                format!("the key {id} WAS ROTATED, but its new secret could not be stored: {why}");
            if in_temp {
                message.push_str("; the secret is in that temporary file (mode 0600)");
            }
            if args.print_secret_on_failure {
                println!("{}", secret.expose());
                message.push_str("; the new secret was printed on standard output");
            } else if !in_temp {
                message.push_str(
                    "; the secret is lost (rerun with --print-secret-on-failure to print it if storing fails): rotate the key again once the destination is usable",
                );
            }
            return Err(message);
        }
    };
    println!("rotated {id}; new secret stored in {}", path.display());
    try_secret(&client, secret, active)
}

/// The first active key that is not the one in use.
fn default_key(client: &Client) -> Result<AccessKeyId, String> {
    client
        .access_keys(&KeyQuery::new().is_active(true))
        .filter_map(Result::ok)
        .filter(|k| k.name != "primary")
        .find_map(|k| k.access_key_id().cloned())
        .ok_or_else(|| "no other active key to rotate".to_owned())
}

/// What to say when the rotation failed without a secret.
fn lost_answer(client: &Client, id: &AccessKeyId, err: &Error) -> String {
    if !err.is_network() {
        return format!("rotating {id} failed: {err}; nothing was stored");
    }
    let current = client
        .access_keys(&KeyQuery::new())
        .filter_map(Result::ok)
        .find(|k| k.access_key_id() == Some(id));
    let state = match current {
        Some(k) => format!(
            "key {id} last changed at {}: if that is now, the rotation happened and its secret is lost, so rotate again",
            k.updated_at
        ),
        None => format!("key {id} is not listed"),
    };
    format!("the answer to the rotation was lost ({err}); {state}")
}

fn try_secret(client: &Client, secret: Secret, active: Option<bool>) -> Result<(), String> {
    if active == Some(false) {
        println!("the key is inactive, so its new secret is not accepted until it is activated");
        return Ok(());
    }
    let with_new = Client::builder(client.base_url(), client.aggregator_id().clone(), secret)
        .build()
        .map_err(|e| e.to_string())?;
    with_new
        .get_ledger_account()
        .map_err(|e| format!("the stored secret was not accepted: {e}"))?;
    println!("the new secret is accepted");
    Ok(())
}

//! Rotates an access key safely and stores the new secret.
//!
//! ```text
//! cargo run -p aggpay --example rotate_key -- new-secret.txt ak_...
//! ```
//!
//! The secret is written to a temporary file beside the target (mode 0600
//! on Unix), flushed, then renamed into place, so the file always holds a
//! whole secret. The new secret is then tried once. Rotation is never
//! retried: if the answer is lost, the keys are listed to tell whether the
//! rotation happened, because a second rotation would kill a secret nobody
//! has seen.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};

use aggpay::{AccessKeyId, Client, Error, KeyQuery, Secret};

fn store(path: &Path, secret: &Secret) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&tmp)?;
    file.write_all(secret.expose().as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (client, _mock) = common::client()?;
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(
        args.next()
            .unwrap_or_else(|| "rotated-secret.txt".to_owned()),
    );
    let id = match args.next() {
        Some(arg) => AccessKeyId::parse(arg)?,
        // Default: the first active key that is not the one in use.
        None => client
            .access_keys(KeyQuery::new().is_active(true))
            .filter_map(Result::ok)
            .filter(|k| k.name != "primary")
            .find_map(|k| k.access_key_id().cloned())
            .ok_or("no other active key to rotate")?,
    };
    let key = match client.rotate_access_key(&id) {
        Ok(key) => key,
        Err(err @ (Error::Transport(_) | Error::Timeout { .. })) => {
            eprintln!("the answer was lost ({err}); checking whether the key rotated");
            let current = client
                .access_keys(KeyQuery::new())
                .filter_map(Result::ok)
                .find(|k| k.access_key_id() == Some(&id));
            match current {
                Some(k) => eprintln!(
                    "key {id} last changed at {}: compare with the rotation time",
                    k.updated_at
                ),
                None => eprintln!("key {id} is not listed"),
            }
            return Err(err.into());
        }
        Err(err) => return Err(err.into()),
    };
    store(&path, &key.secret)?;
    println!(
        "rotated {id}; new secret stored in {} ({:?})",
        path.display(),
        key.secret
    );
    let with_new = Client::builder(
        client.base_url(),
        client.aggregator_id().as_str(),
        key.secret.clone(),
    )
    .build()?;
    if key.is_active {
        with_new.get_ledger_account()?;
        println!("the new secret is accepted");
    } else {
        println!("the key is inactive, so its new secret is not accepted until it is activated");
    }
    Ok(())
}

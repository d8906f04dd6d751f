//! Where a request connects: the HTTP agents of the client, the harness
//! and the setup check, built with a resolver that looks a host up once
//! in a while rather than once a request.
//!
//! ureq resolves the host of every request, pooled connection or not,
//! and with a timeout set (ours always have one) it does so on a new
//! thread each time: a walk of 10,000 pages started 10,000 threads, and
//! against a name, made 10,000 lookups. Here an address written in the
//! URL is taken as it is, with no thread and no lookup, and a name's
//! addresses are kept for a minute (curl's default DNS cache time) once
//! found: a failed lookup is never kept, and connections already pooled
//! outlive a change of address anyway.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};

/// How long a name's addresses are used before it is looked up again.
const KEEP: Duration = Duration::from_secs(60);

/// An agent with `config` that resolves through [`Cached`].
pub fn agent(config: Config) -> ureq::Agent {
    ureq::Agent::with_parts(config, DefaultConnector::new(), Cached::default())
}

/// ureq's resolver, with addresses written in the URL taken as they are
/// and names' addresses kept for a minute.
#[derive(Debug, Default)]
pub struct Cached {
    /// By `host:port`: when it was looked up, and what was found.
    found: Mutex<HashMap<String, (Instant, ResolvedSocketAddrs)>>,
    lookup: DefaultResolver,
}

impl Resolver for Cached {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let key = uri
            .scheme()
            .zip(uri.authority())
            .and_then(|(scheme, authority)| DefaultResolver::host_and_port(scheme, authority));
        // Anything the lookup itself would refuse, it refuses.
        let Some(key) = key else {
            return self.lookup.resolve(uri, config, timeout);
        };
        if let Ok(literal) = key.parse::<SocketAddr>() {
            let mut addrs = self.empty();
            for wanted in config.ip_family().keep_wanted(std::iter::once(literal)) {
                addrs.push(wanted);
            }
            return if addrs.is_empty() {
                Err(ureq::Error::HostNotFound)
            } else {
                Ok(addrs)
            };
        }
        let now = Instant::now();
        // A poisoned map only lost an entry being written: look up again.
        if let Ok(found) = self.found.lock()
            && let Some((at, addrs)) = found.get(&key)
            && now.duration_since(*at) < KEEP
        {
            return Ok(addrs.clone());
        }
        let addrs = self.lookup.resolve(uri, config, timeout)?;
        if let Ok(mut found) = self.found.lock() {
            found.retain(|_, (at, _)| now.duration_since(*at) < KEEP);
            found.insert(key, (now, addrs.clone()));
        }
        Ok(addrs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ureq::config::IpFamily;

    fn resolve(resolver: &Cached, url: &str, family: IpFamily) -> Result<Vec<SocketAddr>, String> {
        let config = Config::builder().ip_family(family).build();
        let uri: Uri = url.parse().map_err(|e| format!("{e}"))?;
        resolver
            .resolve(&uri, &config, NextTimeout::default())
            .map(|a| a.iter().copied().collect())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn an_address_in_the_url_is_taken_as_it_is_with_its_port() {
        let r = Cached::default();
        let v4 = resolve(&r, "http://127.0.0.1:8080/v1", IpFamily::Any);
        assert_eq!(v4, Ok(vec!["127.0.0.1:8080".parse().unwrap()]));
        let v6 = resolve(&r, "https://[::1]/v1", IpFamily::Any);
        assert_eq!(v6, Ok(vec!["[::1]:443".parse().unwrap()]));
        // Nothing was looked up, so nothing is kept.
        assert!(r.found.lock().unwrap().is_empty());
    }

    #[test]
    fn an_address_of_a_family_not_wanted_is_not_found() {
        let r = Cached::default();
        let found = resolve(&r, "http://[::1]:8080/", IpFamily::Ipv4Only);
        assert_eq!(found, Err(ureq::Error::HostNotFound.to_string()));
    }

    #[test]
    fn a_name_is_looked_up_once_and_kept() {
        let r = Cached::default();
        let first = resolve(&r, "http://localhost:8080/", IpFamily::Any).unwrap();
        assert!(
            first
                .iter()
                .all(|a| a.ip().is_loopback() && a.port() == 8080)
        );
        // What is kept is what is answered: a stale entry planted under
        // the key shows the second answer comes from the map.
        let planted: SocketAddr = "127.0.0.9:8080".parse().unwrap();
        {
            let mut found = r.found.lock().unwrap();
            let entry = found.get_mut("localhost:8080").unwrap();
            entry.1.truncate(0);
            entry.1.push(planted);
        }
        let second = resolve(&r, "http://localhost:8080/", IpFamily::Any).unwrap();
        assert_eq!(second, vec![planted]);
        // Once its time is up, the name is looked up again.
        r.found.lock().unwrap().get_mut("localhost:8080").unwrap().0 -= KEEP;
        let third = resolve(&r, "http://localhost:8080/", IpFamily::Any).unwrap();
        assert_eq!(third, first);
    }
}

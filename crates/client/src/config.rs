//! Client configuration: the builder, TLS trust and proxies.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::client::Client;
use crate::error::Error;
use crate::retry::RetryPolicy;
use crate::transport::{Inner, Settings};
use crate::{AggregatorId, Secret};

/// Default limit of a response body: ten pages of 100 transactions are well
/// under it; anything bigger is a server fault, not data.
pub const DEFAULT_MAX_BODY: u64 = 8 * 1024 * 1024;

/// The environment variable with the base URL ([`ClientBuilder::from_env`]).
pub const ENV_BASE_URL: &str = "AGGPAY_BASE_URL";
/// The environment variable with the aggregator id.
pub const ENV_AGGREGATOR_ID: &str = "AGGPAY_AGGREGATOR_ID";
/// The environment variable with the access key secret.
pub const ENV_SECRET_KEY: &str = "AGGPAY_SECRET_KEY";
/// The environment variable with the path of a PEM file of CA certificates
/// to trust instead of the bundled roots (a staging behind a private CA).
pub const ENV_CA_CERT: &str = "AGGPAY_CA_CERT";

/// Which proxy requests go through.
#[derive(Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProxyConfig {
    /// The proxy of the environment (the default): the first of
    /// `ALL_PROXY`, `HTTPS_PROXY` and `HTTP_PROXY` that is set (lowercase
    /// names too), bypassed for the hosts of `NO_PROXY`. HTTPS goes through
    /// an HTTP `CONNECT` tunnel, so the proxy never sees the key.
    #[default]
    FromEnv,
    /// No proxy, whatever the environment says.
    Direct,
    /// This HTTP proxy, such as `http://proxy.internal:3128` (credentials
    /// in the URL are allowed and never printed).
    Url(Secret),
}

impl fmt::Debug for ProxyConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProxyConfig::FromEnv => f.write_str("FromEnv"),
            ProxyConfig::Direct => f.write_str("Direct"),
            ProxyConfig::Url(url) => f
                .debug_tuple("Url")
                .field(&redact_userinfo(url.expose()))
                .finish(),
        }
    }
}

/// A proxy URL fit to print: `user:password@` becomes `<redacted>@`.
fn redact_userinfo(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => match rest.split_once('@') {
            Some((_, host)) => format!("{scheme}://<redacted>@{host}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// Where CA certificates come from.
#[derive(Clone)]
enum CaSource {
    Pem(Vec<u8>),
    File(PathBuf),
}

impl fmt::Debug for CaSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CaSource::Pem(pem) => write!(f, "Pem({} bytes)", pem.len()),
            CaSource::File(path) => f.debug_tuple("File").field(path).finish(),
        }
    }
}

/// Builds a [`Client`]. Settings are checked by [`ClientBuilder::build`].
///
/// ```no_run
/// use std::time::Duration;
/// use aggpay::{Client, RetryPolicy};
///
/// let client = Client::builder("https://staging.example.com/pay", "agg_123".parse().unwrap(), "secret")
///     .timeout(Duration::from_secs(20))
///     .retry(RetryPolicy::builder().max_attempts(3).build())
///     .ca_certificate_file("/etc/aggpay/staging-ca.pem")
///     .build()?;
/// # Ok::<(), aggpay::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    base_url: String,
    aggregator_id: AggregatorId,
    secret: Secret,
    timeout_connect: Duration,
    timeout: Duration,
    max_body: u64,
    retry: RetryPolicy,
    max_pages: u64,
    compression: bool,
    rate_limit: Option<f64>,
    ca: Vec<CaSource>,
    #[cfg(feature = "platform-verifier")]
    platform_verifier: bool,
    proxy: ProxyConfig,
}

impl Client {
    /// Starts building a client. `base_url` includes the service's own path
    /// prefix; a trailing slash or none both work.
    pub fn builder(
        base_url: impl Into<String>,
        aggregator_id: AggregatorId,
        secret_key: impl Into<Secret>,
    ) -> ClientBuilder {
        ClientBuilder::new(base_url, aggregator_id, secret_key)
    }

    /// A client configured from the environment, with default settings
    /// otherwise: see [`ClientBuilder::from_env`].
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) naming the first missing variable, or the errors of
    /// [`ClientBuilder::build`].
    pub fn from_env() -> Result<Client, Error> {
        ClientBuilder::from_env()?.build()
    }
}

impl ClientBuilder {
    pub(crate) fn new(
        base_url: impl Into<String>,
        aggregator_id: AggregatorId,
        secret: impl Into<Secret>,
    ) -> Self {
        Self {
            base_url: base_url.into(),
            aggregator_id,
            secret: secret.into(),
            timeout_connect: Duration::from_secs(10),
            timeout: Duration::from_secs(30),
            max_body: DEFAULT_MAX_BODY,
            retry: RetryPolicy::default(),
            max_pages: 1_000_000,
            compression: true,
            rate_limit: None,
            ca: Vec::new(),
            #[cfg(feature = "platform-verifier")]
            platform_verifier: false,
            proxy: ProxyConfig::FromEnv,
        }
    }

    /// A builder from the environment: [`ENV_BASE_URL`],
    /// [`ENV_AGGREGATOR_ID`] and [`ENV_SECRET_KEY`] (required), and
    /// [`ENV_CA_CERT`] (optional). Proxies come from the environment by
    /// default ([`ProxyConfig::FromEnv`]).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) naming the first missing variable.
    pub fn from_env() -> Result<Self, Error> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    pub(crate) fn from_vars(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, Error> {
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let var = |name: &str| {
            get(name)
                .ok_or_else(|| Error::config(format!("environment variable {name} is not set")))
        };
        let base = var(ENV_BASE_URL)?;
        let aggregator = var(ENV_AGGREGATOR_ID)?;
        let secret = Secret::new(var(ENV_SECRET_KEY)?);
        let aggregator = AggregatorId::parse(aggregator)
            .map_err(|e| Error::config(format!("{ENV_AGGREGATOR_ID}: {}", e.kind())))?;
        let mut builder = Self::new(base, aggregator, secret);
        if let Some(path) = get(ENV_CA_CERT) {
            builder = builder.ca_certificate_file(path);
        }
        Ok(builder)
    }

    /// At most this many requests a second, the client and its clones
    /// together, retries included (default: no limit). From one an hour
    /// to a million a second; [`build`](Self::build) refuses other values.
    pub fn rate_limit(mut self, requests_per_second: f64) -> Self {
        self.rate_limit = Some(requests_per_second);
        self
    }

    /// Time allowed to open a connection, TLS included (default 10 s).
    pub fn timeout_connect(mut self, timeout: Duration) -> Self {
        self.timeout_connect = timeout;
        self
    }

    /// Time allowed for one attempt of a call, from sending to the last
    /// body byte (default 30 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Largest response body accepted (default [`DEFAULT_MAX_BODY`]).
    pub fn max_body_size(mut self, bytes: u64) -> Self {
        self.max_body = bytes;
        self
    }

    /// Retry policy for idempotent requests (default: [`RetryPolicy::default`]).
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Most pages one pagination walk fetches before it reports the server
    /// as endless (default 1,000,000).
    pub fn max_pages(mut self, pages: u64) -> Self {
        self.max_pages = pages.max(1);
        self
    }

    /// Whether to ask for compressed bodies (default: yes). With it, every
    /// request says `Accept-Encoding: gzip, deflate`; without it,
    /// `Accept-Encoding: identity`. Either way a coded body is decoded.
    /// A page of transactions shrinks several times under gzip, which
    /// pays wherever the network is slower than the client inflates; on
    /// loopback or a fast LAN, a server that compresses costs the client
    /// the CPU to inflate every row, and turning this off saves that.
    pub fn compression(mut self, enabled: bool) -> Self {
        self.compression = enabled;
        self
    }

    /// Trusts the CA certificates of this PEM text (one or more
    /// `CERTIFICATE` blocks) instead of the bundled Mozilla roots, as
    /// `curl --cacert` does: for a staging server behind a private CA.
    /// Repeatable; checked by [`ClientBuilder::build`].
    pub fn ca_certificates_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.ca.push(CaSource::Pem(pem.into()));
        self
    }

    /// Like [`ClientBuilder::ca_certificates_pem`], from a file read by
    /// [`ClientBuilder::build`].
    pub fn ca_certificate_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.ca.push(CaSource::File(path.into()));
        self
    }

    /// Verifies certificates with the operating system's verifier and
    /// trust store instead of the bundled Mozilla roots: for a private CA
    /// installed system-wide. Needs the `platform-verifier` feature.
    #[cfg(feature = "platform-verifier")]
    pub fn platform_verifier(mut self, enabled: bool) -> Self {
        self.platform_verifier = enabled;
        self
    }

    /// Which proxy to use (default [`ProxyConfig::FromEnv`]).
    pub fn proxy(mut self, proxy: ProxyConfig) -> Self {
        self.proxy = proxy;
        self
    }

    /// Validates the configuration and builds the client.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) for a base URL that
    /// is not an absolute `http` or `https` URL without a query, a fragment
    /// or credentials, a zero timeout, a rate limit out of range, a CA file
    /// that cannot be read or holds no certificate, or a proxy URL that is
    /// not one.
    pub fn build(self) -> Result<Client, Error> {
        let base_url = crate::syntax::parse_base_url(&self.base_url).map_err(|why| {
            Error::config(format!(
                "the base url `{}` {why}",
                crate::text::excerpt(&self.base_url, 80)
            ))
        })?;
        if self.timeout.is_zero() || self.timeout_connect.is_zero() {
            return Err(Error::config("timeouts must be above zero"));
        }
        let min_interval = match self.rate_limit {
            None => None,
            Some(r) if crate::cli::RATE_LIMIT_RANGE.contains(&r) => {
                Some(Duration::from_secs_f64(1.0 / r))
            }
            Some(r) => {
                return Err(Error::config(format!(
                    "a rate limit of {r} requests per second is out of range ({:.6} to {})",
                    crate::cli::RATE_LIMIT_RANGE.start(),
                    crate::cli::RATE_LIMIT_RANGE.end()
                )));
            }
        };
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            // The API never redirects; following one would send the key to
            // wherever the Location header points.
            .max_redirects(0)
            .timeout_connect(Some(self.timeout_connect))
            .timeout_global(Some(self.timeout))
            .user_agent(concat!(
                "aggpay/",
                env!("CARGO_PKG_VERSION"),
                " (rust; ureq)"
            ))
            .tls_config(self.tls()?)
            .proxy(self.proxy_setting()?)
            .build();
        let agent = aggpay_internal::resolve::agent(config);
        let settings = Settings {
            base_url,
            aggregator_id: self.aggregator_id,
            secret: self.secret,
            timeout_connect: self.timeout_connect,
            timeout: self.timeout,
            max_body: self.max_body,
            retry: self.retry,
            max_pages: self.max_pages,
            accept_encoding: if self.compression {
                aggpay_internal::coding::ACCEPTED
            } else {
                "identity"
            },
            min_interval,
        };
        Ok(Client::from_inner(Inner::new(agent, settings)))
    }

    fn tls(&self) -> Result<ureq::tls::TlsConfig, Error> {
        let mut tls = ureq::tls::TlsConfig::builder();
        let mut roots = Vec::new();
        for source in &self.ca {
            roots.extend(read_ca(source)?);
        }
        #[cfg(feature = "platform-verifier")]
        if self.platform_verifier {
            if !roots.is_empty() {
                return Err(Error::config(
                    "choose CA certificates or the platform verifier, not both",
                ));
            }
            tls = tls.root_certs(ureq::tls::RootCerts::PlatformVerifier);
        }
        if !roots.is_empty() {
            tls = tls.root_certs(ureq::tls::RootCerts::new_with_certs(&roots));
        }
        Ok(tls.build())
    }

    fn proxy_setting(&self) -> Result<Option<ureq::Proxy>, Error> {
        match &self.proxy {
            ProxyConfig::FromEnv => Ok(ureq::Proxy::try_from_env()),
            ProxyConfig::Direct => Ok(None),
            ProxyConfig::Url(url) => ureq::Proxy::new(url.expose()).map(Some).map_err(|e| {
                Error::config(format!(
                    "the proxy `{}` is not usable: {e}",
                    crate::text::excerpt(&redact_userinfo(url.expose()), 80)
                ))
            }),
        }
    }
}

/// The certificates of one CA source; an error names the file.
fn read_ca(source: &CaSource) -> Result<Vec<ureq::tls::Certificate<'static>>, Error> {
    match source {
        CaSource::Pem(pem) => aggpay_internal::http::ca_certificates(pem, "the CA PEM"),
        CaSource::File(path) => aggpay_internal::http::ca_file(path),
    }
    .map_err(|e| Error::config(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limits_are_range_checked() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e-300, 1e20] {
            let err = ClientBuilder::new("http://x", "agg_1".parse().unwrap(), "k")
                .rate_limit(bad)
                .build()
                .unwrap_err();
            assert!(
                matches!(err.kind(), crate::ErrorKind::Config(_)),
                "{bad}: {err:?}"
            );
        }
        let client = ClientBuilder::new("http://x", "agg_1".parse().unwrap(), "k")
            .rate_limit(50.0)
            .build()
            .unwrap();
        assert_eq!(
            client.inner.settings.min_interval,
            Some(Duration::from_millis(20))
        );
    }

    /// The builder refuses what `syntax::parse_base_url` refuses (its own
    /// tests hold the grammar), as a configuration error, and a zero
    /// timeout.
    #[test]
    fn a_bad_base_url_or_timeout_is_a_config_error() {
        let build = |url: &str| ClientBuilder::new(url, "agg_1".parse().unwrap(), "k").build();
        assert!(build("https://x.example/api/").is_ok());
        for bad in ["ftp://x", "ñ"] {
            let err = build(bad).unwrap_err();
            assert!(
                matches!(err.kind(), crate::ErrorKind::Config(_)),
                "{bad}: {err:?}"
            );
        }
        assert!(matches!(
            ClientBuilder::new("http://x", "agg_1".parse().unwrap(), "k")
                .timeout(Duration::ZERO)
                .build()
                .map_err(Error::into_kind),
            Err(crate::ErrorKind::Config(_))
        ));
    }

    #[test]
    fn ca_sources_are_checked_and_named() {
        let err = ClientBuilder::new("https://x", "agg_1".parse().unwrap(), "k")
            .ca_certificate_file("/nonexistent/ca.pem")
            .build()
            .unwrap_err();
        assert!(err.to_string().contains("/nonexistent/ca.pem"), "{err}");
        let err = ClientBuilder::new("https://x", "agg_1".parse().unwrap(), "k")
            .ca_certificates_pem("not a certificate")
            .build()
            .unwrap_err();
        assert!(err.to_string().contains("no PEM certificate"), "{err}");
    }

    #[test]
    fn from_env_reads_the_ca_and_names_what_is_missing() {
        let vars = |present: &'static [&'static str]| {
            move |name: &str| present.contains(&name).then(|| format!("{name}_value"))
        };
        let err = ClientBuilder::from_vars(vars(&[ENV_BASE_URL, ENV_AGGREGATOR_ID])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid configuration: environment variable AGGPAY_SECRET_KEY is not set"
        );
        let builder = ClientBuilder::from_vars(|name| {
            Some(match name {
                ENV_BASE_URL => "http://127.0.0.1:9/api/".to_owned(),
                ENV_AGGREGATOR_ID => "agg_1".to_owned(),
                ENV_CA_CERT => "/nowhere/ca.pem".to_owned(),
                _ => "k".to_owned(),
            })
        })
        .unwrap();
        let err = builder.build().unwrap_err();
        assert!(err.to_string().contains("/nowhere/ca.pem"), "{err}");
    }

    #[test]
    fn debug_hides_secrets_and_proxy_credentials() {
        let b = ClientBuilder::new("http://x", "agg_1".parse().unwrap(), "super-secret")
            .proxy(ProxyConfig::Url(Secret::new(
                "http://user:hunter2@proxy:3128",
            )))
            .ca_certificates_pem("-----BEGIN CERTIFICATE-----");
        let text = format!("{b:?} {b:#?}");
        assert!(!text.contains("super-secret"), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains("proxy:3128"), "{text}");
        let err = ClientBuilder::new("http://x", "agg_1".parse().unwrap(), "k")
            .proxy(ProxyConfig::Url(Secret::new("gopher://u:hunter2@")))
            .build()
            .unwrap_err();
        assert!(!err.to_string().contains("hunter2"), "{err}");
    }
}

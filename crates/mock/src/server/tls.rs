//! The TLS acceptor of a server with an identity.

use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

use super::{Cause, Error};
use crate::config::TlsIdentity;

/// A TLS acceptor for `identity` (rustls with ring).
pub(super) fn acceptor(identity: &TlsIdentity) -> Result<TlsAcceptor, Error> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&identity.cert_pem)
        .collect::<Result<_, _>>()
        .map_err(tls("the certificate PEM"))?;
    if certs.is_empty() {
        return Err(tls("the certificate PEM")("it holds no certificate"));
    }
    let key = PrivateKeyDer::from_pem_slice(&identity.key_pem).map_err(tls("the key PEM"))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(tls("the protocol versions"))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(tls("the certificate and key"))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// The error of `what` with its cause.
fn tls<E: Into<Box<dyn std::error::Error + Send + Sync>>>(
    what: &'static str,
) -> impl Fn(E) -> Error {
    move |e| Error::Tls {
        what,
        source: Cause::new(e),
    }
}

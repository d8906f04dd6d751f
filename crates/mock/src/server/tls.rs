//! The TLS acceptor of a server with an identity.

use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

use super::Error;
use crate::config::TlsIdentity;

/// A TLS acceptor for `identity` (rustls with ring).
pub(super) fn acceptor(identity: &TlsIdentity) -> Result<TlsAcceptor, Error> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&identity.cert_pem)
        .collect::<Result<_, _>>()
        .map_err(|e| Error::Tls(format!("the certificate PEM: {e}")))?;
    if certs.is_empty() {
        return Err(Error::Tls(
            "the certificate PEM holds no certificate".into(),
        ));
    }
    let key = PrivateKeyDer::from_pem_slice(&identity.key_pem)
        .map_err(|e| Error::Tls(format!("the key PEM: {e}")))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Tls(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| Error::Tls(format!("the certificate and key: {e}")))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

//! A certificate authority made for one test run.

use std::path::Path;

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

/// A CA whose certificate no system trusts: a server it signs can be
/// reached only by a client told to trust it.
pub struct TestCa {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

/// A server certificate chain and its private key, in PEM.
#[derive(Debug, Clone)]
pub struct Identity {
    /// The server certificate (leaf first).
    pub cert_pem: String,
    /// Its private key.
    pub key_pem: String,
}

impl std::fmt::Debug for TestCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestCa").finish_non_exhaustive()
    }
}

impl TestCa {
    /// A new CA. Panics only if the crypto library fails, a test bug.
    pub fn new(name: &str) -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("ca params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, name);
        params.distinguished_name = dn;
        let key = KeyPair::generate().expect("ca key");
        let cert = params.self_signed(&key).expect("ca certificate");
        Self {
            pem: cert.pem(),
            issuer: Issuer::new(params, key),
        }
    }

    /// The CA certificate in PEM: what a client is told to trust.
    pub fn pem(&self) -> &str {
        &self.pem
    }

    /// Writes the CA certificate to `path`.
    pub fn write_pem(&self, path: &Path) {
        std::fs::write(path, &self.pem).expect("write the CA PEM");
    }

    /// A server identity for these names (`localhost`, `127.0.0.1`…).
    pub fn issue(&self, names: &[&str]) -> Identity {
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let params = CertificateParams::new(names).expect("server params");
        let key = KeyPair::generate().expect("server key");
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("server certificate");
        Identity {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        }
    }
}

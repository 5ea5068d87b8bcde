//! TLS client configurations (rustls with the `ring` provider), shared by
//! https webhooks ([`crate::http`]) and PostgreSQL connections
//! ([`crate::store::pg`]).
//!
//! Three levels of checking, named after what they verify:
//! - [`Verify::Full`]: the server's chain up to a trusted root **and** its
//!   name (DNS name or IP address SAN) — webhooks always, PostgreSQL
//!   `sslmode=verify-full`;
//! - [`Verify::ChainOnly`]: the chain, not the name — PostgreSQL
//!   `sslmode=verify-ca`;
//! - [`Verify::EncryptOnly`]: no certificate check at all (the handshake
//!   signature is still checked against the presented key, so the session
//!   is encrypted to whoever holds that key) — PostgreSQL `sslmode=require`
//!   and `prefer` without `sslrootcert`, as libpq does. Never used for
//!   webhooks.
//!
//! Trusted roots are Mozilla's (the `webpki-roots` crate, compiled in) or
//! the certificates of a PEM file.

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// The crypto provider every configuration uses (`ring`).
pub fn provider() -> Arc<CryptoProvider> {
    static P: OnceLock<Arc<CryptoProvider>> = OnceLock::new();
    P.get_or_init(|| Arc::new(rustls::crypto::ring::default_provider()))
        .clone()
}

/// Mozilla's root certificates (`webpki-roots`).
pub fn mozilla_roots() -> RootCertStore {
    RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    }
}

/// The certificates of a PEM file (every `CERTIFICATE` block; other blocks
/// are ignored) as trusted roots. A file without any certificate, or with
/// one that is not a usable CA certificate, is an error.
pub fn load_roots(path: &Path) -> Result<RootCertStore, String> {
    let shown = path.display();
    let bytes = std::fs::read(path).map_err(|e| format!("CA file {shown}: {e}"))?;
    let mut roots = RootCertStore::empty();
    let mut n = 0usize;
    for cert in CertificateDer::pem_slice_iter(&bytes) {
        let cert = cert.map_err(|e| format!("CA file {shown}: not valid PEM: {e}"))?;
        roots
            .add(cert)
            .map_err(|e| format!("CA file {shown}: certificate {}: {e}", n + 1))?;
        n += 1;
    }
    if n == 0 {
        return Err(format!("CA file {shown}: no PEM CERTIFICATE block found"));
    }
    Ok(roots)
}

/// What a client configuration verifies (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    /// Chain and server name.
    Full,
    /// Chain only.
    ChainOnly,
    /// Nothing (encryption only).
    EncryptOnly,
}

/// A client configuration verifying `verify` against `roots` (ignored for
/// [`Verify::EncryptOnly`]), advertising `alpn` protocols.
pub fn client_config(
    verify: Verify,
    roots: RootCertStore,
    alpn: &[&[u8]],
) -> Result<ClientConfig, String> {
    let builder = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS configuration: {e}"))?;
    let mut config = match verify {
        Verify::Full => builder.with_root_certificates(roots).with_no_client_auth(),
        Verify::ChainOnly => {
            let inner = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider())
                .build()
                .map_err(|e| format!("TLS configuration: {e}"))?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(ChainOnly { inner }))
                .with_no_client_auth()
        }
        Verify::EncryptOnly => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(EncryptOnly {
                algorithms: provider().signature_verification_algorithms,
            }))
            .with_no_client_auth(),
    };
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(config)
}

/// Whether a rustls error is a failed certificate check (as opposed to a
/// network or protocol failure during the handshake).
pub fn is_certificate_error(e: &rustls::Error) -> bool {
    matches!(
        e,
        rustls::Error::InvalidCertificate(_)
            | rustls::Error::InvalidCertRevocationList(_)
            | rustls::Error::NoCertificatesPresented
    )
}

/// `verify-ca`: the WebPKI verifier with the name check dropped. webpki
/// checks the chain before the name, so a name mismatch means the chain
/// itself was accepted.
#[derive(Debug)]
struct ChainOnly {
    inner: Arc<WebPkiServerVerifier>,
}

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.inner.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// `sslmode=require` without a root certificate: any certificate is
/// accepted; the handshake signatures are still verified with its key.
#[derive(Debug)]
struct EncryptOnly {
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for EncryptOnly {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_files_are_checked() {
        let d = std::env::temp_dir().join(crate::ids::random_id("tcc-tls-"));
        std::fs::create_dir_all(&d).unwrap();
        let missing = load_roots(&d.join("none.pem")).unwrap_err();
        assert!(missing.contains("none.pem"), "{missing}");
        let empty = d.join("empty.pem");
        std::fs::write(&empty, "no certificates here\n").unwrap();
        let e = load_roots(&empty).unwrap_err();
        assert!(e.contains("no PEM CERTIFICATE"), "{e}");
        let junk = d.join("junk.pem");
        std::fs::write(
            &junk,
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        assert!(load_roots(&junk).is_err());
        assert!(mozilla_roots().len() > 100);
        for v in [Verify::Full, Verify::ChainOnly, Verify::EncryptOnly] {
            let c = client_config(v, mozilla_roots(), &[b"http/1.1"]).unwrap();
            assert_eq!(c.alpn_protocols, vec![b"http/1.1".to_vec()]);
        }
        let _ = std::fs::remove_dir_all(&d);
    }
}

//! TLS for every HTTPS connection mcp-budget makes (servers, sign-in, OTLP collectors): rustls
//! with ring as the process's crypto provider, and the system's trust store (reqwest's
//! rustls-platform-verifier) with `--ca-cert`'s roots added where a command takes them.

/// A reqwest client builder with the provider in place. On a machine whose store holds no
/// certificate (a slim container), the platform verifier would fail the client's build, plain
/// http included: there the client trusts only the roots a command adds (`--ca-cert`).
pub fn client() -> reqwest::ClientBuilder {
    ready();
    match store_is_empty() {
        true => reqwest::Client::builder().tls_certs_only(Vec::new()),
        false => reqwest::Client::builder(),
    }
}

/// [`client`]'s blocking twin (the OTLP exporters'), with the same roots.
#[cfg(feature = "telemetry")]
pub fn blocking_client() -> reqwest::blocking::ClientBuilder {
    ready();
    match store_is_empty() {
        true => reqwest::blocking::Client::builder().tls_certs_only(Vec::new()),
        false => reqwest::blocking::Client::builder(),
    }
}

/// Whether the system's certificate store is empty (read once a process).
fn store_is_empty() -> bool {
    static EMPTY: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *EMPTY.get_or_init(|| rustls_native_certs::load_native_certs().certs.is_empty())
}

/// Make ring the process's rustls provider (once; a provider already in place is kept). Every
/// client reqwest builds, rmcp's sign-in client among them, takes it.
pub fn ready() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_client_builds_with_the_provider_in_place() {
        super::client().build().expect("a TLS client builds");
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
    }
}

//! TLS for every HTTPS connection mcp-budget makes (servers, sign-in, OTLP collectors): rustls
//! with ring as the process's crypto provider, and the system's trust store (reqwest's
//! rustls-platform-verifier) with `--ca-cert`'s roots added where a command takes them.

/// A reqwest client builder with the provider in place.
pub fn client() -> reqwest::ClientBuilder {
    ready();
    reqwest::Client::builder()
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

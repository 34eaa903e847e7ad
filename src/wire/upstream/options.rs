//! The settings of a session: size limit, recording, trusted roots, who answers the server's
//! requests, and what a stdio server does not inherit.

use std::sync::Arc;

use super::Downstream;

/// Which era of the protocol a session speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// The `initialize` handshake (2024-11-05 to 2025-11-25).
    Legacy,
    /// 2026-07-28: `server/discover`, no handshake, every request self-contained.
    Modern,
    /// `server/discover` first, `initialize` when the server is legacy.
    #[default]
    Auto,
    /// `initialize` first, 2026-07-28 when the server refuses the handshake (-32022): the
    /// proxy's way to its upstream, since the handshake era carries what the proxy passes on
    /// (the server's requests to its client, notifications without a subscription stream).
    HandshakeFirst,
}

/// The newest revision of the 2026 era, and the handshake era's newest.
pub const MODERN_VERSION: &str = "2026-07-28";

impl std::str::FromStr for Protocol {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "legacy" => Ok(Protocol::Legacy),
            "2026-07-28" | "modern" => Ok(Protocol::Modern),
            "auto" => Ok(Protocol::Auto),
            "handshake-first" => Ok(Protocol::HandshakeFirst),
            other => Err(format!(
                "unknown protocol `{other}`: legacy, 2026-07-28, auto or handshake-first"
            )),
        }
    }
}

/// Settings of a session.
#[derive(Clone)]
pub struct SessionOptions {
    /// Largest single message kept; larger ones are dropped and reported.
    pub max_response_bytes: usize,
    /// Keep the whole transcript (for recording).
    pub record: bool,
    /// Certificate authorities trusted for https upstreams besides the built-in web roots.
    pub extra_roots: Vec<reqwest::Certificate>,
    /// Answers the server's sampling, elicitation and roots requests (the proxy's client);
    /// without one the session offers the server none of them.
    pub downstream: Option<Arc<dyn Downstream>>,
    /// Variables removed from the environment a stdio server inherits (the proxy's
    /// `--bearer-token-env`); the server's own configured `env` still applies.
    pub env_remove: Vec<String>,
    /// The environment a stdio server starts with (`--clean-env`: the SDKs' default set).
    pub server_env: crate::config::ServerEnv,
    /// The era to speak (`--protocol`).
    pub protocol: Protocol,
    /// The flag that sets [`Self::protocol`] on this command (named in errors).
    pub protocol_flag: &'static str,
    /// How long the server may take to answer its first request (`--timeout`): what
    /// `--protocol auto` waits for the answer to `server/discover`.
    pub start_timeout: std::time::Duration,
    /// Where `mcp-budget login` keeps sign-ins (a remote server without a header of its own
    /// gets its token from there); `None`: none are used.
    pub auth: Option<crate::wire::auth::AuthDir>,
    /// The kept sign-in this session's token came from (set by `connect`): the HTTP bridge
    /// refreshes it when it is due and when the server refuses it.
    pub signed_in: Option<crate::wire::auth::InUse>,
    /// What `mcp-budget login` is given for this server (its name, or the URL of one from the
    /// command line), named when the server asks for a sign-in or more scope.
    pub login_name: Option<String>,
}

impl std::fmt::Debug for SessionOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionOptions")
            .field("max_response_bytes", &self.max_response_bytes)
            .field("record", &self.record)
            .field("extra_roots", &self.extra_roots.len())
            .field("downstream", &self.downstream.is_some())
            .field("env_remove", &self.env_remove)
            .field("server_env", &self.server_env)
            .field("protocol", &self.protocol)
            .field("start_timeout", &self.start_timeout)
            .field("auth", &self.auth.is_some())
            .field("signed_in", &self.signed_in.is_some())
            .field("login_name", &self.login_name)
            .finish()
    }
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            max_response_bytes: 256 * 1024 * 1024,
            record: false,
            extra_roots: Vec::new(),
            downstream: None,
            env_remove: Vec::new(),
            server_env: crate::config::ServerEnv::Inherited,
            protocol: Protocol::Auto,
            protocol_flag: "--protocol",
            start_timeout: std::time::Duration::from_secs(60),
            auth: None,
            signed_in: None,
            login_name: None,
        }
    }
}

//! What can go wrong talking to a server. Messages read after "failed to ...".

/// A failure of one server's session or of one request on it.
#[derive(Debug, thiserror::Error)]
pub enum UpstreamError {
    #[error("failed to start `{command}`: {message}")]
    Spawn { command: String, message: String },
    #[error("failed to initialize: {message}")]
    Initialize { message: String },
    /// `initialize` was answered "unsupported protocol version" (-32022): the server has no
    /// handshake era, only the 2026-07-28 one.
    #[error("failed to initialize: {message}")]
    HandshakeRefused { message: String },
    /// The server's stream ended on the `server/discover` that `--protocol auto` sends first
    /// (a process that exits on a method it does not know): it can be started again and spoken
    /// to in the handshake era.
    #[error("failed to initialize: {message}")]
    EndedOnDiscover { message: String },
    #[error("`{method}` failed: {message}")]
    Request { method: String, message: String },
    #[error("`{method}` returned JSON-RPC error {code}: {message}")]
    Rpc {
        method: String,
        code: i64,
        message: String,
        /// The error's `data`, as sent (secrets redacted).
        data: Option<Box<serde_json::Value>>,
    },
}

impl UpstreamError {
    /// The same error with every secret `redactor` knows (and URL credentials) replaced.
    pub fn redacted(self, redactor: &crate::config::Redactor) -> UpstreamError {
        let r = |s: String| redactor.redact(&s);
        match self {
            UpstreamError::Spawn { command, message } => UpstreamError::Spawn {
                command: r(command),
                message: r(message),
            },
            UpstreamError::Initialize { message } => UpstreamError::Initialize {
                message: r(message),
            },
            UpstreamError::HandshakeRefused { message } => UpstreamError::HandshakeRefused {
                message: r(message),
            },
            UpstreamError::EndedOnDiscover { message } => UpstreamError::EndedOnDiscover {
                message: r(message),
            },
            UpstreamError::Request { method, message } => UpstreamError::Request {
                method,
                message: r(message),
            },
            UpstreamError::Rpc {
                method,
                code,
                message,
                data,
            } => UpstreamError::Rpc {
                method,
                code,
                message: r(message),
                data: data.map(|d| {
                    let text = r(d.to_string());
                    Box::new(serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text)))
                }),
            },
        }
    }
}

//! What can go wrong in the lab, each naming the client, adapter or step that failed.

/// A lab failure.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error("adapter {origin}: {message}")]
    Adapter { origin: String, message: String },
    #[error("could not keep the lab on loopback ({step}): {source}; run as root or where user namespaces are allowed, or pass --no-isolation to rely on the adapters' URL checks alone")]
    Isolation {
        step: String,
        #[source]
        source: std::io::Error,
    },
    #[error("lab run of {client}: {message}")]
    Run { client: String, message: String },
    #[error("lab-tap: {message}")]
    Tap { message: String },
}

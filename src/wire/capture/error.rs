//! What can go wrong writing or reading a recording. Messages read after "failed to ...".

use std::path::PathBuf;

/// A recording that could not be written, or read back.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("failed to write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to parse {path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("no server `{name}` in the recording {path} (recorded: {known})")]
    UnknownServer {
        name: String,
        path: PathBuf,
        known: String,
    },
    #[error("the recording {path} holds {count} servers ({known}): name the one to serve")]
    ServerRequired {
        path: PathBuf,
        count: usize,
        known: String,
    },
    #[error("the recording {path} holds no server")]
    Empty { path: PathBuf },
    #[error("failed to write a probe for `{server}` into probes.toml: {message}")]
    Probe { server: String, message: String },
}

//! The byte stream to a server and what keeps the server going while a session lasts: a child
//! process's pipes, a bridge to an HTTP endpoint, or an in-memory pipe to a server that runs in
//! this process (the embedded demo, a recording's replay).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use tokio::io::{AsyncRead, AsyncWrite, DuplexStream};
use tokio::task::JoinHandle;

use super::http::{self, Remote};
use super::process::{ChildEnv, ChildGuard};
use super::{SessionOptions, UpstreamError};
use crate::config::Redactor;

/// Buffer of the in-memory pipe to a server in this process.
const PIPE_BYTES: usize = 256 * 1024;

/// A server's output and input, ready for a session (see [`super::Session::connect_io`]).
pub struct ServerIo {
    /// What the server writes.
    pub(crate) server_out: Box<dyn AsyncRead + Send + Unpin>,
    /// What the server reads.
    pub(crate) server_in: Box<dyn AsyncWrite + Send + Unpin>,
    /// The server process, stopped when the session closes.
    pub(crate) child: Option<ChildGuard>,
    /// Tasks behind the stream (a bridge, an in-process server), aborted when the session closes.
    pub(crate) tasks: Vec<JoinHandle<()>>,
    /// When reaching the server began: the session's `initialize` latency counts from here.
    pub(crate) started: Instant,
    /// Why a bridge ended the stream itself (an HTTP endpoint that could not be reached while
    /// asking `server/discover`): what the handshake's failure then says.
    pub(crate) ended: Option<http::Ended>,
}

impl ServerIo {
    /// Any pair of byte streams: `server_out` carries what the server writes, `server_in` what
    /// it reads.
    pub fn new(
        server_out: impl AsyncRead + Send + Unpin + 'static,
        server_in: impl AsyncWrite + Send + Unpin + 'static,
    ) -> ServerIo {
        ServerIo {
            server_out: Box::new(server_out),
            server_in: Box::new(server_in),
            child: None,
            tasks: Vec::new(),
            started: Instant::now(),
            ended: None,
        }
    }

    /// An in-memory pipe to a server that runs in this process: the session's end, and the end
    /// the server is to serve on (its task goes to [`ServerIo::with_task`]).
    pub fn pipe() -> (ServerIo, DuplexStream) {
        let started = Instant::now();
        let (client_end, server_end) = tokio::io::duplex(PIPE_BYTES);
        let (out, inp) = tokio::io::split(client_end);
        let io = ServerIo {
            started,
            ..ServerIo::new(out, inp)
        };
        (io, server_end)
    }

    /// The same stream, with a task that is aborted when the session closes.
    pub fn with_task(mut self, task: JoinHandle<()>) -> ServerIo {
        self.tasks.push(task);
        self
    }

    /// Start a stdio server: a child process in its own process group, in the environment of
    /// `base` (its own `env` still applies).
    pub async fn spawn(
        command: &str,
        args: &[String],
        env: &BTreeMap<String, String>,
        base: &ChildEnv<'_>,
        cwd: Option<&PathBuf>,
    ) -> Result<ServerIo, UpstreamError> {
        let started = Instant::now();
        let (child, out, inp) = ChildGuard::spawn(command, args, env, base, cwd).await?;
        Ok(ServerIo {
            child: Some(child),
            started,
            ..ServerIo::new(out, inp)
        })
    }

    /// A bridge to a Streamable HTTP endpoint (protocol 2025-03-26 and later).
    pub fn http(
        url: &str,
        headers: &BTreeMap<String, String>,
        opts: &SessionOptions,
        redactor: Arc<Redactor>,
    ) -> Result<ServerIo, UpstreamError> {
        ServerIo::remote(Remote::Streamable, url, headers, opts, redactor)
    }

    /// A bridge to a legacy HTTP+SSE endpoint (protocol 2024-11-05).
    pub fn sse(
        url: &str,
        headers: &BTreeMap<String, String>,
        opts: &SessionOptions,
        redactor: Arc<Redactor>,
    ) -> Result<ServerIo, UpstreamError> {
        ServerIo::remote(Remote::LegacySse, url, headers, opts, redactor)
    }

    fn remote(
        kind: Remote,
        url: &str,
        headers: &BTreeMap<String, String>,
        opts: &SessionOptions,
        redactor: Arc<Redactor>,
    ) -> Result<ServerIo, UpstreamError> {
        let started = Instant::now();
        let bridge = http::start(kind, url, headers, opts, redactor)?;
        Ok(ServerIo {
            started,
            ended: Some(bridge.ended),
            ..ServerIo::new(bridge.server_out, bridge.server_in).with_task(bridge.task)
        })
    }
}

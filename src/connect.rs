//! Reaching a server: one function from a server spec to a live session. A stdio, HTTP or SSE
//! server is reached through `upstream`'s own streams; the embedded demo and a recording's
//! replay run in this process and are handed to the session as a stream like any other. (It
//! sits above `upstream`, `demo` and `capture`, so none of them needs another.)

use rmcp::ServiceExt;

use crate::capture::{self, Recording};
use crate::config::{redactor_for, Redactor, ServerSpec, TransportSpec};
use crate::demo::DemoServer;
use crate::upstream::{ChildEnv, Protocol, ServerIo, Session, SessionOptions, UpstreamError};

/// Start or reach the server and run the `initialize` handshake. Errors never carry a secret of
/// the spec or of the inherited environment (a server's stderr can print them).
pub async fn connect(spec: &ServerSpec, opts: &SessionOptions) -> Result<Session, UpstreamError> {
    if opts.protocol == Protocol::HandshakeFirst {
        let first = SessionOptions {
            protocol: Protocol::Legacy,
            ..opts.clone()
        };
        return match connect_as(spec, &first).await {
            Err(UpstreamError::HandshakeRefused { .. }) => {
                let modern = SessionOptions {
                    protocol: Protocol::Modern,
                    ..opts.clone()
                };
                connect_as(spec, &modern).await
            }
            other => other,
        };
    }
    connect_as(spec, opts).await
}

/// [`connect`] in the era `opts` names (never [`Protocol::HandshakeFirst`]).
async fn connect_as(spec: &ServerSpec, opts: &SessionOptions) -> Result<Session, UpstreamError> {
    let redactor = std::sync::Arc::new(redactor_for(spec));
    let io = open(spec, opts, redactor.clone())
        .await
        .map_err(|e| e.redacted(&redactor))?;
    // SSE is the 2024-11-05 transport: a server on it speaks the handshake era only
    let legacy;
    let opts = if matches!(spec.transport, TransportSpec::Sse { .. }) {
        legacy = SessionOptions {
            protocol: Protocol::Legacy,
            ..opts.clone()
        };
        &legacy
    } else {
        opts
    };
    Session::connect_io(io, opts, redactor).await
}

/// The byte stream to the server `spec` names: started (a process, a server in this process)
/// or reached (an HTTP endpoint). `redactor` knows the spec's secrets: what a remote server
/// answers is quoted in messages redacted, then cut.
pub async fn open(
    spec: &ServerSpec,
    opts: &SessionOptions,
    redactor: std::sync::Arc<Redactor>,
) -> Result<ServerIo, UpstreamError> {
    match &spec.transport {
        TransportSpec::Builtin { name } => {
            let (io, server_end) = ServerIo::pipe();
            let server = DemoServer::new(name);
            let task = tokio::spawn(async move {
                if let Ok(running) = server.serve(tokio::io::split(server_end)).await {
                    let _ = running.waiting().await;
                }
            });
            Ok(io.with_task(task))
        }
        TransportSpec::Capture { dir, server } => {
            let (io, server_end) = ServerIo::pipe();
            let mut replay =
                Recording::load(dir, server.as_deref()).map_err(|e| UpstreamError::Initialize {
                    message: e.to_string(),
                })?;
            let (read, write) = tokio::io::split(server_end);
            let task = tokio::spawn(async move {
                let _ = capture::serve(&mut replay, read, write).await;
            });
            Ok(io.with_task(task))
        }
        TransportSpec::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let base = ChildEnv {
                base: opts.server_env,
                remove: &opts.env_remove,
            };
            ServerIo::spawn(command, args, env, &base, cwd.as_ref()).await
        }
        TransportSpec::Http { url, headers } => ServerIo::http(url, headers, opts, redactor),
        TransportSpec::Sse { url, headers } => ServerIo::sse(url, headers, opts, redactor),
    }
}

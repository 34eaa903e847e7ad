//! Reaching a server: one function from a server spec to a live session. A stdio, HTTP or SSE
//! server is reached through `upstream`'s own streams; the embedded demo and a recording's
//! replay run in this process and are handed to the session as a stream like any other. (It
//! sits above `upstream`, `demo` and `capture`, so none of them needs another.)

use rmcp::ServiceExt;

use crate::config::{redactor_for, Redactor, ServerSpec, TransportSpec};
use crate::wire::capture::{self, Recording};
use crate::wire::demo::DemoServer;
use crate::wire::upstream::{
    ChildEnv, Protocol, ServerIo, Session, SessionOptions, UpstreamError, Wire,
};

mod signin;
pub use signin::without_token;

/// Start or reach the server and open a session in the era `opts.protocol` names. Errors never
/// carry a secret of the spec or of the inherited environment (a server's stderr can print
/// them).
pub async fn connect(spec: &ServerSpec, opts: &SessionOptions) -> Result<Session, UpstreamError> {
    connect_recorded(spec, opts, Wire::new(opts.record)).await
}

/// [`connect`], recording every exchange into `wire`, a failed negotiation's too (the caller
/// keeps a clone: `--record` writes what was tried when no session came of it). A stdio server
/// that ends its stream on the `server/discover` that `--protocol auto` sends first is started
/// again and spoken to in the handshake era, and the session says so
/// ([`Session::discover_ended`]).
///
/// A remote server without an `Authorization` header of its own gets a token: from
/// `MCP_BUDGET_TOKEN_<NAME>`, else from the sign-in `mcp-budget login` kept (refreshed when it
/// is due, and once more when the server refuses it); a 401 says to run `mcp-budget login`.
pub async fn connect_recorded(
    spec: &ServerSpec,
    opts: &SessionOptions,
    wire: Wire,
) -> Result<Session, UpstreamError> {
    let (signed, stored) = signin::authorized(spec, opts).await?;
    let opts = &signin::session_options(spec, opts, stored);
    match connect_eras(&signed, opts, &wire).await {
        Err(e) if signin::unauthorized(&e) => {
            if stored {
                if let Some(again) = signin::refreshed(spec, opts).await? {
                    return connect_eras(&again, opts, &wire)
                        .await
                        .map_err(|e| signin::hint(spec, e));
                }
            }
            Err(signin::hint(spec, e))
        }
        other => other,
    }
}

/// [`connect_recorded`] once the spec carries its token.
async fn connect_eras(
    spec: &ServerSpec,
    opts: &SessionOptions,
    wire: &Wire,
) -> Result<Session, UpstreamError> {
    let wire = wire.clone();
    let era = |protocol| SessionOptions {
        protocol,
        ..opts.clone()
    };
    match opts.protocol {
        Protocol::HandshakeFirst => match connect_as(spec, &era(Protocol::Legacy), &wire).await {
            Err(UpstreamError::HandshakeRefused { .. }) => {
                connect_as(spec, &era(Protocol::Modern), &wire).await
            }
            other => other,
        },
        Protocol::Auto => match connect_as(spec, opts, &wire).await {
            Err(UpstreamError::EndedOnDiscover { message }) => {
                let mut session = connect_as(spec, &era(Protocol::Legacy), &wire)
                    .await
                    .map_err(|e| match e {
                        UpstreamError::Initialize { message: again }
                        | UpstreamError::HandshakeRefused { message: again } => {
                            UpstreamError::Initialize {
                                message: format!(
                                    "{again} (started again after `server/discover` ended it: {message})"
                                ),
                            }
                        }
                        other => other,
                    })?;
                session.set_discover_ended(message);
                Ok(session)
            }
            other => other,
        },
        _ => connect_as(spec, opts, &wire).await,
    }
}

/// [`connect`] in the era `opts` names (never [`Protocol::HandshakeFirst`]).
async fn connect_as(
    spec: &ServerSpec,
    opts: &SessionOptions,
    wire: &Wire,
) -> Result<Session, UpstreamError> {
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
    Session::connect_io(io, opts, redactor, wire.clone()).await
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

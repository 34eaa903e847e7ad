//! How a session opens: the era chosen (`--protocol`, and for `auto` the negotiation of
//! [`super::negotiate`]) and what a failed opening says: the era tried last and the flag that
//! forces the other.

use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientInitializeError, ClientLifecycleMode};
use rmcp::ClientHandler;

use super::client::UpstreamClient;
use super::dropped;
use super::negotiate::{self, Negotiated};
use super::pump::Pumps;
use super::{Protocol, RawResponse, SessionOptions, UpstreamError, Wire};
use crate::config::Redactor;

/// The era a session opens in.
pub(super) struct Chosen {
    pub(super) lifecycle: ClientLifecycleMode,
    /// What the server already answered to the negotiation, given to rmcp as its answer.
    pub(super) first_answer: Option<String>,
    /// Why `--protocol auto` settled on the handshake era.
    pub(super) fallback_why: Option<String>,
}

/// Why no era was chosen.
pub(super) enum Failed {
    /// The server's stream ended before it answered `server/discover`.
    Ended,
    /// What the negotiation says went wrong (the flags that force an era named).
    Said(String),
}

/// The era `opts.protocol` names; for `auto`, the one the negotiation settles on. `local`: the
/// server is a process (or runs in this process), so an unanswered discover is followed by
/// `initialize` (over HTTP the bridge answers for a discover that gets no HTTP answer in time).
pub(super) async fn choose(
    opts: &SessionOptions,
    pumps: &mut Pumps,
    client: &UpstreamClient,
    local: bool,
    redactor: &Redactor,
) -> Result<Chosen, Failed> {
    let modern = || ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let chosen = |lifecycle, first_answer: Option<String>, fallback_why| Chosen {
        lifecycle,
        first_answer,
        fallback_why,
    };
    match opts.protocol {
        Protocol::Legacy | Protocol::HandshakeFirst => {
            Ok(chosen(ClientLifecycleMode::Initialize, None, None))
        }
        Protocol::Modern => Ok(chosen(modern(), None, None)),
        Protocol::Auto => {
            let negotiated = negotiate::negotiate(
                &mut pumps.link,
                &mut pumps.rmcp_write,
                &client.get_info(),
                opts.start_timeout,
                local.then_some(negotiate::HEDGE_AFTER),
                redactor,
            )
            .await;
            match negotiated {
                Ok(Negotiated::Modern { answer }) => {
                    Ok(chosen(modern(), answer.map(|l| l.to_string()), None))
                }
                Ok(Negotiated::Handshake { why, answer }) => Ok(chosen(
                    ClientLifecycleMode::Initialize,
                    answer.map(|l| l.to_string()),
                    Some(why),
                )),
                Ok(Negotiated::Ended) => Err(Failed::Ended),
                Err(reason) => Err(Failed::Said(format!(
                    "{reason}; `{} legacy` or `{0} 2026-07-28` forces an era",
                    opts.protocol_flag
                ))),
            }
        }
    }
}

/// What rmcp reads: the server's stream, after the server's answer to rmcp's own handshake
/// when the negotiation already has it (rmcp's request is then kept from the server).
pub(super) fn rmcp_input(
    first_answer: Option<&str>,
    pumps: &mut Pumps,
) -> tokio::io::Chain<std::io::Cursor<Vec<u8>>, tokio::io::DuplexStream> {
    use tokio::io::AsyncReadExt;
    let canned = first_answer.map(negotiate::as_first_answer);
    if canned.is_some() {
        let swallow = &pumps.link.swallow_handshake;
        swallow.store(true, std::sync::atomic::Ordering::Release);
    }
    let (rmcp_read, _) = tokio::io::duplex(1);
    let stream = std::mem::replace(&mut pumps.rmcp_read, rmcp_read);
    std::io::Cursor::new(canned.unwrap_or_default().into_bytes()).chain(stream)
}

/// The handshake that opened the session (the era's) and the server's answer to it: the
/// negotiation's when rmcp was given that, else rmcp's own. The negotiation's other requests
/// are forgotten.
pub(super) fn captured(
    lifecycle: &ClientLifecycleMode,
    first_answer: Option<&str>,
    wire: &Wire,
) -> Result<(&'static str, RawResponse), UpstreamError> {
    let handshake = match lifecycle {
        ClientLifecycleMode::Initialize => "initialize",
        _ => "server/discover",
    };
    let negotiated = first_answer
        .and_then(negotiate::own_answer_id)
        .and_then(|id| wire.take_response_by_id(&id));
    let init = negotiated.or_else(|| wire.take_response(handshake));
    for id in negotiate::own_ids() {
        wire.forget(&id);
    }
    let init = init.filter(|r| r.error.is_none());
    let init = init.ok_or_else(|| UpstreamError::Initialize {
        message: format!("no {handshake} response was captured"),
    })?;
    Ok((handshake, init))
}

/// What a failed opening says: rmcp's error (or `ended`, why the bridge ended the stream),
/// why `auto` chose the handshake era (told once when both requests got the same error), and
/// the flag that forces the other era.
pub(super) fn failure(
    e: &ClientInitializeError,
    ended: Option<String>,
    fallback_why: Option<&str>,
    lifecycle: &ClientLifecycleMode,
    opts: &SessionOptions,
) -> String {
    let reason = ended.unwrap_or_else(|| handshake_error(e));
    let reason = match fallback_why {
        Some(why) => match why.split_once("JSON-RPC error: ") {
            Some((_, said)) if reason.ends_with(said) => {
                format!("{reason} (to server/discover and initialize alike)")
            }
            _ => format!("{reason} (the handshake era, since {why})"),
        },
        None => reason,
    };
    let other = match lifecycle {
        ClientLifecycleMode::Initialize => "2026-07-28",
        _ => "legacy",
    };
    format!(
        "{reason}; `{} {other}` forces the other era",
        opts.protocol_flag
    )
}

/// Why the handshake failed. When `server/discover` and then `initialize` both failed, the
/// `initialize` failure is what a legacy server (or no MCP server at all) says: it comes
/// first, and the discover failure after it, unless it says the same (told once).
fn handshake_error(e: &rmcp::service::ClientInitializeError) -> String {
    use rmcp::service::ClientInitializeError as E;
    match e {
        E::LegacyFallbackFailed { discover, fallback } => {
            let (discover, fallback) = (discover.to_string(), fallback.to_string());
            if discover == fallback {
                format!("{fallback} (to server/discover and initialize alike)")
            } else {
                format!("{fallback} (server/discover before it: {discover})")
            }
        }
        // `--protocol 2026-07-28`: the pump stood in for a result that is not a discover one
        E::JsonRpcError(d) if dropped::not_a_discover_result(&d.data) => format!(
            "{}; `--protocol legacy` or `auto` asks `initialize` instead",
            d.message
        ),
        other => other.to_string(),
    }
}

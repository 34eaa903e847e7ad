//! `--protocol auto`: which era to speak, settled before rmcp starts, so that no answer of the
//! server is ever dropped. `server/discover` goes first; its answer, however late within the
//! start-up timeout, decides. A server that has not answered after [`HEDGE_AFTER`] (a slow
//! starter, or one that ignores methods it does not know) is also sent `initialize`, and
//! whichever answer settles the era first is used: the one that comes later is kept from rmcp.
//! rmcp is then started in the era chosen, and given the server's answer to its handshake when
//! the negotiation already has it (the server is asked once).
//!
//! The rules are the official Python SDK 2.3 client's (`mode="auto"`): every error answer to
//! `server/discover` means the handshake era, except -32022 naming only versions of the
//! 2026-07-28 era that this client does not speak; a result that is not a DiscoverResult, or one
//! that lists no 2026-07-28, means the handshake era too. Unlike that client, a late answer is
//! used, and a server that ends its stream on `server/discover` is reported to the caller
//! ([`Outcome::Ended`]), which restarts it in the handshake era.

use std::time::Duration;

use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, DiscoverRequest, DiscoverRequestParams, InitializeRequest,
    NumberOrString, ProtocolVersion, RequestMetaObject,
};
use tokio::io::{AsyncWriteExt, DuplexStream};
use tokio::time::Instant;

use super::pump::{NegotiationLink, OWN_ID_PREFIX};
use super::wire::Line;
use super::MODERN_VERSION;
use crate::config::Redactor;

/// How long `server/discover` alone is waited for before `initialize` follows it (rmcp's and
/// the Python SDK's wait before they fall back).
pub const HEDGE_AFTER: Duration = Duration::from_secs(10);

/// The id of the negotiation's `server/discover`.
const DISCOVER_ID: &str = "mcp-budget:discover";
/// The id of the negotiation's `initialize`.
const INITIALIZE_ID: &str = "mcp-budget:initialize";

/// What the negotiation settled.
#[derive(Debug)]
pub enum Negotiated {
    /// The server speaks 2026-07-28. `answer`: its DiscoverResult (rmcp is given it in place of
    /// asking again); `None` when rmcp is to ask itself (a -32022 that named 2026-07-28).
    Modern { answer: Option<Line> },
    /// The handshake era, and why (what `server/discover` got). `answer`: the server's answer
    /// to the negotiation's own `initialize`, when it was sent and answered.
    Handshake { why: String, answer: Option<Line> },
    /// The server's stream ended before it answered `server/discover`.
    Ended,
}

/// What the answer to `server/discover` says of the era.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// A DiscoverResult listing 2026-07-28 (`true`), or a -32022 naming it (`false`: ask again).
    Modern(bool),
    /// The handshake era, and why.
    Handshake(String),
    /// Only versions of the 2026 era this client does not speak.
    Disjoint(String),
}

/// Settle the era: send `server/discover` through `to_server` (the pumps' input from rmcp, so
/// the wire records it), read the answers from `link`, and follow with `initialize` after
/// `hedge` when one is given. Gives up after `timeout`, naming what was asked.
pub async fn negotiate(
    link: &mut NegotiationLink,
    to_server: &mut DuplexStream,
    info: &rmcp::model::ClientConfig,
    timeout: Duration,
    hedge: Option<Duration>,
    redactor: &Redactor,
) -> Result<Negotiated, String> {
    let deadline = Instant::now() + timeout;
    send(to_server, &discover_request(info)).await?;
    let mut hedge_at = hedge.map(|h| Instant::now() + h);
    let mut initialize_sent = false;
    // a failed `initialize` while discover is still unanswered: said if nothing else settles
    let mut initialize_failed: Option<String> = None;
    let mut settled: Option<Verdict> = None;
    loop {
        let wake = hedge_at.filter(|_| settled.is_none()).unwrap_or(deadline);
        let reply = tokio::select! {
            r = link.replies.recv() => r,
            _ = tokio::time::sleep_until(wake) => {
                if wake == deadline {
                    return Err(no_answer(timeout, initialize_sent, settled.is_some()));
                }
                hedge_at = None;
                send(to_server, &initialize_request(info)).await?;
                initialize_sent = true;
                continue;
            }
        };
        let Some(line) = reply else {
            return match settled {
                None => Ok(Negotiated::Ended),
                Some(_) => {
                    Err("the server ended its stream before it answered `initialize`".into())
                }
            };
        };
        let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        let id = v["id"].as_str().unwrap_or_default();
        if id == DISCOVER_ID && settled.is_none() {
            match verdict(&v, redactor) {
                Verdict::Modern(answered) => {
                    return Ok(Negotiated::Modern {
                        answer: answered.then_some(line),
                    })
                }
                Verdict::Disjoint(why) => return Err(why),
                Verdict::Handshake(why) if !initialize_sent => {
                    return Ok(Negotiated::Handshake { why, answer: None })
                }
                // its `initialize` was sent already: its answer is the handshake
                handshake => {
                    if let Some(failed) = initialize_failed.take() {
                        return Err(failed);
                    }
                    settled = Some(handshake);
                }
            }
        } else if id == INITIALIZE_ID {
            match (&settled, v.get("error")) {
                (Some(Verdict::Handshake(why)), None) => {
                    return Ok(Negotiated::Handshake {
                        why: why.clone(),
                        answer: Some(line),
                    })
                }
                (None, None) => {
                    let why = "`server/discover` had no answer after 10 s; `initialize` had".into();
                    return Ok(Negotiated::Handshake {
                        why,
                        answer: Some(line),
                    });
                }
                (settled, Some(e)) => {
                    let failed = format!(
                        "`initialize` returned JSON-RPC error {}: {}",
                        e["code"],
                        redactor.preview(e["message"].as_str().unwrap_or("error"), 200)
                    );
                    if settled.is_some() {
                        return Err(failed);
                    }
                    // (a slow server of the 2026 era refuses it: its discover answer decides)
                    initialize_failed = Some(failed);
                }
                (Some(_), None) => {}
            }
        }
    }
}

/// The message when the start-up timeout passed with no answer.
fn no_answer(timeout: Duration, initialize_sent: bool, discover_answered: bool) -> String {
    let asked = match (initialize_sent, discover_answered) {
        (true, true) => "`initialize` (after `server/discover` had been answered)",
        (true, false) => "`server/discover` nor `initialize`",
        _ => "`server/discover`",
    };
    format!(
        "no answer to {asked} within the start-up timeout of {} s",
        timeout.as_secs_f64()
    )
}

/// What the answer to the negotiation's `server/discover` says of the era.
fn verdict(answer: &serde_json::Value, redactor: &Redactor) -> Verdict {
    if let Some(e) = answer.get("error") {
        let code = e["code"].as_i64().unwrap_or(0);
        let message = redactor.preview(e["message"].as_str().unwrap_or("error"), 200);
        let said = format!("`server/discover` returned JSON-RPC error: {code}: {message}");
        if code != -32022 {
            return Verdict::Handshake(said);
        }
        let supported: Vec<&str> = e["data"]["supported"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str())
            .collect();
        if supported.contains(&MODERN_VERSION) {
            return Verdict::Modern(false);
        }
        if supported.is_empty() || supported.iter().any(|v| *v < MODERN_VERSION) {
            return Verdict::Handshake(said);
        }
        return Verdict::Disjoint(format!(
            "`server/discover` was refused: the server speaks only {} and mcp-budget speaks {MODERN_VERSION} and the handshake era",
            redactor.preview(&supported.join(", "), 200)
        ));
    }
    let result = &answer["result"];
    match serde_json::from_value::<rmcp::model::DiscoverResult>(result.clone()) {
        Ok(d) if d.supported_versions.iter().any(|v| v.as_str() == MODERN_VERSION) => {
            Verdict::Modern(true)
        }
        Ok(d) => {
            let listed: Vec<&str> = d.supported_versions.iter().map(|v| v.as_str()).collect();
            Verdict::Handshake(format!(
                "`server/discover` lists {}: no {MODERN_VERSION}",
                redactor.preview(&listed.join(", "), 200)
            ))
        }
        Err(_) => Verdict::Handshake(format!(
            "`server/discover` answered with a result that is not a {MODERN_VERSION} DiscoverResult: {}",
            redactor.preview(&result.to_string(), 80)
        )),
    }
}

/// The negotiation's `server/discover`, as rmcp would send it (protocol version, client info
/// and capabilities in `_meta`).
fn discover_request(info: &rmcp::model::ClientConfig) -> String {
    let meta = RequestMetaObject::with_client_context(
        ProtocolVersion::V_2026_07_28,
        info.client_info.clone(),
        info.capabilities.clone(),
    );
    let mut discover = DiscoverRequest::new(DiscoverRequestParams {});
    discover.extensions.insert(meta);
    message(ClientRequest::DiscoverRequest(discover), DISCOVER_ID)
}

/// The negotiation's `initialize`, as rmcp would send it.
fn initialize_request(info: &rmcp::model::ClientConfig) -> String {
    let init = InitializeRequest::new(info.clone());
    message(ClientRequest::InitializeRequest(init), INITIALIZE_ID)
}

fn message(request: ClientRequest, id: &str) -> String {
    debug_assert!(id.starts_with(OWN_ID_PREFIX));
    let msg = ClientJsonRpcMessage::request(request, NumberOrString::String(id.into()));
    serde_json::to_string(&msg).expect("a request serialises")
}

async fn send(to_server: &mut DuplexStream, line: &str) -> Result<(), String> {
    let sent = async {
        to_server.write_all(line.as_bytes()).await?;
        to_server.write_all(b"\n").await?;
        to_server.flush().await
    };
    sent.await
        .map_err(|e| format!("could not send to the server: {e}"))
}

/// `line`, the server's answer to one of the negotiation's requests, as the answer to rmcp's
/// first request (id 0: rmcp numbers its requests from 0, and its handshake goes first).
pub fn as_first_answer(line: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
    v["id"] = 0.into();
    let mut text = v.to_string();
    text.push('\n');
    text
}

/// The JSON text of the ids the negotiation uses (as the wire keys them).
pub fn own_ids() -> [String; 2] {
    [DISCOVER_ID, INITIALIZE_ID].map(|id| format!("\"{id}\""))
}

/// The JSON text of the id of the negotiation's request whose answer is `line`.
pub fn own_answer_id(line: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    v["id"].as_str().map(|id| format!("\"{id}\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> serde_json::Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn discover_answers_decide_the_era_as_the_python_sdk_does() {
        let r = Redactor::default();
        let modern = r#"{"jsonrpc":"2.0","id":"mcp-budget:discover","result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"serverInfo":{"name":"s","version":"1"},"ttlMs":0,"cacheScope":"private"}}"#;
        assert_eq!(verdict(&v(modern), &r), Verdict::Modern(true));
        // kubernetes-mcp-server 0.0.67 over HTTP: a DiscoverResult without 2026-07-28
        let old = modern.replace(r#"["2026-07-28"]"#, r#"["2025-11-25","2024-11-05"]"#);
        let Verdict::Handshake(why) = verdict(&v(&old), &r) else {
            panic!("handshake era")
        };
        assert!(
            why.contains("2025-11-25, 2024-11-05: no 2026-07-28"),
            "{why}"
        );
        let unknown =
            r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"Method not found"}}"#;
        assert!(matches!(verdict(&v(unknown), &r), Verdict::Handshake(_)));
        let refused = |supported: &str| {
            v(&format!(
                r#"{{"id":"x","error":{{"code":-32022,"message":"no","data":{{"supported":{supported}}}}}}}"#
            ))
        };
        assert_eq!(
            verdict(&refused(r#"["2026-07-28"]"#), &r),
            Verdict::Modern(false)
        );
        assert!(matches!(
            verdict(&refused(r#"["2025-06-18"]"#), &r),
            Verdict::Handshake(_)
        ));
        assert!(matches!(
            verdict(&refused(r#"["2027-01-01"]"#), &r),
            Verdict::Disjoint(_)
        ));
        for not_one in ["{}", "null", r#""x""#, r#"{"supportedVersions":5}"#] {
            let line = format!(r#"{{"id":"x","result":{not_one}}}"#);
            assert!(
                matches!(verdict(&v(&line), &r), Verdict::Handshake(_)),
                "{not_one}"
            );
        }
    }

    #[test]
    fn the_negotiations_requests_carry_its_own_ids_and_the_era() {
        let info = rmcp::model::ClientConfig::default();
        let d = v(&discover_request(&info));
        assert_eq!(d["id"], DISCOVER_ID);
        assert_eq!(d["method"], "server/discover");
        assert_eq!(
            d["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            MODERN_VERSION
        );
        let i = v(&initialize_request(&info));
        assert_eq!(i["id"], INITIALIZE_ID);
        assert_eq!(i["method"], "initialize");
        assert!(i["params"]["protocolVersion"].is_string());
        let first = as_first_answer(r#"{"jsonrpc":"2.0","id":"mcp-budget:discover","result":{}}"#);
        assert_eq!(v(&first)["id"], 0);
        assert!(own_ids().iter().all(|id| id.starts_with("\"mcp-budget:")));
    }
}

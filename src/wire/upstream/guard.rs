//! Checks on remote servers: credentials stay with the configured origin (a redirect, or the
//! endpoint a legacy SSE server announces, to another scheme, host or port is refused), and an
//! answer that is not MCP (an HTML page with status 200) fails at once instead of leaving its
//! request waiting for the timeout.

use reqwest::header::CONTENT_TYPE;
use reqwest::Url;

use crate::config::redact_url;

/// Follow at most 10 redirects; with credentials (configured headers, URL user), only within
/// the configured origin, since reqwest would forward every configured header but
/// `Authorization` to another host.
pub(super) fn redirects(start: &Url, credentials: bool) -> reqwest::redirect::Policy {
    let origin = start.origin();
    reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() > 10 {
            attempt.error("more than 10 redirects")
        } else if credentials && attempt.url().origin() != origin {
            let to = attempt.url().origin().ascii_serialization();
            attempt.error(format!(
                "refused a redirect to another origin ({to}): the configured headers are sent \
                 only to {}; configure that URL instead if it is the server",
                origin.ascii_serialization()
            ))
        } else {
            attempt.follow()
        }
    })
}

/// The GET of a legacy server must open an event stream; anything else (an HTML page) is not
/// an MCP endpoint, and would otherwise leave every request waiting for the timeout.
pub(super) fn event_stream(url: &Url, r: reqwest::Response) -> Result<reqwest::Response, String> {
    let ct = content_type(&r);
    if ct.starts_with("text/event-stream") {
        Ok(r)
    } else {
        Err(format!(
            "{} did not answer as an MCP SSE endpoint (HTTP {}, content-type `{ct}`, not an event stream)",
            redact_url(url.as_str()),
            r.status()
        ))
    }
}

/// Whether `text` is one JSON-RPC message or a batch of them (objects with `jsonrpc`).
pub(super) fn is_json_rpc(text: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Message {
        jsonrpc: Option<serde::de::IgnoredAny>,
    }
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Body {
        One(Message),
        Batch(Vec<Message>),
    }
    match serde_json::from_str::<Body>(text) {
        Ok(Body::One(m)) => m.jsonrpc.is_some(),
        Ok(Body::Batch(b)) => !b.is_empty() && b.iter().all(|m| m.jsonrpc.is_some()),
        Err(_) => false,
    }
}

/// The POST endpoint a legacy server announced, resolved against its URL. Only the configured
/// origin (scheme, host and port) is accepted: the requests and the configured headers are for
/// that server, not for whatever host its stream names.
pub(super) fn announced_endpoint(url: &Url, announced: &str) -> Result<Url, String> {
    let endpoint = url
        .join(announced)
        .map_err(|e| format!("the SSE server announced an invalid endpoint: {e}"))?;
    if endpoint.origin() == url.origin() {
        Ok(endpoint)
    } else {
        Err(format!(
            "refused the SSE endpoint on another origin ({}): requests and the configured \
             headers go only to {}",
            endpoint.origin().ascii_serialization(),
            url.origin().ascii_serialization()
        ))
    }
}

pub(super) fn content_type(resp: &reqwest::Response) -> String {
    resp.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase()
}

//! The listener: HTTP/1.1 on 127.0.0.1, each connection on its own task (requests are answered
//! concurrently), each request read (at most 64 MiB; gzip decoded), routed to its API by path,
//! answered by the script and recorded with credential headers redacted.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::gemini::Mode;
use super::script::{is_target, Turn};
use super::sse::{self, Answer};
use super::{anthropic, chat, encoding, gemini, responses, Api, Recorded, Script, ScriptReply};

/// The largest request body accepted (decoded).
pub(super) const MAX_BODY: usize = 64 << 20;

/// Headers whose values are never recorded.
const SECRET_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "x-goog-api-key",
    "api-key",
    "cookie",
];

/// What every connection shares: the script and the record.
pub(super) struct Shared {
    script: Script,
    log: Mutex<Vec<Recorded>>,
    pub(super) called: AtomicBool,
}

impl Shared {
    pub(super) fn new(script: Script) -> Shared {
        Shared {
            script,
            log: Mutex::new(Vec::new()),
            called: AtomicBool::new(false),
        }
    }

    pub(super) fn recorded(&self) -> Vec<Recorded> {
        self.log
            .lock()
            .map(|l| l.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }

    /// Whether an earlier request was answered with the probe's call `id`.
    fn target_called(&self, id: &str) -> bool {
        let log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        log.iter()
            .any(|r| matches!(&r.reply, ScriptReply::CallTool { call_id, .. } if call_id == id))
    }

    fn recorded_len(&self) -> usize {
        self.log
            .lock()
            .map_or_else(|p| p.into_inner().len(), |l| l.len())
    }

    /// Append `r` with the next sequence number; returns that number.
    fn record(&self, mut r: Recorded) -> usize {
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        r.seq = log.len() + 1;
        log.push(r);
        log.len()
    }
}

/// Accept connections until `cancel`; open connections end with it.
pub(super) async fn serve(
    listener: tokio::net::TcpListener,
    shared: Arc<Shared>,
    cancel: CancellationToken,
) {
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let stream = tokio::select! {
            _ = cancel.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => {
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        while connections.try_join_next().is_some() {}
        let shared = shared.clone();
        connections.spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let shared = shared.clone();
                async move { Ok::<_, std::convert::Infallible>(answer(&shared, req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
    connections.shutdown().await;
}

/// Where a request goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    Messages,
    CountTokens,
    Chat,
    Responses,
    Gemini(Mode),
    GeminiCount,
    Unknown,
}

impl Route {
    /// The route of `path` (with its query): the OpenAI and Anthropic paths with or without
    /// `/v1`, Gemini's `.../models/MODEL:method` under any version prefix.
    fn of(path: &str) -> Route {
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        let bare = path
            .strip_prefix("/v1")
            .filter(|p| p.starts_with('/'))
            .unwrap_or(path);
        match bare {
            "/messages" => return Route::Messages,
            "/messages/count_tokens" => return Route::CountTokens,
            "/chat/completions" => return Route::Chat,
            "/responses" => return Route::Responses,
            _ => {}
        }
        let Some((model_path, method)) = path.rsplit_once(':') else {
            return Route::Unknown;
        };
        if !model_path.contains("/models/") {
            return Route::Unknown;
        }
        let sse = query.split('&').any(|kv| kv == "alt=sse");
        match method {
            "generateContent" => Route::Gemini(Mode::Whole),
            "streamGenerateContent" if sse => Route::Gemini(Mode::Sse),
            "streamGenerateContent" => Route::Gemini(Mode::Array),
            "countTokens" => Route::GeminiCount,
            _ => Route::Unknown,
        }
    }

    fn api(self) -> Option<Api> {
        match self {
            Route::Messages | Route::CountTokens => Some(Api::AnthropicMessages),
            Route::Chat => Some(Api::ChatCompletions),
            Route::Responses => Some(Api::Responses),
            Route::Gemini(_) | Route::GeminiCount => Some(Api::Gemini),
            Route::Unknown => None,
        }
    }
}

/// The request's headers, secrets redacted.
fn headers_of(headers: &hyper::HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| {
            let name = name.as_str().to_string();
            let value = if SECRET_HEADERS.contains(&name.as_str()) {
                "[redacted]".to_string()
            } else {
                String::from_utf8_lossy(value.as_bytes()).into_owned()
            };
            (name, value)
        })
        .collect()
}

/// An error reply in the OpenAI/Anthropic shape.
fn error(status: StatusCode, message: String) -> Answer {
    sse::json(
        status,
        &json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}}),
    )
}

/// Read the body: `Err` is the refusal to send (413, 415, 400) and the body to record.
async fn read_body(
    headers: &hyper::HeaderMap,
    body: hyper::body::Incoming,
) -> Result<Vec<u8>, (Answer, ScriptReply, Vec<u8>)> {
    let refuse = |status: StatusCode, message: String, kept: Vec<u8>| {
        (
            error(status, message),
            ScriptReply::Refused {
                status: status.as_u16(),
            },
            kept,
        )
    };
    let too_large = || {
        refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("request body over {MAX_BODY} bytes"),
            Vec::new(),
        )
    };
    let declared = headers
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        return Err(too_large());
    }
    let raw: Bytes = match Limited::new(body, MAX_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => return Err(too_large()),
        Err(e) => {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                format!("cannot read the request body: {e}"),
                Vec::new(),
            ))
        }
    };
    let encoding = headers.get(hyper::header::CONTENT_ENCODING).map(|v| {
        String::from_utf8_lossy(v.as_bytes())
            .trim()
            .to_ascii_lowercase()
    });
    match encoding.as_deref() {
        None | Some("") | Some("identity") => Ok(raw.to_vec()),
        Some("gzip") | Some("x-gzip") => encoding::gunzip(&raw, MAX_BODY).map_err(|e| match e {
            encoding::GzipError::TooLarge => too_large(),
            encoding::GzipError::Invalid => refuse(
                StatusCode::BAD_REQUEST,
                "the gzip request body is damaged".into(),
                raw.to_vec(),
            ),
        }),
        Some(other) => Err(refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("content-encoding {other} is not supported (only gzip)"),
            raw.to_vec(),
        )),
    }
}

/// Answer one request and record it.
async fn answer(shared: &Shared, req: Request<hyper::body::Incoming>) -> Answer {
    let (parts, body) = req.into_parts();
    let path = parts
        .uri
        .path_and_query()
        .map_or_else(|| parts.uri.path().to_string(), |p| p.as_str().to_string());
    let route = Route::of(&path);
    let mut rec = Recorded {
        seq: 0,
        api: route.api(),
        method: parts.method.as_str().to_string(),
        path,
        headers: headers_of(&parts.headers),
        body: Vec::new(),
        reply: ScriptReply::NotFound,
    };
    let (answer, reply) = match read_body(&parts.headers, body).await {
        Err((answer, reply, kept)) => {
            rec.body = kept;
            (answer, reply)
        }
        Ok(body) => {
            rec.body = body;
            let post = parts.method == hyper::Method::POST;
            respond(shared, if post { route } else { Route::Unknown }, &rec)
        }
    };
    rec.reply = reply;
    shared.record(rec);
    answer
}

/// 404 for a path no API has, or a method other than POST.
fn not_found(rec: &Recorded) -> (Answer, ScriptReply) {
    let message = format!(
        "mcp-budget lab: no model API at {} {}",
        rec.method, rec.path
    );
    (error(StatusCode::NOT_FOUND, message), ScriptReply::NotFound)
}

/// The script's answer to a read request.
fn respond(shared: &Shared, route: Route, rec: &Recorded) -> (Answer, ScriptReply) {
    if route == Route::Unknown {
        return not_found(rec);
    }
    let req: Value = match serde_json::from_slice(&rec.body) {
        Ok(v) => v,
        Err(e) => {
            let answer = error(
                StatusCode::BAD_REQUEST,
                format!("the request body is not JSON: {e}"),
            );
            return (answer, ScriptReply::Refused { status: 400 });
        }
    };
    // what the request's texts count in cl100k_base: a client that asks its model to count a
    // result (Claude Code's `count_tokens`, against its MCP output cap) gets a real count
    let tokens = texts_tokens(&req);
    let script = &shared.script;
    let mut turn = match route {
        Route::CountTokens => return (anthropic::count(tokens), ScriptReply::CountTokens),
        Route::GeminiCount => return (gemini::count(tokens), ScriptReply::CountTokens),
        Route::Messages => anthropic::decide(script, &req),
        Route::Chat => chat::decide(script, &req),
        Route::Responses => responses::decide(script, &req),
        Route::Gemini(_) => gemini::decide(script, &req),
        Route::Unknown => return not_found(rec),
    };
    // each of the probe's calls is made once: a client that dropped its result (Continue's
    // compaction asks for a summary without it) gets "done", not the call again and again
    if matches!(&turn, Turn::Call(c) if is_target(&c.id) && shared.target_called(&c.id)) {
        turn = Turn::Done { result_seen: false };
    }
    let answer = match route {
        Route::Messages => anthropic::answer(&turn, &req, tokens),
        Route::Chat => chat::answer(&turn, &req, tokens),
        Route::Responses => responses::answer(&turn, &req, tokens, shared.recorded_len() + 1),
        Route::Gemini(mode) => gemini::answer(&turn, &req, tokens, mode),
        _ => return not_found(rec),
    };
    if matches!(turn, Turn::Done { result_seen: true }) {
        shared.called.store(true, Ordering::SeqCst);
    }
    (answer, turn.reply())
}

/// The cl100k_base tokens of every string in a request (its texts, the tool results in it,
/// the names and schemas of its tools), each counted alone.
fn texts_tokens(v: &Value) -> u64 {
    let mut total = 0;
    let mut stack = vec![v];
    while let Some(x) = stack.pop() {
        match x {
            Value::String(s) => total += crate::ground::tokens::Tokenizer::Cl100k.count(s) as u64,
            Value::Array(a) => stack.extend(a),
            Value::Object(o) => stack.extend(o.values()),
            _ => {}
        }
    }
    total
}

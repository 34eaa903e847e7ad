//! A scripted fake model on 127.0.0.1, speaking the four wire APIs coding clients use
//! (Anthropic Messages, OpenAI Chat Completions, OpenAI Responses, Gemini), streaming (SSE) where
//! a request asks for it. It records every request as the client sent it (secrets redacted) and
//! answers from [`Script`]: drive the client's discovery step, call the probe's tool with the
//! probe's arguments, then answer "done". `server.rs` listens and records, `script.rs` holds the
//! decision rules, one file per API reads its request and writes its reply, `sse.rs` writes the
//! bodies, `encoding.rs` reads gzip request bodies.

mod anthropic;
mod chat;
mod encoding;
mod gemini;
mod responses;
mod script;
mod server;
mod sse;
#[cfg(test)]
mod tests;

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use script::target_id;
use tokio_util::sync::CancellationToken;

/// The wire API a request was sent on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Api {
    AnthropicMessages,
    ChatCompletions,
    Responses,
    Gemini,
}

/// What the scripted model does: call `tool` of `server` with `arguments`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Script {
    /// The MCP tool's own name (e.g. `scrape_as_markdown`).
    pub tool: String,
    /// The MCP server's name as mounted in the client (e.g. `demo`).
    pub server: String,
    /// The probe's arguments (a JSON object).
    pub arguments: serde_json::Value,
    /// The arguments of further calls of the tool, made one after another, each once the
    /// previous call's result came back (a derive tries several sizes in one client run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more: Vec<serde_json::Value>,
}

/// One request as the client sent it, and what the script answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// 1, 2, ... in arrival order.
    pub seq: usize,
    /// None for a path no API has (still recorded, answered 404).
    pub api: Option<Api>,
    pub method: String,
    /// The path with its query.
    pub path: String,
    /// In the order sent; the values of credential headers are `[redacted]`.
    pub headers: Vec<(String, String)>,
    /// The body as JSON text (a gzip body decoded); empty when it was refused for its size.
    pub body: Vec<u8>,
    pub reply: ScriptReply,
}

/// What the script answered a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ScriptReply {
    /// The probe's call (`name` as the client offered the tool, or its carrier: Codex's `exec`,
    /// Qwen Code's `tool_call` bridge), with the call id the client must answer.
    CallTool {
        call_id: String,
        name: String,
        namespace: Option<String>,
    },
    /// A discovery step: the client's tool search was called.
    Discover { tool: String },
    /// Plain text ("done").
    Text,
    /// A token count (`count_tokens`, `:countTokens`).
    CountTokens,
    /// 404: no API at this path, or a method other than POST.
    NotFound,
    /// Refused: 413 (body over 64 MiB), 415 (an encoding other than gzip), 400 (not JSON).
    Refused { status: u16 },
}

/// A running fake model. Dropping it stops the listener too; [`FakeModel::stop`] also waits.
pub struct FakeModel {
    addr: SocketAddr,
    shared: Arc<server::Shared>,
    cancel: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl FakeModel {
    /// Bind 127.0.0.1 on a free port (never another address) and serve HTTP/1.1 until stopped.
    pub async fn start(script: Script) -> std::io::Result<FakeModel> {
        let listener = tokio::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(server::Shared::new(script));
        let cancel = CancellationToken::new();
        let task = tokio::spawn(server::serve(listener, shared.clone(), cancel.clone()));
        Ok(FakeModel {
            addr,
            shared,
            cancel,
            task: Some(task),
        })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.recorded()
    }

    /// Whether the probe's calls were made and their results came back (a request carried the
    /// result of the last call's id).
    pub fn called(&self) -> bool {
        self.shared.called.load(Ordering::SeqCst)
    }

    /// Stop listening, end open connections, and wait for the listener to finish.
    pub async fn stop(mut self) {
        self.cancel.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

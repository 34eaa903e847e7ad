//! Tests of the fake model over real sockets: requests shaped like the real clients' (from
//! the recorded runs in research/clients), sent with reqwest, replies parsed back.

mod anthropic;
mod gemini;
mod openai;
mod server;
mod several;

use serde_json::{json, Value};

use super::{FakeModel, Script};

/// A model scripted to call `tool` of server `demo` with `{"url": "demo://x"}`.
async fn model(tool: &str) -> FakeModel {
    model_of(tool, Vec::new()).await
}

/// A model scripted to call `tool` with `{"url": "demo://x"}`, then with each of `more`.
async fn model_of(tool: &str, more: Vec<Value>) -> FakeModel {
    let script = Script {
        tool: tool.into(),
        server: "demo".into(),
        arguments: json!({"url": "demo://x"}),
        more,
    };
    FakeModel::start(script).await.expect("bind 127.0.0.1")
}

fn client() -> reqwest::Client {
    crate::wire::tls::client()
        .no_proxy()
        .build()
        .expect("a client")
}

/// A reply: status, content type, body text.
struct Got {
    status: u16,
    content_type: String,
    text: String,
}

impl Got {
    fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|e| panic!("{e}: {}", self.text))
    }

    /// The SSE events: (event name, data parsed as JSON, or as a string when it is not).
    fn events(&self) -> Vec<(Option<String>, Value)> {
        assert_eq!(self.content_type, "text/event-stream", "{}", self.text);
        assert!(self.text.ends_with("\n\n"), "{:?}", self.text);
        self.text
            .split("\n\n")
            .filter(|b| !b.is_empty())
            .map(|block| {
                let mut name = None;
                let mut data = None;
                for line in block.lines() {
                    if let Some(n) = line.strip_prefix("event: ") {
                        name = Some(n.to_string());
                    } else if let Some(d) = line.strip_prefix("data: ") {
                        assert!(data.is_none(), "two data lines in {block:?}");
                        data = Some(serde_json::from_str(d).unwrap_or_else(|_| json!(d)));
                    } else {
                        panic!("unexpected line {line:?}");
                    }
                }
                (name, data.expect("a data line"))
            })
            .collect()
    }
}

/// POST `body` to `path` of `model`.
async fn post(model: &FakeModel, path: &str, body: &Value) -> Got {
    let req = client().post(format!("{}{path}", model.base_url()));
    send(
        req.header("content-type", "application/json")
            .body(body.to_string()),
    )
    .await
}

async fn send(req: reqwest::RequestBuilder) -> Got {
    let r = req.send().await.expect("the model answers");
    let status = r.status().as_u16();
    let content_type = r
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let text = r.text().await.expect("a body");
    Got {
        status,
        content_type,
        text,
    }
}

/// The event names of `events`.
fn names(events: &[(Option<String>, Value)]) -> Vec<&str> {
    events
        .iter()
        .map(|(n, _)| n.as_deref().unwrap_or("-"))
        .collect()
}

//! The record of one session's JSON-RPC traffic: every line in both directions, requests by id,
//! and responses with the byte range of their `result`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Deserialize;
use serde_json::value::RawValue;

/// Which way a message went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Sent,
    Received,
}

/// One line of a server's traffic, shared by everything that keeps it. A `String` behind the
/// count, not a `str`: a line read into a buffer becomes one without its bytes being copied
/// (a 60 MB result was held twice while it was copied).
pub type Line = Arc<String>;

/// One line of traffic, kept verbatim.
#[derive(Debug, Clone)]
pub struct WireEvent {
    pub direction: Direction,
    pub at_ms: u64,
    pub line: Line,
}

/// A response as the server sent it.
#[derive(Debug, Clone)]
pub struct RawResponse {
    line: Line,
    result: Option<(usize, usize)>,
    /// The JSON-RPC error object, when the server answered with one.
    pub error: Option<serde_json::Value>,
}

impl RawResponse {
    /// Parse a response line; `None` when it is not a JSON-RPC response.
    pub fn parse(line: Line) -> Option<(String, RawResponse)> {
        #[derive(Deserialize)]
        struct Msg<'a> {
            id: Option<serde_json::Value>,
            method: Option<&'a str>,
            // `"result": null` is a result (of a server that answers with nothing), not none
            #[serde(borrow, default, deserialize_with = "present")]
            result: Option<&'a RawValue>,
            error: Option<serde_json::Value>,
        }
        fn present<'de, D: serde::Deserializer<'de>>(
            d: D,
        ) -> Result<Option<&'de RawValue>, D::Error> {
            <&RawValue>::deserialize(d).map(Some)
        }
        let msg: Msg = serde_json::from_str(&line).ok()?;
        if msg.method.is_some() || (msg.result.is_none() && msg.error.is_none()) {
            return None;
        }
        let id = msg.id?.to_string();
        let result = msg.result.map(|r| {
            let start = r.get().as_ptr() as usize - line.as_ptr() as usize;
            (start, start + r.get().len())
        });
        let error = msg.error;
        Some((
            id,
            RawResponse {
                line: line.clone(),
                result,
                error,
            },
        ))
    }

    /// The exact text of `result`, as the server wrote it ("" for an error response).
    pub fn result_text(&self) -> &str {
        self.result.map(|(s, e)| &self.line[s..e]).unwrap_or("")
    }

    /// The whole response line.
    pub fn line(&self) -> &str {
        &self.line
    }
}

#[derive(Debug, Default)]
struct State {
    events: Vec<WireEvent>,
    keep_events: bool,
    /// id of the newest request sent for each method
    last_request: HashMap<String, String>,
    /// method of each request sent, by id, until its response arrives
    pending: HashMap<String, String>,
    responses: HashMap<String, RawResponse>,
    warnings: Vec<String>,
    /// Where the server's notifications go, once someone asked for them (the proxy).
    notifications: Option<tokio::sync::mpsc::UnboundedSender<Line>>,
}

/// A response to a request that was waiting for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answered {
    pub method: String,
    /// The id as JSON text.
    pub id: String,
    pub error: bool,
}

/// A JSON-RPC notification: a `method` and no `id`.
fn is_notification(line: &str) -> bool {
    #[derive(Deserialize)]
    struct Msg<'a> {
        #[serde(borrow)]
        method: Option<&'a str>,
        id: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_str::<Msg>(line).is_ok_and(|m| m.method.is_some() && m.id.is_none())
}

/// Shared between the pumps (writers) and the session (reader).
#[derive(Debug, Clone)]
pub struct Wire {
    state: Arc<Mutex<State>>,
    started: Instant,
    order: Arc<NotificationOrder>,
}

/// How far the subscriber has got with the notifications handed to it, so that whoever got a
/// response can wait until the notifications that came before it were dealt with (the proxy
/// forwards a call's progress before its result, as the server sent them).
#[derive(Debug, Default)]
pub struct NotificationOrder {
    queued: AtomicU64,
    done: AtomicU64,
    changed: tokio::sync::Notify,
}

impl NotificationOrder {
    /// How many notifications were handed to the subscriber so far.
    pub fn queued(&self) -> u64 {
        self.queued.load(Ordering::SeqCst)
    }

    /// The subscriber dealt with one more.
    pub fn done_one(&self) {
        self.done.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_waiters();
    }

    /// Wait until the subscriber has dealt with the first `n` notifications.
    pub async fn wait_for(&self, n: u64) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.done.load(Ordering::SeqCst) >= n {
                return;
            }
            changed.await;
        }
    }
}

impl Wire {
    /// A wire record; `keep_events` also keeps the full transcript (for `--record`).
    pub fn new(keep_events: bool) -> Self {
        Wire {
            state: Arc::new(Mutex::new(State {
                keep_events,
                ..State::default()
            })),
            started: Instant::now(),
            order: Arc::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // a panic while holding the lock leaves plain data behind; keep using it
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn event(&self, st: &mut State, direction: Direction, line: &Line) {
        if st.keep_events {
            let at_ms = self.started.elapsed().as_millis() as u64;
            st.events.push(WireEvent {
                direction,
                at_ms,
                line: line.clone(),
            });
        }
    }

    /// Record a line we sent to the server.
    pub fn sent(&self, line: Line) {
        #[derive(Deserialize)]
        struct Req {
            id: Option<serde_json::Value>,
            method: Option<String>,
        }
        let mut st = self.lock();
        if let Ok(Req {
            id: Some(id),
            method: Some(method),
        }) = serde_json::from_str(&line)
        {
            let id = id.to_string();
            st.pending.insert(id.clone(), method.clone());
            st.last_request.insert(method, id);
        }
        self.event(&mut st, Direction::Sent, &line);
    }

    /// Whether a request of this method was sent.
    pub fn has_sent(&self, method: &str) -> bool {
        self.lock().last_request.contains_key(method)
    }

    /// Record a JSON line the server sent. When it is a response to a request we wait for,
    /// returns that request's method, its id (as JSON text) and whether it is an error.
    pub fn received(&self, line: Line) -> Option<Answered> {
        let parsed = RawResponse::parse(line.clone());
        let mut st = self.lock();
        let mut answered = None;
        if let Some((id, resp)) = parsed {
            // an answer to nothing we are waiting for (a repeat, or a forgotten request) is
            // not kept
            if let Some(method) = st.pending.remove(&id) {
                answered = Some(Answered {
                    method,
                    id: id.clone(),
                    error: resp.error.is_some(),
                });
                st.responses.insert(id, resp);
            }
        } else if let Some(tx) = &st.notifications {
            if is_notification(&line) && tx.send(line.clone()).is_ok() {
                self.order.queued.fetch_add(1, Ordering::SeqCst);
            }
        }
        self.event(&mut st, Direction::Received, &line);
        answered
    }

    /// Every notification the server sends from now on, as its exact line, and the count of
    /// those handed over and dealt with (call [`NotificationOrder::done_one`] for each).
    pub fn subscribe_notifications(
        &self,
    ) -> (
        tokio::sync::mpsc::UnboundedReceiver<Line>,
        Arc<NotificationOrder>,
    ) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let mut st = self.lock();
        st.notifications = Some(tx);
        // what an earlier subscriber left unread will never be dealt with
        let queued = self.order.queued.load(Ordering::SeqCst);
        self.order.done.store(queued, Ordering::SeqCst);
        (rx, self.order.clone())
    }

    /// The count of notifications handed to the subscriber and dealt with.
    pub fn notification_order(&self) -> &NotificationOrder {
        &self.order
    }

    /// Stop waiting for the answer to the request with this id (it was cancelled): an answer
    /// that still comes is dropped.
    pub fn forget(&self, id: &str) {
        let mut st = self.lock();
        st.pending.remove(id);
        st.responses.remove(id);
    }

    /// Remember something odd the server did (non-JSON output, bad UTF-8).
    pub fn warn(&self, message: String) {
        let mut st = self.lock();
        if st.warnings.len() < 20 {
            st.warnings.push(message);
        }
    }

    /// The response to the newest request of `method`, taken out of the record.
    pub fn take_response(&self, method: &str) -> Option<RawResponse> {
        let mut st = self.lock();
        let id = st.last_request.get(method)?.clone();
        st.responses.remove(&id)
    }

    /// The response to the request with this id (its JSON text, e.g. `7` or `"a"`).
    pub fn take_response_by_id(&self, id: &str) -> Option<RawResponse> {
        self.lock().responses.remove(id)
    }

    pub fn warnings(&self) -> Vec<String> {
        self.lock().warnings.clone()
    }

    /// The transcript so far (empty unless created with `keep_events`).
    pub fn events(&self) -> Vec<WireEvent> {
        self.lock().events.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_result_text_byte_exact_and_matches_by_method() {
        let wire = Wire::new(true);
        wire.sent(Arc::new(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_string(),
        ));
        let line = r#"{"result":{"tools":[],"z":1,  "a":"\u00e9"},"jsonrpc":"2.0","id":1}"#;
        wire.received(Arc::new(line.to_string()));
        wire.received(Arc::new(
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}".to_string(),
        ));
        let r = wire.take_response("tools/list").unwrap();
        assert!(wire.take_response("tools/list").is_none());
        assert_eq!(
            wire.received(Arc::new(
                r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_string()
            )),
            None,
            "a second answer to the same id is not matched to a request again"
        );
        wire.sent(Arc::new(
            r#"{"jsonrpc":"2.0","id":"c","method":"tools/call"}"#.to_string(),
        ));
        assert_eq!(
            wire.received(Arc::new(
                r#"{"jsonrpc":"2.0","id":"c","result":{}}"#.to_string()
            )),
            Some(Answered {
                method: "tools/call".into(),
                id: "\"c\"".into(),
                error: false
            })
        );
        // an error answers its request too, and says so
        wire.sent(Arc::new(
            r#"{"jsonrpc":"2.0","id":0,"method":"server/discover"}"#.to_string(),
        ));
        assert_eq!(
            wire.received(Arc::new(
                r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"no"}}"#.to_string()
            )),
            Some(Answered {
                method: "server/discover".into(),
                id: "0".into(),
                error: true
            })
        );
        assert_eq!(r.result_text(), r#"{"tools":[],"z":1,  "a":"\u00e9"}"#);
        assert_eq!(wire.events().len(), 8);
    }

    #[test]
    fn error_responses_keep_the_error() {
        let (id, r) = RawResponse::parse(Arc::new(
            r#"{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"nope"}}"#.to_string(),
        ))
        .unwrap();
        assert_eq!(id, "\"a\"");
        assert_eq!(r.result_text(), "");
        assert_eq!(r.error.unwrap()["code"], -32601);
    }
}

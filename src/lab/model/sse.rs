//! Reply bodies: a JSON body, or a server-sent event stream written one event per chunk
//! (`event: NAME` when the API names its events, `data: JSON`, a blank line).

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full, StreamBody};
use hyper::body::Frame;
use hyper::{Response, StatusCode};
use serde_json::Value;

pub(super) type Answer = Response<BoxBody<Bytes, Infallible>>;

/// One event of a stream: its name (None for APIs without `event:` lines) and its data.
pub(super) struct Event {
    pub name: Option<&'static str>,
    pub data: String,
}

impl Event {
    /// A named event whose data is `data` as JSON.
    pub(super) fn named(name: &'static str, data: &Value) -> Event {
        Event {
            name: Some(name),
            data: data.to_string(),
        }
    }

    /// An unnamed event (`data:` only).
    pub(super) fn data(data: impl Into<String>) -> Event {
        Event {
            name: None,
            data: data.into(),
        }
    }

    fn wire(&self) -> Bytes {
        let mut out = String::with_capacity(self.data.len() + 32);
        if let Some(name) = self.name {
            out.push_str("event: ");
            out.push_str(name);
            out.push('\n');
        }
        out.push_str("data: ");
        out.push_str(&self.data);
        out.push_str("\n\n");
        Bytes::from(out)
    }
}

/// A 200 `text/event-stream` reply of `events`, each its own chunk.
pub(super) fn stream(events: Vec<Event>) -> Answer {
    let frames = events
        .into_iter()
        .map(|e| Ok::<_, Infallible>(Frame::data(e.wire())));
    let body = StreamBody::new(futures::stream::iter(frames)).boxed();
    let mut r = Response::new(body);
    let headers = r.headers_mut();
    headers.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        hyper::header::CACHE_CONTROL,
        hyper::header::HeaderValue::from_static("no-cache"),
    );
    r
}

/// A JSON reply with `status`.
pub(super) fn json(status: StatusCode, value: &Value) -> Answer {
    let mut r = Response::new(Full::new(Bytes::from(value.to_string())).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    r
}

/// Seconds since the Unix epoch, for the `created` fields.
pub(super) fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

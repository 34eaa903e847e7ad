//! The HTTP client the OTLP exporters send with: the crate's reqwest with its TLS (rustls, the
//! system's trust store: `wire/tls.rs`), blocking, so it runs on the exporter's thread and never
//! on a call's. The SDK's own client is the same reqwest without TLS: an https collector failed.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{Request, Response};
use opentelemetry_http::{HttpClient, HttpError};

/// The most of a collector's answer that is read (the SDK's own clients read as much).
const MAX_ANSWER: u64 = 4 * 1024 * 1024;

/// A blocking reqwest client for the exporters.
#[derive(Debug, Clone)]
pub struct Blocking(reqwest::blocking::Client, Cause);

/// Why the client's last request failed, for the line that says an export failed: the SDK's
/// own error says only `network error`.
#[derive(Debug, Clone, Default)]
pub struct Cause(Arc<Mutex<Option<String>>>);

impl Cause {
    /// The last failure's reason, taken (`: reason`), or nothing.
    pub fn take(&self) -> String {
        let taken = self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        taken.map(|c| format!(": {c}")).unwrap_or_default()
    }

    fn set(&self, why: String) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(why);
    }
}

impl Blocking {
    /// A client whose requests, answers included, end after `timeout`. Built on a thread of
    /// its own: a blocking client may not be built inside the async runtime.
    pub fn new(timeout: std::time::Duration) -> Result<Blocking, String> {
        std::thread::Builder::new()
            .name("otlp-client".into())
            .spawn(move || {
                crate::wire::tls::blocking_client()
                    .timeout(timeout)
                    .build()
                    .map(|c| Blocking(c, Cause::default()))
                    .map_err(|e| format!("the HTTP client: {e}"))
            })
            .map_err(|e| format!("a thread for the HTTP client: {e}"))?
            .join()
            .map_err(|_| "the HTTP client's thread panicked".to_string())?
    }

    /// The reason of the client's last failure, shared with whoever reports it.
    pub fn cause(&self) -> Cause {
        self.1.clone()
    }

    /// `e` as the exporter's error, its causes kept for [`Cause::take`].
    fn failed(&self, e: &dyn std::error::Error) -> HttpError {
        let why = match crate::ground::text::error_causes(e).join(": ") {
            c if c.is_empty() => e.to_string(),
            c => format!("{e}: {c}"),
        };
        self.1.set(why.clone());
        why.into()
    }
}

#[async_trait::async_trait]
impl HttpClient for Blocking {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        use std::io::Read;
        let (parts, body) = request.into_parts();
        let mut answer = self
            .0
            .request(parts.method, parts.uri.to_string())
            .headers(parts.headers)
            .body(body.to_vec())
            .send()
            // the URL left out: it is the configured endpoint, which may carry a credential
            .map_err(|e| self.failed(&e.without_url()))?;
        let status = answer.status();
        let headers = std::mem::take(answer.headers_mut());
        let mut read = Vec::new();
        answer
            .take(MAX_ANSWER + 1)
            .read_to_end(&mut read)
            .map_err(|e| self.failed(&e))?;
        if read.len() as u64 > MAX_ANSWER {
            return Err(format!("the collector's answer is over {MAX_ANSWER} bytes").into());
        }
        let mut out = Response::builder().status(status).body(Bytes::from(read))?;
        *out.headers_mut() = headers;
        Ok(out)
    }
}

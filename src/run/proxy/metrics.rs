//! The proxy's metrics for Prometheus: `GET /metrics` on `--listen`'s address (behind its bearer
//! token), or on a listener of its own (`--metrics-listen ADDR`, for a proxy on stdio), as
//! OpenMetrics text. The own listener serves that one path, HTTP/1.1, with a header timeout and
//! a small buffer: a slow scraper holds one connection of a few, nothing more.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};

use crate::output::telemetry::Telemetry;

/// The content type of OpenMetrics text.
pub const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Scrapes served at once at most by `--metrics-listen`.
const MAX_SCRAPERS: usize = 16;

pub(super) type Reply = Response<BoxBody<Bytes, std::convert::Infallible>>;

/// Whether `req` asks for the metrics (`GET /metrics`, any query).
pub(super) fn is_metrics<B>(req: &Request<B>) -> bool {
    req.method() == hyper::Method::GET && req.uri().path() == "/metrics"
}

/// The metrics, or 404 when none are kept.
pub(super) fn metrics_reply(telemetry: &Telemetry) -> Reply {
    match telemetry.prometheus_text() {
        Some(text) => {
            let mut r = Response::new(Full::new(Bytes::from(text)).boxed());
            r.headers_mut().insert(
                hyper::header::CONTENT_TYPE,
                hyper::header::HeaderValue::from_static(OPENMETRICS),
            );
            r
        }
        None => status(StatusCode::NOT_FOUND, "no metrics are kept\n"),
    }
}

fn status(code: StatusCode, text: &'static str) -> Reply {
    let mut r = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *r.status_mut() = code;
    if code == StatusCode::UNAUTHORIZED {
        r.headers_mut().insert(
            hyper::header::WWW_AUTHENTICATE,
            hyper::header::HeaderValue::from_static("Bearer"),
        );
    }
    r
}

/// The `Authorization` header a token asks for: made once, when the listener starts.
pub(super) fn bearer_header(token: Option<String>) -> Option<String> {
    token.map(|t| format!("Bearer {t}"))
}

/// A request's `Authorization` against the header wanted ([`bearer_header`]), compared in
/// constant time.
pub(super) fn authorized<B>(req: &Request<B>, wanted: Option<&str>) -> bool {
    let Some(want) = wanted else {
        return true;
    };
    let given = req
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .map(|v| v.as_bytes())
        .unwrap_or_default();
    let want = want.as_bytes();
    given.len() == want.len()
        && given
            .iter()
            .zip(want)
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// Bind `addr` and serve `/metrics` there (with `bearer` required when given); the bound
/// address and the serving future.
pub async fn listen_metrics(
    addr: SocketAddr,
    bearer: Option<String>,
    telemetry: Arc<Telemetry>,
) -> std::io::Result<(SocketAddr, impl std::future::Future<Output = ()>)> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_SCRAPERS));
    let bearer = Arc::new(bearer_header(bearer));
    let serve = async move {
        loop {
            let Ok(slot) = slots.clone().acquire_owned().await else {
                return;
            };
            let Ok((stream, _)) = listener.accept().await else {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            };
            let _ = stream.set_nodelay(true);
            let (telemetry, bearer) = (telemetry.clone(), bearer.clone());
            tokio::spawn(async move {
                let _slot = slot;
                let handler =
                    hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                        let reply = if !authorized(&req, bearer.as_deref()) {
                            status(StatusCode::UNAUTHORIZED, "missing or wrong bearer token\n")
                        } else if is_metrics(&req) {
                            metrics_reply(&telemetry)
                        } else {
                            status(StatusCode::NOT_FOUND, "only /metrics is served here\n")
                        };
                        async move { Ok::<_, std::convert::Infallible>(reply) }
                    });
                let _ = tokio::time::timeout(
                    Duration::from_secs(30),
                    hyper::server::conn::http1::Builder::new()
                        .timer(TokioTimer::new())
                        .header_read_timeout(Duration::from_secs(5))
                        .max_buf_size(16 * 1024)
                        .serve_connection(TokioIo::new(stream), handler),
                )
                .await;
            });
        }
    };
    Ok((bound, serve))
}

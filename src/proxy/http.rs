//! The proxy over streamable HTTP (`proxy --listen ADDR`): rmcp's streamable-HTTP server with
//! Host and Origin checked against loopback (DNS rebinding), and an optional bearer token.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::Proxy;

/// Where and how to listen.
#[derive(Debug, Clone)]
pub struct ListenOptions {
    pub addr: SocketAddr,
    /// Requests must carry `Authorization: Bearer <token>`.
    pub bearer: Option<String>,
    /// Host names accepted besides the loopback ones (for a non-loopback `addr`).
    pub extra_hosts: Vec<String>,
}

/// The config: loopback hosts (plus `extra`) and loopback browser origins only.
fn config(extra: &[String]) -> StreamableHttpServerConfig {
    let mut c = StreamableHttpServerConfig::default();
    c.allowed_hosts = ["localhost", "127.0.0.1", "::1", "[::1]"]
        .iter()
        .map(|h| h.to_string())
        .chain(extra.iter().cloned())
        .collect();
    c.allowed_origins = vec![
        "http://localhost:*".into(),
        "http://127.0.0.1:*".into(),
        "http://[::1]:*".into(),
    ];
    c
}

fn plain(
    status: StatusCode,
    text: &'static str,
) -> Response<BoxBody<Bytes, std::convert::Infallible>> {
    let mut r = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *r.status_mut() = status;
    if status == StatusCode::UNAUTHORIZED {
        r.headers_mut().insert(
            hyper::header::WWW_AUTHENTICATE,
            hyper::header::HeaderValue::from_static("Bearer"),
        );
    }
    r
}

/// Whether two byte strings are equal, in time that does not depend on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Bind `opts.addr`; returns the bound address and the serving future.
pub async fn listen(
    proxy: Proxy,
    opts: ListenOptions,
) -> std::io::Result<(SocketAddr, impl std::future::Future<Output = ()>)> {
    let listener = tokio::net::TcpListener::bind(opts.addr).await?;
    let bound = listener.local_addr()?;
    let service = Arc::new(StreamableHttpService::new(
        move || Ok(proxy.for_new_client()),
        Arc::new(LocalSessionManager::default()),
        config(&opts.extra_hosts),
    ));
    let bearer = opts.bearer.map(|t| format!("Bearer {t}"));
    let serve = async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let (service, bearer) = (service.clone(), bearer.clone());
            tokio::spawn(async move {
                let handler =
                    hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                        let (service, bearer) = (service.clone(), bearer.clone());
                        async move {
                            if let Some(want) = &bearer {
                                let given = req
                                    .headers()
                                    .get(hyper::header::AUTHORIZATION)
                                    .map(|v| v.as_bytes())
                                    .unwrap_or_default();
                                if !same(given, want.as_bytes()) {
                                    return Ok::<_, std::convert::Infallible>(plain(
                                        StatusCode::UNAUTHORIZED,
                                        "missing or wrong bearer token\n",
                                    ));
                                }
                            }
                            Ok(service.handle(req).await)
                        }
                    });
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), handler)
                    .await;
            });
        }
    };
    Ok((bound, serve))
}

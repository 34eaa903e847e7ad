//! What a request to a server carries and how its answer is awaited: list requests by method,
//! a client's call with its `_meta` and cancellation, and the outcome of a tool call.

use rmcp::model::{ClientRequest, PaginatedRequestParams, ProgressToken, RequestMetaObject};
use rmcp::service::{RequestHandle, ServiceError, ServiceRole};

use super::{RawResponse, UpstreamError};

/// The answer to a request sent with `handle`, or `None` when `cancelled` completes first: the
/// peer is then sent `notifications/cancelled` with `reason`. (Both directions use it: the
/// proxy's upstream session, and the proxy passing its upstream's requests to its client.)
pub async fn answer_or_cancel<R: ServiceRole>(
    mut handle: RequestHandle<R>,
    cancelled: impl std::future::Future<Output = ()>,
    reason: &str,
) -> Option<Result<R::PeerResp, ServiceError>> {
    let rx = std::mem::replace(&mut handle.rx, tokio::sync::oneshot::channel().1);
    tokio::select! {
        r = rx => Some(r.unwrap_or(Err(ServiceError::TransportClosed))),
        () = cancelled => {
            let _ = handle.cancel(Some(reason.into())).await;
            None
        }
    }
}

/// A list request (`tools/list`, `prompts/list`, `resources/list`) for one page.
pub(crate) fn list_request(
    method: &str,
    cursor: Option<String>,
) -> Result<ClientRequest, UpstreamError> {
    let params = PaginatedRequestParams::default().with_cursor(cursor);
    Ok(match method {
        "tools/list" => {
            ClientRequest::ListToolsRequest(rmcp::model::ListToolsRequest::with_param(params))
        }
        "prompts/list" => {
            ClientRequest::ListPromptsRequest(rmcp::model::ListPromptsRequest::with_param(params))
        }
        "resources/list" => ClientRequest::ListResourcesRequest(
            rmcp::model::ListResourcesRequest::with_param(params),
        ),
        other => {
            return Err(UpstreamError::Request {
                method: other.into(),
                message: "not a list method".into(),
            })
        }
    })
}

/// What a call made for a client carries besides the tool and its arguments.
pub struct Forwarded<C, S> {
    /// The client's `_meta`; its progress token is replaced by this session's own.
    pub meta: Option<RequestMetaObject>,
    /// Completes when the client cancels the call.
    pub cancelled: C,
    /// Told the progress token the server sees, before any progress can arrive.
    pub on_sent: S,
}

impl Default for Forwarded<std::future::Pending<()>, fn(&ProgressToken)> {
    fn default() -> Self {
        Forwarded {
            meta: None,
            cancelled: std::future::pending(),
            on_sent: |_| {},
        }
    }
}

/// What a tool call gave back.
#[derive(Debug)]
pub struct CallOutcome {
    pub response: RawResponse,
    pub latency_ms: f64,
}

//! The upstream's requests of its client (sampling, elicitation, roots), relayed to the
//! proxy's client whose call is running.

use std::sync::Arc;

use rmcp::ErrorData;

use super::clients::{Client, Clients};
use super::locked::lock;
use crate::wire::upstream::{answer_or_cancel, BoxFuture, Downstream};

/// Whether `client` offers `what`, else the error the upstream gets.
fn offered(
    client: &Client,
    what: &str,
    offers: impl Fn(&rmcp::model::ClientCapabilities) -> bool,
) -> Result<(), ErrorData> {
    let info = client.peer.peer_info();
    if info.as_ref().is_some_and(|i| offers(&i.capabilities)) {
        return Ok(());
    }
    let name = info.map_or("the client".into(), |i| {
        format!("the client `{}`", i.client_info.name)
    });
    Err(ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!("{name} of the mcp-budget proxy does not support {what}"),
        None,
    ))
}

/// What the proxy's client answered (or failed to) on the upstream's behalf.
fn client_error(what: &str, e: rmcp::service::ServiceError) -> ErrorData {
    match e {
        rmcp::service::ServiceError::McpError(e) => e,
        other => ErrorData::internal_error(
            format!("the mcp-budget proxy's client did not answer the {what} request: {other}"),
            None,
        ),
    }
}

/// Passes the upstream's requests of its client (sampling, elicitation, roots) on to the
/// proxy's client, so a server that asks its user or its model something works through the
/// proxy as it does directly. The upstream cancelling its request cancels it at the client.
pub(super) struct ClientRelay {
    pub(super) clients: Arc<Clients>,
}

impl ClientRelay {
    /// Send `request` to `client`, cancelling it there if the upstream cancels its own.
    async fn ask(
        client: &Client,
        what: &str,
        request: rmcp::model::ServerRequest,
        cancelled: tokio_util::sync::CancellationToken,
    ) -> Result<rmcp::model::ClientResult, ErrorData> {
        let handle = client
            .peer
            .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
            .await
            .map_err(|e| client_error(what, e))?;
        match answer_or_cancel(
            handle,
            cancelled.cancelled(),
            "cancelled by the upstream server",
        )
        .await
        {
            Some(answer) => answer.map_err(|e| client_error(what, e)),
            None => Err(ErrorData::internal_error(
                format!("the {what} request was cancelled by the upstream server"),
                None,
            )),
        }
    }
}

#[allow(deprecated)] // sampling and roots: current in the protocol versions spoken today
impl Downstream for ClientRelay {
    fn create_message(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
        cancelled: tokio_util::sync::CancellationToken,
    ) -> BoxFuture<'_, Result<rmcp::model::CreateMessageResult, ErrorData>> {
        Box::pin(async move {
            let client = self.clients.caller("sampling")?;
            offered(&client, "sampling", |c| c.sampling.is_some())?;
            let request = rmcp::model::ServerRequest::CreateMessageRequest(
                rmcp::model::CreateMessageRequest::new(params),
            );
            match Self::ask(&client, "sampling", request, cancelled).await? {
                rmcp::model::ClientResult::CreateMessageResult(r) => Ok(*r),
                _ => Err(ErrorData::internal_error(
                    "the client answered sampling with something else",
                    None,
                )),
            }
        })
    }

    fn create_elicitation(
        &self,
        params: rmcp::model::ElicitRequestParams,
        cancelled: tokio_util::sync::CancellationToken,
    ) -> BoxFuture<'_, Result<rmcp::model::ElicitResult, ErrorData>> {
        Box::pin(async move {
            let client = self.clients.caller("elicitation")?;
            offered(&client, "elicitation", |c| c.elicitation.is_some())?;
            let request =
                rmcp::model::ServerRequest::ElicitRequest(rmcp::model::ElicitRequest::new(params));
            match Self::ask(&client, "elicitation", request, cancelled).await? {
                rmcp::model::ClientResult::ElicitResult(r) => Ok(r),
                _ => Err(ErrorData::internal_error(
                    "the client answered elicitation with something else",
                    None,
                )),
            }
        })
    }

    fn list_roots(
        &self,
        cancelled: tokio_util::sync::CancellationToken,
    ) -> BoxFuture<'_, Result<rmcp::model::ListRootsResult, ErrorData>> {
        Box::pin(async move {
            // the roots of the client that last gave some; a client without roots (or none
            // connected) has none to give, and an empty list keeps the server's own
            let owner = lock(&self.clients.roots_from).and_then(|id| self.clients.get(id));
            let Some(client) = owner.filter(|c| offered(c, "roots", |c| c.roots.is_some()).is_ok())
            else {
                return Ok(rmcp::model::ListRootsResult::default());
            };
            let request = rmcp::model::ServerRequest::ListRootsRequest(Default::default());
            match Self::ask(&client, "roots", request, cancelled).await? {
                rmcp::model::ClientResult::ListRootsResult(r) => Ok(r),
                _ => Err(ErrorData::internal_error(
                    "the client answered roots/list with something else",
                    None,
                )),
            }
        })
    }
}

//! The client side of an upstream session. Alone (`audit`) it offers the server nothing: no
//! sampling, elicitation or roots. Standing in for another client (the proxy), it declares all
//! three and hands each such request from the server to a [`Downstream`].

// rmcp marks sampling and roots deprecated for the protocol after 2025-11-25 (SEP-2577); the
// versions servers and clients speak today have them.
#![allow(deprecated)]

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, Implementation, ListRootsResult,
};
use rmcp::service::{RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};
use tokio_util::sync::CancellationToken;

/// A boxed future that can cross threads.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Whoever answers the requests a server makes of its client, when the session stands in for
/// another client (the proxy forwards them to its own client).
/// Each request comes with a token the server cancels by `notifications/cancelled`.
pub trait Downstream: Send + Sync + 'static {
    fn create_message(
        &self,
        params: CreateMessageRequestParams,
        cancelled: CancellationToken,
    ) -> BoxFuture<'_, Result<CreateMessageResult, ErrorData>>;
    fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        cancelled: CancellationToken,
    ) -> BoxFuture<'_, Result<ElicitResult, ErrorData>>;
    fn list_roots(
        &self,
        cancelled: CancellationToken,
    ) -> BoxFuture<'_, Result<ListRootsResult, ErrorData>>;
}

/// The rmcp client handler of a session.
#[derive(Clone)]
pub(crate) struct UpstreamClient {
    info: ClientConfig,
    downstream: Option<Arc<dyn Downstream>>,
}

impl UpstreamClient {
    pub(crate) fn new(downstream: Option<Arc<dyn Downstream>>) -> Self {
        let capabilities: ClientCapabilities = if downstream.is_some() {
            serde_json::from_value(serde_json::json!({
                "sampling": {},
                "elicitation": {"form": {}, "url": {}},
                "roots": {"listChanged": true},
            }))
            .expect("static client capabilities")
        } else {
            ClientCapabilities::default()
        };
        let mut info = ClientConfig::new(
            capabilities,
            Implementation::new("mcp-budget", env!("CARGO_PKG_VERSION")),
        );
        // `initialize` offers the newest version of the handshake era (2026-07-28 has no
        // handshake: it is asked for with `server/discover`)
        info.protocol_version = rmcp::model::ProtocolVersion::V_2025_11_25;
        UpstreamClient { info, downstream }
    }
}

impl ClientHandler for UpstreamClient {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        match &self.downstream {
            Some(d) => d.create_message(params, context.ct).await,
            None => Err(ErrorData::method_not_found::<
                rmcp::model::CreateMessageRequestMethod,
            >()),
        }
    }

    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        match &self.downstream {
            Some(d) => d.create_elicitation(params, context.ct).await,
            None => Err(ErrorData::method_not_found::<
                rmcp::model::ElicitationCreateRequestMethod,
            >()),
        }
    }

    async fn list_roots(
        &self,
        context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        match &self.downstream {
            Some(d) => d.list_roots(context.ct).await,
            None => Ok(ListRootsResult::default()),
        }
    }
}

//! The proxy server: the handle every client session clones, and its start-up (connect to the
//! upstream, read its tools, build the shared state).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use serde_json::{json, Value};

use super::clients::Clients;
use super::filter::{GlobError, ToolFilter};
use super::notify::{expire_exposed, relay_notifications};
use super::options::ProxyOptions;
use super::relay::ClientRelay;
use super::startup::Startup;
use super::state::Shared;
use super::tools::{label_tools, listing, upstream_tools, ToolView};
use super::upstream::{subscribe, Upstream};
use crate::config::ServerSpec;
use crate::wire::upstream::{SessionOptions, UpstreamError};

/// The proxy server (cheap to clone: the state is shared).
#[derive(Clone)]
pub struct Proxy {
    pub(super) shared: Arc<Shared>,
    /// Which client this handler serves (each HTTP session gets its own, see
    /// [`Proxy::for_new_client`]).
    pub(super) client_id: u64,
    pub startup: Startup,
}

impl Proxy {
    /// Connect to the upstream and read its tools.
    pub async fn start(
        spec: &ServerSpec,
        session_opts: &SessionOptions,
        opts: ProxyOptions,
    ) -> Result<Proxy, ProxyStartError> {
        let filter = ToolFilter::new(&opts.allow, &opts.deny)?;
        let clients = Arc::new(Clients::new());
        let relay = Arc::new(ClientRelay {
            clients: clients.clone(),
        });
        let session_opts = SessionOptions {
            downstream: Some(relay.clone()),
            ..session_opts.clone()
        };
        let session = Arc::new(crate::wire::connect::connect(spec, &session_opts).await?);
        let first_notes = subscribe(&session);
        let init: Value =
            serde_json::from_str(session.initialize_response().result_text()).unwrap_or_default();
        let (all, warnings) = upstream_tools(&session, &opts.server).await?;
        let listed = listing(&all, &filter, &opts)?;
        label_tools(&all, &opts);
        let startup = listed.2.clone();
        let info = server_info(&init, session.protocol_version(), &opts.server);
        let upstream = Upstream::new(spec.clone(), session_opts, session, clients.clone());
        let tools = ToolView::new(filter, listed);
        let shared = Arc::new(Shared::new(Arc::new(upstream), clients, tools, opts, info));
        if let Some(ttl) = shared.opts.lazy_expose.filter(|_| shared.opts.lazy_tools) {
            expire_exposed(Arc::downgrade(&shared), ttl);
        }
        warnings.into_iter().for_each(|w| shared.warn(w));
        relay_notifications(Arc::downgrade(&shared), first_notes);
        Ok(Proxy {
            shared,
            client_id: 0,
            startup,
        })
    }

    /// What the proxy has to tell its operator (each message once), from the start on: the
    /// binary prints them on stderr. `None` after the first call.
    pub fn warnings(&self) -> Option<tokio::sync::mpsc::UnboundedReceiver<String>> {
        self.shared.warnings.take()
    }

    /// The handler for one more client (an HTTP session): the same proxy, its own identity.
    pub fn for_new_client(&self) -> Proxy {
        Proxy {
            client_id: self.shared.clients.next_id(),
            ..self.clone()
        }
    }

    /// How many times the upstream was started again after it died.
    pub fn restarts(&self) -> usize {
        self.shared.upstream.restarts.load(Ordering::SeqCst)
    }
}

/// What the proxy tells its clients at `initialize` and `server/discover`: the upstream's
/// protocol version, capabilities, server info and instructions (from its `initialize` result,
/// or from its `server/discover` result, which names the server in `_meta`), and always tools
/// (`mcp_budget_read`) and resources (the spills). The era the proxy speaks to its upstream
/// does not bind its clients: rmcp answers each client in its own.
fn server_info(init: &Value, version: Option<String>, server: &str) -> Value {
    let named = init
        .get("serverInfo")
        .or_else(|| init["_meta"].get(crate::measure::SERVER_INFO_META_KEY))
        .cloned();
    let mut info = json!({
        "protocolVersion": init.get("protocolVersion").cloned()
            .or(version.map(Value::from))
            .unwrap_or(json!("2025-11-25")),
        "capabilities": init.get("capabilities").cloned().unwrap_or(json!({})),
        "serverInfo": named.unwrap_or(json!({"name": server, "version": "0"})),
    });
    if let Some(i) = init.get("instructions") {
        info["instructions"] = i.clone();
    }
    info["capabilities"]["tools"] = json!({"listChanged": true});
    if !info["capabilities"]["resources"].is_object() {
        info["capabilities"]["resources"] = json!({});
    }
    info
}

/// Why the proxy could not start.
#[derive(Debug, thiserror::Error)]
pub enum ProxyStartError {
    #[error(transparent)]
    Glob(#[from] GlobError),
    #[error(transparent)]
    Upstream(#[from] UpstreamError),
    #[error("--policy: {0}")]
    Policy(#[from] crate::measure::RequiredHidden),
}

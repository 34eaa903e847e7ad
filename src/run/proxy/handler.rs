//! The rmcp `ServerHandler` of the proxy: each MCP method answered, forwarded or refused.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ServerConfig, SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Value};

use super::clients::{log_rank, Client, LOG_LEVELS};
use super::locked::lock;
use super::read::READ_TOOL;
use super::reply::{from_json, quoted};
use super::server::Proxy;
use super::trace;
use crate::budget::SPILL_URI_PREFIX;

impl Proxy {
    /// This client's roots are the ones the upstream sees now; tell the upstream, so it asks.
    async fn roots_changed(&self) {
        *lock(&self.shared.clients.roots_from) = Some(self.client_id);
        let _ = self
            .shared
            .upstream
            .get()
            .peer()
            .notify_roots_list_changed()
            .await;
    }

    /// The spills in the store, as MCP resources (the store lists only its own regular files,
    /// never a link).
    fn spill_resources(&self) -> Vec<Value> {
        self.shared
            .spills
            .list()
            .into_iter()
            .map(|spill| {
                json!({
                    "uri": spill.uri(),
                    "name": spill.id,
                    "description": "A full tool result that mcp-budget shortened",
                    "mimeType": spill.mime_type(),
                    "size": spill.bytes,
                })
            })
            .collect()
    }
}

/// A request over HTTP without a session (rmcp serves per-request protocol versions so): no
/// client state is kept for it, and it is passed straight through.
fn stateless(context: &RequestContext<RoleServer>) -> bool {
    context
        .extensions
        .get::<hyper::http::request::Parts>()
        .is_some_and(|p| !p.headers.contains_key("mcp-session-id"))
}

impl ServerHandler for Proxy {
    fn get_info(&self) -> ServerConfig {
        serde_json::from_value(self.shared.info.clone()).unwrap_or_else(|_| {
            serde_json::from_value(json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}, "resources": {}},
                "serverInfo": {"name": "mcp-budget-proxy", "version": env!("CARGO_PKG_VERSION")}
            }))
            .expect("static server info is valid")
        })
    }

    /// A client that finished initializing gets the upstream's notifications from now on. A
    /// client with roots becomes the one whose roots the upstream sees, and the upstream is
    /// told they changed, so it asks for them (through the proxy).
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let has_roots = context
            .peer
            .peer_info()
            .is_some_and(|i| i.capabilities.roots.is_some());
        self.shared.clients.live();
        {
            let mut clients = lock(&self.shared.clients.connected);
            clients.push(Client::new(self.client_id, context.peer));
        }
        if has_roots {
            self.roots_changed().await;
        }
    }

    /// The client's roots changed: they are the ones the upstream sees now, and it asks again.
    async fn on_roots_list_changed(&self, _: NotificationContext<RoleServer>) {
        self.roots_changed().await;
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        mut context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let traced = trace::start(&self.shared, &mut context, "tools/list", None, None);
        let tools = self.shared.tools.shown();
        let answer = from_json(json!({"tools": *tools}));
        trace::end(&self.shared, &traced, &answer);
        answer
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let traced = trace::start(
            &self.shared,
            &mut context,
            "tools/call",
            Some(&request.name),
            None,
        );
        let answer = self.call_tool_traced(request, context).await;
        // a forwarded call claimed its span (it ends with the engine's numbers); the proxy's
        // own results and the calls refused end theirs here
        if let Some(span) = traced.claim() {
            let error = match &answer {
                Ok(r) => trace::tool_error(r.is_error == Some(true)),
                Err(e) => Some(trace::rpc_error(e)),
            };
            trace::end_call(
                &self.shared,
                span,
                std::time::SystemTime::now(),
                error,
                None,
            );
        }
        Ok(answer?.into())
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        if self.shared.info["capabilities"]["prompts"].is_null() {
            return from_json(json!({"prompts": []}));
        }
        self.ask("prompts/list", request, &context.ct).await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let result: rmcp::model::GetPromptResult =
            self.ask("prompts/get", request, &context.ct).await?;
        Ok(result.into())
    }

    /// The upstream's resources, and the spills on the first page (listed even when the
    /// upstream fails to list its own).
    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let first_page = request.as_ref().and_then(|r| r.cursor.as_ref()).is_none();
        let mut resources: Vec<Value> = Vec::new();
        let mut next = None;
        if !first_page
            || !self.shared.info["capabilities"]["resources"]
                .as_object()
                .is_none_or(|o| o.is_empty())
        {
            let up: Result<Value, ErrorData> =
                self.ask("resources/list", request, &context.ct).await;
            match up {
                Ok(up) => {
                    resources.extend(up["resources"].as_array().cloned().unwrap_or_default());
                    next = up.get("nextCursor").cloned();
                }
                Err(e) if !first_page => return Err(e),
                Err(_) => {}
            }
        }
        if first_page {
            resources.extend(self.spill_resources());
        }
        let mut body = json!({"resources": resources});
        if let Some(n) = next.filter(|n| !n.is_null()) {
            body["nextCursor"] = n;
        }
        from_json(body)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.clone();
        let traced = trace::start(
            &self.shared,
            &mut context,
            "resources/read",
            None,
            Some(&uri),
        );
        let answer = if uri.starts_with(SPILL_URI_PREFIX) {
            self.read_spill_resource(&uri)
        } else {
            self.ask("resources/read", request, &context.ct).await
        };
        trace::end(&self.shared, &traced, &answer);
        Ok(answer?.into())
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        if self.shared.info["capabilities"]["resources"]
            .as_object()
            .is_none_or(|o| o.is_empty())
        {
            return from_json(json!({"resourceTemplates": []}));
        }
        self.ask("resources/templates/list", request, &context.ct)
            .await
    }

    /// The upstream is subscribed once per URI, while any client wants it. A client without a
    /// session of its own (stateless HTTP) is passed straight through.
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let stateful = !stateless(&context);
        let first = !stateful || {
            let mut subs = lock(&self.shared.clients.subscriptions);
            let who = subs.entry(request.uri.clone()).or_default();
            let first = who.is_empty();
            who.insert(self.client_id);
            first
        };
        if !first {
            return Ok(());
        }
        let told = self.tell("resources/subscribe", &request, &context).await;
        if told.is_err() && stateful {
            if let Some(who) = lock(&self.shared.clients.subscriptions).get_mut(&request.uri) {
                who.remove(&self.client_id);
            }
        }
        told
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let last = stateless(&context) || {
            let mut subs = lock(&self.shared.clients.subscriptions);
            let now_empty = subs.get_mut(&request.uri).is_some_and(|who| {
                who.remove(&self.client_id);
                who.is_empty()
            });
            if now_empty {
                subs.remove(&request.uri);
            }
            now_empty
        };
        if !last {
            return Ok(());
        }
        self.tell("resources/unsubscribe", &request, &context).await
    }

    #[allow(deprecated)] // logging/setLevel is current in the protocol versions spoken today
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if self.shared.info["capabilities"]["logging"].is_null() {
            return Err(ErrorData::method_not_found::<
                rmcp::model::SetLevelRequestMethod,
            >());
        }
        if stateless(&context) {
            return self.tell("logging/setLevel", &request, &context).await;
        }
        // each client gets the messages at its own level and above; the upstream is asked for
        // the most detailed level any (connected) client wants
        let wanted = log_rank(&serde_json::to_value(request.level).unwrap_or_default());
        let lowest = {
            let mut levels = lock(&self.shared.clients.log_levels);
            levels.insert(self.client_id, wanted);
            levels.values().copied().min().unwrap_or(wanted)
        };
        self.tell(
            "logging/setLevel",
            json!({"level": LOG_LEVELS[lowest]}),
            &context,
        )
        .await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        if self.shared.info["capabilities"]["completions"].is_null() {
            return Err(ErrorData::method_not_found::<
                rmcp::model::CompleteRequestMethod,
            >());
        }
        self.ask("completion/complete", request, &context.ct).await
    }
}

impl Proxy {
    /// A tool call: the proxy's own read tool, a lazy tool, or one forwarded upstream.
    async fn call_tool_traced(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResult, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        if request.name == READ_TOOL {
            return self.read_call(args).await;
        }
        if let Some(result) = self.lazy_call(&request.name, &args, &context).await {
            return result;
        }
        if !self.shared.tools.filter.shows(&request.name)
            || self
                .shared
                .opts
                .engine
                .policy()
                .for_tool(&request.name)
                .hide
        {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{}`", quoted(&request.name)),
                None,
            ));
        }
        self.forward(&request.name, args, context, None).await
    }
}

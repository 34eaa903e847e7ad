//! The proxy: an MCP server (rmcp) in front of one upstream server. The client sees the
//! upstream's tools under their own names and schemas (filtered by `--allow`/`--deny`), every
//! tool result goes through the budget engine, and one added tool, `mcp_budget_read`, pages
//! through what the engine spilled. Spills are also listed and readable as resources.

mod http;
mod read;
mod warnings;

pub use crate::calllog::{read_log, scan_log, CallLog, CallRecord, LogScan};
pub use http::{listen, ListenOptions, DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_SECS};
pub use read::{read, read_tool_definition, ReadArgs, ReadError, READ_TOOL};

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use globset::{Glob, GlobSet, GlobSetBuilder};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, RequestMetaObject, ServerConfig, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};

use crate::budget::{CallInfo, Engine, SpillStore};
use crate::config::ServerSpec;
use crate::measure::{compact_json, model_view};
use crate::tokens::Tokenizer;
use crate::upstream::{
    answer_or_cancel, BoxFuture, Downstream, Forwarded, NotificationOrder, PageWalker, Session,
    SessionOptions, UpstreamError,
};
use warnings::Warnings;

/// How the proxy behaves.
#[derive(Debug, Clone)]
pub struct ProxyOptions {
    /// The upstream's name in spill files and the call log.
    pub server: String,
    /// Tools shown: all when empty, else those matching one of these globs.
    pub allow: Vec<String>,
    /// Tools hidden (wins over `allow`).
    pub deny: Vec<String>,
    pub engine: Arc<Engine>,
    /// Counts the log's raw and returned tokens and `mcp_budget_read` pages.
    pub tokenizer: Tokenizer,
    pub log: Option<Arc<CallLog>>,
    /// How clients reach the proxy, for the log (`stdio`).
    pub transport: String,
}

/// What the proxy found at startup (for its log line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Startup {
    pub upstream_tools: usize,
    pub shown_tools: usize,
    /// Schema tokens per turn of the upstream's tools, and of what the client is shown.
    pub upstream_tokens: usize,
    pub shown_tokens: usize,
    /// What the hidden tools would have cost per turn, and what `mcp_budget_read` costs.
    pub hidden_tokens: usize,
    pub read_tool_tokens: usize,
}

/// A bad `--allow`/`--deny` glob.
#[derive(Debug, thiserror::Error)]
#[error("invalid tool glob `{glob}`: {message}")]
pub struct GlobError {
    pub glob: String,
    pub message: String,
}

fn globset(globs: &[String]) -> Result<GlobSet, GlobError> {
    let mut b = GlobSetBuilder::new();
    for g in globs {
        b.add(Glob::new(g).map_err(|e| GlobError {
            glob: g.clone(),
            message: e.to_string(),
        })?);
    }
    b.build().map_err(|e| GlobError {
        glob: globs.join(","),
        message: e.to_string(),
    })
}

/// Which tools the client may see and call.
#[derive(Debug, Clone)]
pub struct ToolFilter {
    allow: Option<GlobSet>,
    deny: GlobSet,
}

impl ToolFilter {
    pub fn new(allow: &[String], deny: &[String]) -> Result<ToolFilter, GlobError> {
        Ok(ToolFilter {
            allow: if allow.is_empty() {
                None
            } else {
                Some(globset(allow)?)
            },
            deny: globset(deny)?,
        })
    }

    pub fn shows(&self, tool: &str) -> bool {
        !self.deny.is_match(tool) && self.allow.as_ref().is_none_or(|a| a.is_match(tool))
    }
}

type NotificationRx = (
    tokio::sync::mpsc::UnboundedReceiver<Arc<str>>,
    Arc<NotificationOrder>,
    u64,
);

/// The upstream session, replaced by a fresh one (with backoff) when the server dies.
struct Upstream {
    spec: ServerSpec,
    opts: SessionOptions,
    current: std::sync::RwLock<Arc<Session>>,
    restarting: AtomicBool,
    restarts: AtomicUsize,
    /// The proxy's state, to tell a restarted server what the clients asked of the old one.
    shared: std::sync::OnceLock<std::sync::Weak<Shared>>,
    /// A restarted session's notifications, subscribed before the session serves anything,
    /// for the relay to take up (subscribing after it was published lost its first ones).
    next_notes: std::sync::Mutex<Option<NotificationRx>>,
}

impl Upstream {
    fn get(&self) -> Arc<Session> {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Start the server again in the background, waiting 0.2 s, 0.4 s, ... (at most 30 s)
    /// between attempts; calls meanwhile fail at once with a clear error instead of hanging.
    fn restart(self: &Arc<Self>) {
        if self.restarting.swap(true, Ordering::SeqCst) {
            return;
        }
        let me = self.clone();
        tokio::spawn(async move {
            let mut delay = Duration::from_millis(200);
            loop {
                if let Ok(session) = Session::connect(&me.spec, &me.opts).await {
                    let session = Arc::new(session);
                    *lock(&me.next_notes) = Some(subscribe(&session));
                    if let Some(shared) = me.shared.get().and_then(std::sync::Weak::upgrade) {
                        shared.restore(&session).await;
                    }
                    *me.current.write().unwrap_or_else(|p| p.into_inner()) = session;
                    me.restarts.fetch_add(1, Ordering::SeqCst);
                    break;
                }
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(30));
            }
            me.restarting.store(false, Ordering::SeqCst);
        });
    }
}

/// Where a progress notification of the upstream goes: the client that made the call, under
/// the token that client chose.
struct Route {
    client: rmcp::service::Peer<RoleServer>,
    token: Value,
}

/// A connected client.
#[derive(Clone)]
struct Client {
    id: u64,
    peer: rmcp::service::Peer<RoleServer>,
    /// Notifications for everyone go through this queue, sent by a task of the client's own,
    /// so a client that stops reading holds up nobody else (and loses what overflows).
    queue: tokio::sync::mpsc::Sender<rmcp::model::ServerNotification>,
}

impl Client {
    fn new(id: u64, peer: rmcp::service::Peer<RoleServer>) -> Client {
        let (queue, mut rx) = tokio::sync::mpsc::channel(256);
        let to = peer.clone();
        tokio::spawn(async move {
            while let Some(note) = rx.recv().await {
                let _ = tokio::time::timeout(SEND_TIMEOUT, to.send_notification(note)).await;
            }
        });
        Client { id, peer, queue }
    }
}

/// Everything the proxy's clones share.
struct Shared {
    upstream: Arc<Upstream>,
    opts: ProxyOptions,
    filter: ToolFilter,
    /// The tools the client sees, as JSON definitions, `mcp_budget_read` last.
    tools: std::sync::RwLock<Arc<Vec<Value>>>,
    /// The connected clients (one over stdio, one per session over HTTP): the upstream's
    /// notifications are forwarded to them.
    clients: std::sync::Mutex<Vec<Client>>,
    /// The id the next client session gets.
    next_client: AtomicU64,
    /// Calls in flight that asked for progress, by the upstream session and its progress token.
    routes: std::sync::Mutex<HashMap<String, Route>>,
    /// Tool calls in flight per client: the upstream's sampling and elicitation requests go to
    /// the client whose call is running.
    in_flight: std::sync::Mutex<HashMap<u64, usize>>,
    /// The client whose roots the upstream sees: the last one with roots to connect or to say
    /// its roots changed.
    roots_from: std::sync::Mutex<Option<u64>>,
    /// Which clients subscribed to each resource URI (the upstream is subscribed once).
    subscriptions: std::sync::Mutex<HashMap<String, HashSet<u64>>>,
    /// Each client's logging level (an index into [`LOG_LEVELS`]), once it set one.
    log_levels: std::sync::Mutex<HashMap<u64, usize>>,
    /// What the operator should hear of, each message once (the binary prints them).
    warnings: Warnings,
    info: Value,
}

/// The MCP logging levels, least severe first.
const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// A level's index in [`LOG_LEVELS`] (an unknown one counts as the least severe).
fn log_rank(level: &Value) -> usize {
    LOG_LEVELS
        .iter()
        .position(|l| level.as_str() == Some(l))
        .unwrap_or(0)
}

/// How long a notification may wait for one client: a client that stops reading must not
/// hold up the others.
const SEND_TIMEOUT: Duration = Duration::from_secs(1);

impl Shared {
    /// The connected clients; those gone are forgotten, with their levels and subscriptions
    /// (a resource nobody wants any more stays subscribed upstream, and its updates go nowhere).
    fn live_clients(&self) -> Vec<Client> {
        let mut clients = lock(&self.clients);
        let gone: Vec<u64> = clients
            .iter()
            .filter(|c| c.peer.is_transport_closed())
            .map(|c| c.id)
            .collect();
        clients.retain(|c| !gone.contains(&c.id));
        let live = clients.clone();
        drop(clients);
        if !gone.is_empty() {
            lock(&self.log_levels).retain(|id, _| !gone.contains(id));
            for who in lock(&self.subscriptions).values_mut() {
                who.retain(|id| !gone.contains(id));
            }
        }
        live
    }

    fn client(&self, id: u64) -> Option<Client> {
        self.live_clients().into_iter().find(|c| c.id == id)
    }

    /// The client an upstream request made during a tool call belongs to: the one client with
    /// calls running (or, with none running, the only client connected). Several clients with
    /// calls running cannot be told apart: the request is refused rather than sent to a client
    /// it may not be meant for.
    fn caller(&self, what: &str) -> Result<Client, ErrorData> {
        let live = self.live_clients();
        let running: Vec<u64> = lock(&self.in_flight)
            .iter()
            .filter(|(id, n)| **n > 0 && live.iter().any(|c| c.id == **id))
            .map(|(id, _)| *id)
            .collect();
        let chosen = match running.as_slice() {
            [one] => live.iter().find(|c| c.id == *one).cloned(),
            [] if live.len() == 1 => live.first().cloned(),
            [] => None,
            _ => {
                return Err(ErrorData::internal_error(
                    format!(
                        "mcp-budget proxy: {} clients have calls running, so it cannot tell which one this {what} request is for",
                        running.len()
                    ),
                    None,
                ))
            }
        };
        chosen.ok_or_else(|| {
            ErrorData::internal_error(
                format!(
                    "mcp-budget proxy: no client call is running to answer this {what} request"
                ),
                None,
            )
        })
    }
}

/// Counts a client's call as running until it ends, however it ends.
struct InFlight<'a> {
    shared: &'a Shared,
    client: u64,
}

impl<'a> InFlight<'a> {
    fn new(shared: &'a Shared, client: u64) -> Self {
        *lock(&shared.in_flight).entry(client).or_default() += 1;
        InFlight { shared, client }
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let mut map = lock(&self.shared.in_flight);
        if let Some(n) = map.get_mut(&self.client) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                map.remove(&self.client);
            }
        }
    }
}

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
#[derive(Default)]
struct ClientRelay {
    shared: std::sync::OnceLock<std::sync::Weak<Shared>>,
}

impl ClientRelay {
    fn shared(&self) -> Result<Arc<Shared>, ErrorData> {
        self.shared
            .get()
            .and_then(std::sync::Weak::upgrade)
            .ok_or_else(|| ErrorData::internal_error("the mcp-budget proxy is stopping", None))
    }

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
            let client = self.shared()?.caller("sampling")?;
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
            let client = self.shared()?.caller("elicitation")?;
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
            let shared = self.shared()?;
            // the roots of the client that last gave some; a client without roots (or none
            // connected) has none to give, and an empty list keeps the server's own
            let owner = lock(&shared.roots_from).and_then(|id| shared.client(id));
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

/// The proxy server (cheap to clone: the state is shared).
#[derive(Clone)]
pub struct Proxy {
    shared: Arc<Shared>,
    /// Which client this handler serves (each HTTP session gets its own, see
    /// [`Proxy::for_new_client`]).
    client_id: u64,
    pub startup: Startup,
}

/// Removes a call's progress route when the call ends, however it ends.
struct RouteGuard<'a> {
    routes: &'a std::sync::Mutex<HashMap<String, Route>>,
    key: Option<String>,
}

impl Drop for RouteGuard<'_> {
    fn drop(&mut self) {
        if let Some(k) = self.key.take() {
            lock(self.routes).remove(&k);
        }
    }
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The client's `_meta` for the upstream: without the keys that describe the client's own
/// session (protocol version, client info and capabilities), which belong to the proxy's.
fn forwarded_meta(meta: &RequestMetaObject) -> Option<RequestMetaObject> {
    let mut v = serde_json::to_value(meta).ok()?;
    let map = v.as_object_mut()?;
    map.retain(|k, _| {
        k != "progressToken"
            && !matches!(
                k.as_str(),
                "io.modelcontextprotocol/protocolVersion"
                    | "io.modelcontextprotocol/clientInfo"
                    | "io.modelcontextprotocol/clientCapabilities"
            )
    });
    if map.is_empty() {
        return None;
    }
    serde_json::from_value(v).ok()
}

/// A request over HTTP without a session (rmcp serves per-request protocol versions so): no
/// client state is kept for it, and it is passed straight through.
fn stateless(context: &RequestContext<RoleServer>) -> bool {
    context
        .extensions
        .get::<hyper::http::request::Parts>()
        .is_some_and(|p| !p.headers.contains_key("mcp-session-id"))
}

fn from_json<T: DeserializeOwned>(v: Value) -> Result<T, ErrorData> {
    serde_json::from_value(v).map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

fn error_result(text: &str) -> CallToolResult {
    serde_json::from_value(json!({"content": [{"type": "text", "text": text}], "isError": true}))
        .expect("a static result shape")
}

/// Every tool of the upstream, following `nextCursor` with the page walker `audit` uses, each
/// definition as the server sent it (rmcp's typed list would drop fields it does not know and
/// reorder keys), each name once (the first definition), and never one named
/// `mcp_budget_read` (the proxy's own). What had to be cut is said in the warnings.
async fn upstream_tools(
    session: &Session,
    server: &str,
) -> Result<(Vec<Value>, Vec<String>), UpstreamError> {
    let mut walker = PageWalker::default();
    while let Some(cursor) = walker.to_ask() {
        let raw = session.tools_page(cursor).await?;
        walker.page(raw.result_text(), 0.0);
    }
    let listed = walker.finish();
    let mut warnings = Vec::new();
    let mut all: Vec<Value> = Vec::new();
    let mut names = HashSet::new();
    let (mut repeated, mut clash) = (Vec::new(), false);
    for page in &listed.pages {
        let page: Value = serde_json::from_str(page).unwrap_or_default();
        for tool in page["tools"].as_array().into_iter().flatten() {
            let name = tool["name"].as_str().unwrap_or("").to_string();
            if name == READ_TOOL {
                clash = true;
            } else if !names.insert(name.clone()) {
                repeated.push(name);
            } else {
                all.push(tool.clone());
            }
        }
    }
    if let Some(stop) = &listed.stopped {
        warnings.push(format!(
            "upstream `{server}`: tools/list stopped: {stop}; showing the {} tools read so far",
            all.len()
        ));
    }
    if !repeated.is_empty() {
        repeated.sort();
        repeated.dedup();
        let some: Vec<String> = repeated
            .iter()
            .take(3)
            .map(|n| format!("`{}`", shorten(n, 40)))
            .collect();
        warnings.push(format!(
            "upstream `{server}`: tools/list named {} tools more than once ({}{}); each is shown once, as first listed",
            repeated.len(),
            some.join(", "),
            if repeated.len() > 3 { ", ..." } else { "" }
        ));
    }
    if clash {
        warnings.push(format!(
            "upstream `{server}` has a tool of its own named `{READ_TOOL}`: it is hidden, and `{READ_TOOL}` is the proxy's"
        ));
    }
    Ok((all, warnings))
}

/// The tools a client is shown: `--allow`/`--deny` and the policy's `hide` applied, and
/// descriptions replaced (`description`) or cut (`max_description_chars`) as the policy says.
fn shown(all: &[Value], filter: &ToolFilter, policy: &crate::budget::Policy) -> Vec<Value> {
    all.iter()
        .filter_map(|t| {
            let name = t["name"].as_str().unwrap_or("");
            let p = policy.for_tool(name);
            if !filter.shows(name) || p.hide {
                return None;
            }
            let mut t = t.clone();
            if let Some(d) = &p.description {
                t["description"] = json!(d);
            } else if let (Some(max), Some(d)) =
                (p.max_description_chars, t["description"].as_str())
            {
                t["description"] = json!(shorten(d, max));
            }
            Some(t)
        })
        .collect()
}

/// `text` cut to at most `max` characters, at the end of a sentence when one is in the last
/// third, else at a word, with `…` added.
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max.saturating_sub(1)).collect();
    let sentence = cut.rfind(". ").filter(|&i| i * 3 >= cut.len() * 2);
    match sentence {
        Some(i) => cut[..=i].to_string(),
        None => {
            let word = cut
                .rfind(' ')
                .filter(|&i| i * 3 >= cut.len() * 2)
                .unwrap_or(cut.len());
            format!("{}…", cut[..word].trim_end())
        }
    }
}

/// A tool's schema tax: its model view, as `audit` counts it.
fn tool_tokens(tool: &Value, tokenizer: Tokenizer) -> usize {
    let empty = Map::new();
    let view = model_view(tool.as_object().unwrap_or(&empty));
    tokenizer.count(&compact_json(&view))
}

/// Forward the upstream's notifications for as long as the proxy lives, following the upstream
/// across restarts: progress to the client whose call it is, under that client's token;
/// logging messages, resource updates and list changes to every client (a tools/list_changed
/// refreshes the tools shown first). The upstream's own cancellations are not forwarded: they
/// are about requests it made, and the proxy forwards none.
fn relay_notifications(shared: std::sync::Weak<Shared>, first: NotificationRx) {
    tokio::spawn(async move {
        let mut pending = Some(first);
        loop {
            let (mut rx, order, session) = match pending.take() {
                Some(rx) => rx,
                // the restarted session's, subscribed before it served anything
                None => match shared
                    .upgrade()
                    .map(|s| lock(&s.upstream.next_notes).take())
                {
                    Some(Some(rx)) => rx,
                    Some(None) => {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                    None => return,
                },
            };
            while let Some(line) = rx.recv().await {
                let Some(s) = shared.upgrade() else { return };
                s.relay(session, &line).await;
                order.done_one();
            }
            // the session was replaced (a restart): follow the new one
        }
    });
}

/// A session's notifications, with the session's identity (for progress routes).
fn subscribe(session: &Arc<Session>) -> NotificationRx {
    let (rx, order) = session.capture().subscribe_notifications();
    (rx, order, session_key(session))
}

/// Which upstream session this is (a restarted upstream counts progress tokens from the start
/// again, so routes are keyed by session and token).
fn session_key(session: &Session) -> u64 {
    session.id()
}

fn route_key(session: u64, token: &Value) -> String {
    format!("{session}:{token}")
}

impl Shared {
    /// One notification of the upstream to the clients it concerns: progress to the client
    /// whose call it is (under that client's token), a log message to the clients whose level
    /// it meets, a resource update to the clients subscribed to it, anything else to all.
    async fn relay(&self, session: u64, line: &str) {
        let Ok(mut msg) = serde_json::from_str::<Value>(line) else {
            return;
        };
        let method = msg["method"].as_str().unwrap_or("").to_string();
        let mut params = msg.get_mut("params").map(Value::take).unwrap_or(json!({}));
        let note = |params: Value| {
            serde_json::from_value::<rmcp::model::ServerNotification>(
                json!({"method": method, "params": params}),
            )
            .ok()
        };
        let targets: Vec<Client> = match method.as_str() {
            "notifications/cancelled" => return,
            "notifications/progress" => {
                // sent at once, not queued: it must reach the caller before the call's result
                let key = route_key(session, &params["progressToken"]);
                let Some((client, token)) = lock(&self.routes)
                    .get(&key)
                    .map(|r| (r.client.clone(), r.token.clone()))
                else {
                    return;
                };
                params["progressToken"] = token;
                if let Some(n) = note(params) {
                    let _ = tokio::time::timeout(SEND_TIMEOUT, client.send_notification(n)).await;
                }
                return;
            }
            "notifications/message" => {
                let rank = log_rank(&params["level"]);
                let levels = lock(&self.log_levels).clone();
                self.live_clients()
                    .into_iter()
                    .filter(|c| levels.get(&c.id).is_none_or(|&min| rank >= min))
                    .collect()
            }
            "notifications/resources/updated" => {
                let subscribed = params["uri"]
                    .as_str()
                    .and_then(|u| lock(&self.subscriptions).get(u).cloned());
                self.live_clients()
                    .into_iter()
                    .filter(|c| subscribed.as_ref().is_none_or(|s| s.contains(&c.id)))
                    .collect()
            }
            _ => {
                if method == "notifications/tools/list_changed" {
                    self.refresh_tools().await;
                }
                self.live_clients()
            }
        };
        let Some(n) = note(params) else {
            return;
        };
        for client in targets {
            let _ = client.queue.try_send(n.clone());
        }
    }

    /// A restarted upstream is a new session: subscribe it again to what clients want, and set
    /// the logging level they asked for.
    async fn restore(&self, session: &Session) {
        let uris: Vec<String> = lock(&self.subscriptions)
            .iter()
            .filter(|(_, who)| !who.is_empty())
            .map(|(uri, _)| uri.clone())
            .collect();
        for uri in uris {
            let _ = session
                .request_json(
                    "resources/subscribe",
                    json!({"uri": uri}),
                    std::future::pending(),
                )
                .await;
        }
        let lowest = lock(&self.log_levels).values().copied().min();
        if let Some(level) = lowest {
            let _ = session
                .request_json(
                    "logging/setLevel",
                    json!({"level": LOG_LEVELS[level]}),
                    std::future::pending(),
                )
                .await;
        }
    }

    fn warn(&self, message: String) {
        self.warnings.warn(message);
    }

    /// Read the upstream's tools again (after it said they changed).
    async fn refresh_tools(&self) {
        let listed = upstream_tools(&self.upstream.get(), &self.opts.server).await;
        let all = match listed {
            Ok((all, warnings)) => {
                warnings.into_iter().for_each(|w| self.warn(w));
                all
            }
            Err(e) => {
                self.warn(format!(
                    "upstream `{}`: could not read its tools again after it said they changed: {e}",
                    self.opts.server
                ));
                return;
            }
        };
        let mut tools = shown(&all, &self.filter, self.opts.engine.policy());
        tools.push(read_tool_definition());
        *self.tools.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(tools);
    }
}

impl Proxy {
    /// Connect to the upstream and read its tools.
    pub async fn start(
        spec: &ServerSpec,
        session_opts: &SessionOptions,
        opts: ProxyOptions,
    ) -> Result<Proxy, ProxyStartError> {
        let filter = ToolFilter::new(&opts.allow, &opts.deny)?;
        let relay = Arc::new(ClientRelay::default());
        let session_opts = SessionOptions {
            downstream: Some(relay.clone()),
            ..session_opts.clone()
        };
        let session = Arc::new(Session::connect(spec, &session_opts).await?);
        let first_notes = subscribe(&session);
        let init: Value =
            serde_json::from_str(session.initialize_response().result_text()).unwrap_or_default();
        let (all, warnings) = upstream_tools(&session, &opts.server).await?;
        let upstream_tokens: usize = all.iter().map(|t| tool_tokens(t, opts.tokenizer)).sum();
        let mut tools = shown(&all, &filter, opts.engine.policy());
        let shown_tools = tools.len();
        let kept: usize = tools.iter().map(|t| tool_tokens(t, opts.tokenizer)).sum();
        let read_tool = read_tool_definition();
        let read_tool_tokens = tool_tokens(&read_tool, opts.tokenizer);
        tools.push(read_tool);
        let shown_tokens = kept + read_tool_tokens;
        let mut info = json!({
            "protocolVersion": init.get("protocolVersion").cloned().unwrap_or(json!("2025-06-18")),
            "capabilities": init.get("capabilities").cloned().unwrap_or(json!({})),
            "serverInfo": init.get("serverInfo").cloned().unwrap_or(json!({"name": opts.server, "version": "0"})),
        });
        if let Some(i) = init.get("instructions") {
            info["instructions"] = i.clone();
        }
        // the proxy always serves tools (mcp_budget_read) and resources (the spills)
        info["capabilities"]["tools"] = json!({"listChanged": true});
        if !info["capabilities"]["resources"].is_object() {
            info["capabilities"]["resources"] = json!({});
        }
        let shared = Arc::new(Shared {
            upstream: Arc::new(Upstream {
                spec: spec.clone(),
                opts: session_opts,
                current: std::sync::RwLock::new(session),
                restarting: AtomicBool::new(false),
                restarts: AtomicUsize::new(0),
                next_notes: std::sync::Mutex::new(None),
                shared: std::sync::OnceLock::new(),
            }),
            filter,
            tools: std::sync::RwLock::new(Arc::new(tools)),
            clients: std::sync::Mutex::new(Vec::new()),
            next_client: AtomicU64::new(1),
            routes: std::sync::Mutex::new(HashMap::new()),
            in_flight: std::sync::Mutex::new(HashMap::new()),
            roots_from: std::sync::Mutex::new(None),
            subscriptions: std::sync::Mutex::new(HashMap::new()),
            log_levels: std::sync::Mutex::new(HashMap::new()),
            warnings: Warnings::default(),
            info,
            opts,
        });
        warnings.into_iter().for_each(|w| shared.warn(w));
        let _ = relay.shared.set(Arc::downgrade(&shared));
        let _ = shared.upstream.shared.set(Arc::downgrade(&shared));
        relay_notifications(Arc::downgrade(&shared), first_notes);
        Ok(Proxy {
            shared,
            client_id: 0,
            startup: Startup {
                upstream_tools: all.len(),
                shown_tools,
                upstream_tokens,
                shown_tokens,
                hidden_tokens: upstream_tokens - kept,
                read_tool_tokens,
            },
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
            client_id: self.shared.next_client.fetch_add(1, Ordering::SeqCst),
            ..self.clone()
        }
    }

    /// An upstream failure as the client's error: the upstream's own JSON-RPC error as it
    /// sent it, anything else naming the upstream; a stopped upstream is restarted.
    fn upstream_failure(&self, session: &Session, e: UpstreamError) -> ErrorData {
        let server = &self.shared.opts.server;
        if let UpstreamError::Rpc { code, message, .. } = e {
            return ErrorData::new(rmcp::model::ErrorCode(code as i32), message, None);
        }
        // rmcp reports a dead transport before `is_closed` turns true
        let message = if session.is_closed() || e.to_string().contains("closed") {
            self.shared.upstream.restart();
            format!(
                "the upstream server `{server}` has stopped (mcp-budget is restarting it; try again): {e}"
            )
        } else {
            format!("the upstream server `{server}` failed: {e}")
        };
        ErrorData::internal_error(message, None)
    }

    /// Forward a client's request to the upstream as it is, and read the upstream's result;
    /// the client cancelling (`ct`) cancels it upstream.
    async fn ask<T: DeserializeOwned>(
        &self,
        method: &str,
        params: impl serde::Serialize,
        ct: &tokio_util::sync::CancellationToken,
    ) -> Result<T, ErrorData> {
        let params = serde_json::to_value(params)
            .map_err(|e| ErrorData::internal_error(format!("{method}: {e}"), None))?;
        let session = self.shared.upstream.get();
        let raw = session
            .request_json(method, params, ct.cancelled())
            .await
            .map_err(|e| self.upstream_failure(&session, e))?;
        serde_json::from_str(raw.result_text()).map_err(|e| {
            ErrorData::internal_error(
                format!(
                    "the upstream server `{}` answered {method} with a result mcp-budget cannot read: {e}",
                    self.shared.opts.server
                ),
                None,
            )
        })
    }

    async fn roots_changed(&self) {
        *lock(&self.shared.roots_from) = Some(self.client_id);
        let _ = self
            .shared
            .upstream
            .get()
            .peer()
            .notify_roots_list_changed()
            .await;
    }

    /// [`Self::ask`] for a request whose result is empty.
    async fn tell(
        &self,
        method: &str,
        params: impl serde::Serialize,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let _: Value = self.ask(method, params, &context.ct).await?;
        Ok(())
    }

    /// How many times the upstream was started again after it died.
    pub fn restarts(&self) -> usize {
        self.shared.upstream.restarts.load(Ordering::SeqCst)
    }

    fn store(&self) -> &SpillStore {
        self.shared.opts.engine.store()
    }

    /// Forward one call to the upstream and budget its result.
    async fn forward(
        &self,
        name: &str,
        args: Map<String, Value>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let client = context
            .peer
            .peer_info()
            .map(|i| {
                (
                    Some(i.client_info.name.clone()),
                    Some(i.client_info.version.clone()),
                )
            })
            .unwrap_or((None, None));
        let _running = InFlight::new(&self.shared, self.client_id);
        let session = self.shared.upstream.get();
        let session_id = session_key(&session);
        // the client's progress token is swapped for the upstream session's own: progress
        // notifications under that token are routed back to this client with its token
        let mut route = RouteGuard {
            routes: &self.shared.routes,
            key: None,
        };
        let wants_progress = context.meta.get_progress_token().map(|t| {
            (
                context.peer.clone(),
                serde_json::to_value(t).unwrap_or_default(),
            )
        });
        // the client's notifications/cancelled cancels `ct`: pass it on to the upstream
        let ct = context.ct.clone();
        let forwarded = Forwarded {
            meta: forwarded_meta(&context.meta),
            cancelled: async move { ct.cancelled().await },
            on_sent: |upstream: &rmcp::model::ProgressToken| {
                if let Some((client, token)) = wants_progress {
                    let upstream = serde_json::to_value(upstream).unwrap_or_default();
                    let key = route_key(session_id, &upstream);
                    lock(&self.shared.routes).insert(key.clone(), Route { client, token });
                    route.key = Some(key);
                }
            },
        };
        let answer = session.call_forwarded(name, args.clone(), forwarded).await;
        // what the upstream sent before its answer (the call's progress, a log message) is
        // forwarded before the answer, as a client expects; a stuck client cannot stall this
        let order = session.capture().notification_order();
        let _ = tokio::time::timeout(Duration::from_secs(1), order.wait_for(order.queued())).await;
        let outcome = match answer {
            Ok(o) => o,
            Err(e) => {
                // the upstream's own JSON-RPC error is the client's business; anything else
                // (a message that could not be read, a dead upstream) the operator hears of
                let own = matches!(e, UpstreamError::Rpc { .. });
                let error = self.upstream_failure(&session, e);
                if !own {
                    self.shared
                        .warn(format!("tool `{name}`: {}", error.message));
                }
                self.log_failure(name, client, &error.message);
                return Err(error);
            }
        };
        let raw_text = outcome.response.result_text();
        let raw: Value = serde_json::from_str(raw_text).map_err(|e| {
            ErrorData::internal_error(
                format!(
                    "the upstream server `{}` answered tools/call with a result that is not JSON: {e}",
                    self.shared.opts.server
                ),
                None,
            )
        })?;
        let raw_bytes = raw_text.len();
        let upstream_ms = outcome.latency_ms;
        // the response moves into the engine's task: its text is borrowed there, not copied
        let response = outcome.response;
        let engine = self.shared.opts.engine.clone();
        let server = self.shared.opts.server.clone();
        let tool = name.to_string();
        let (budgeted, engine_ms, raw) = tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            let call = CallInfo {
                server: &server,
                tool: &tool,
                raw: Some(response.result_text()),
            };
            let out = engine.run(&call, &raw);
            (out, started.elapsed().as_secs_f64() * 1000.0, raw)
        })
        .await
        .map_err(|e| ErrorData::internal_error(format!("the budget engine failed: {e}"), None))?;
        if let Some(e) = &budgeted.spill_error {
            self.shared.warn(format!(
                "`{}`/{name}: the full original of a {} result could not be saved: {e}",
                self.shared.opts.server,
                budgeted.strategy.name()
            ));
        }
        if let Some(log) = &self.shared.opts.log {
            let record = CallRecord {
                raw_bytes,
                returned_tokens: budgeted.tokens_after,
                strategy: budgeted.strategy.name().to_string(),
                spill_id: budgeted.spill.as_ref().map(|s| s.id.clone()),
                spill_error: budgeted.spill_error.clone(),
                upstream_ms,
                engine_ms,
                is_error: budgeted.result["isError"] == json!(true),
                ..self.log_line(name, client)
            };
            // the raw count is the engine's (the same units as `returned_tokens`, free for a
            // pass-through); a reduced result is counted in full, after the client has its answer
            let (log, engine) = (log.clone(), self.shared.opts.engine.clone());
            let (strategy, tokens_after) = (budgeted.strategy, budgeted.tokens_after);
            tokio::task::spawn_blocking(move || {
                let record = CallRecord {
                    raw_tokens: engine.tokens_before_of(strategy, tokens_after, &raw),
                    ..record
                };
                // a log that cannot be written must not fail the call
                let _ = log.append(&record);
            });
        }
        from_json(budgeted.result)
    }

    /// A call that failed before the engine saw a result, as a line of the call log.
    fn log_failure(&self, tool: &str, client: (Option<String>, Option<String>), error: &str) {
        let Some(log) = &self.shared.opts.log else {
            return;
        };
        let record = CallRecord {
            strategy: "error".into(),
            is_error: true,
            error: Some(error.to_string()),
            ..self.log_line(tool, client)
        };
        // a log that cannot be written must not fail the call
        let _ = log.append(&record);
    }

    /// A call log line with who called what, and nothing measured yet.
    fn log_line(&self, tool: &str, client: (Option<String>, Option<String>)) -> CallRecord {
        CallRecord {
            ts: now(),
            server: self.shared.opts.server.clone(),
            tool: tool.to_string(),
            client_name: client.0,
            client_version: client.1,
            transport: self.shared.opts.transport.clone(),
            ..CallRecord::default()
        }
    }

    /// The spills in the store, as MCP resources (the store lists only its own regular files,
    /// never a link).
    fn spill_resources(&self) -> Vec<Value> {
        self.store()
            .list()
            .into_iter()
            .map(|spill| {
                json!({
                    "uri": format!("mcp-budget://spill/{}", spill.id),
                    "name": spill.id,
                    "description": "A full tool result that mcp-budget shortened",
                    "mimeType": if spill.id.ends_with(".json") { "application/json" } else { "text/plain" },
                    "size": spill.bytes,
                })
            })
            .collect()
    }
}

/// Why the proxy could not start.
#[derive(Debug, thiserror::Error)]
pub enum ProxyStartError {
    #[error(transparent)]
    Glob(#[from] GlobError),
    #[error(transparent)]
    Upstream(#[from] UpstreamError),
}

fn now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
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
        self.shared.live_clients();
        {
            let mut clients = lock(&self.shared.clients);
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
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self
            .shared
            .tools
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        from_json(json!({"tools": *tools}))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        if request.name == READ_TOOL {
            let parsed: Result<ReadArgs, _> = serde_json::from_value(Value::Object(args));
            let budget = self.shared.opts.engine.policy().for_tool(READ_TOOL).budget;
            let result = match parsed {
                Err(e) => error_result(&ReadError::Arguments(e.to_string()).to_string()),
                Ok(a) => match read(self.store(), &a, budget, self.shared.opts.tokenizer) {
                    Ok(text) => from_json(json!({"content": [{"type": "text", "text": text}]}))?,
                    Err(e) => error_result(&e.to_string()),
                },
            };
            return Ok(result.into());
        }
        if !self.shared.filter.shows(&request.name)
            || self
                .shared
                .opts
                .engine
                .policy()
                .for_tool(&request.name)
                .hide
        {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{}`", request.name),
                None,
            ));
        }
        Ok(self.forward(&request.name, args, context).await?.into())
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
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri.starts_with("mcp-budget://spill/") {
            let mut file = self.store().open(&request.uri).ok_or_else(|| {
                ErrorData::resource_not_found(format!("no spill `{}`", request.uri), None)
            })?;
            let mut text = Vec::new();
            std::io::Read::read_to_end(&mut file, &mut text)
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            let result: rmcp::model::ReadResourceResult = from_json(json!({"contents": [{
                "uri": request.uri,
                "mimeType": "text/plain",
                "text": String::from_utf8_lossy(&text),
            }]}))?;
            return Ok(result.into());
        }
        let result: rmcp::model::ReadResourceResult =
            self.ask("resources/read", request, &context.ct).await?;
        Ok(result.into())
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
            let mut subs = lock(&self.shared.subscriptions);
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
            if let Some(who) = lock(&self.shared.subscriptions).get_mut(&request.uri) {
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
            let mut subs = lock(&self.shared.subscriptions);
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
            let mut levels = lock(&self.shared.log_levels);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_are_cut_at_a_sentence_or_a_word() {
        let d = "Search code across repositories. Returns matching files with line numbers and context.";
        assert_eq!(shorten(d, 200), d);
        assert_eq!(shorten(d, 40), "Search code across repositories.");
        let cut = shorten(d, 60);
        assert!(cut.ends_with('…') && cut.chars().count() <= 60, "{cut}");
        assert!(!cut.contains("  "));
        assert_eq!(shorten("日本語のテキストです", 5), "日本語の…");
    }
}

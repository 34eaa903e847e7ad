//! The proxy's shared state: the upstream session (restarted when it dies), the connected
//! clients, the calls in flight with their progress routes, and what the clients asked of the
//! upstream (subscriptions, logging levels, whose roots it sees).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rmcp::{ErrorData, RoleServer};
use serde_json::{json, Value};

use super::filter::ToolFilter;
use super::lazy::Catalog;
use super::options::ProxyOptions;
use super::tools::Startup;
use super::warnings::Warnings;
use crate::config::ServerSpec;
use crate::upstream::{NotificationOrder, Session, SessionOptions};

/// A session's notifications: the lines, their order of forwarding, and the session's key.
pub(super) type NotificationRx = (
    tokio::sync::mpsc::UnboundedReceiver<crate::upstream::Line>,
    Arc<NotificationOrder>,
    u64,
);

/// The upstream session, replaced by a fresh one (with backoff) when the server dies.
pub(super) struct Upstream {
    spec: ServerSpec,
    opts: SessionOptions,
    current: std::sync::RwLock<Arc<Session>>,
    restarting: AtomicBool,
    pub(super) restarts: AtomicUsize,
    /// The proxy's state, to tell a restarted server what the clients asked of the old one.
    pub(super) shared: std::sync::OnceLock<std::sync::Weak<Shared>>,
    /// A restarted session's notifications, subscribed before the session serves anything,
    /// for the relay to take up (subscribing after it was published lost its first ones).
    pub(super) next_notes: std::sync::Mutex<Option<NotificationRx>>,
}

impl Upstream {
    /// The upstream as first started, serving `session`.
    pub(super) fn new(spec: ServerSpec, opts: SessionOptions, session: Arc<Session>) -> Upstream {
        Upstream {
            spec,
            opts,
            current: std::sync::RwLock::new(session),
            restarting: AtomicBool::new(false),
            restarts: AtomicUsize::new(0),
            next_notes: std::sync::Mutex::new(None),
            shared: std::sync::OnceLock::new(),
        }
    }

    /// The session serving now (a restart replaces it).
    pub(super) fn get(&self) -> Arc<Session> {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Start the server again in the background, waiting 0.2 s, 0.4 s, ... (at most 30 s)
    /// between attempts; calls meanwhile fail at once with a clear error instead of hanging.
    pub(super) fn restart(self: &Arc<Self>) {
        if self.restarting.swap(true, Ordering::SeqCst) {
            return;
        }
        let me = self.clone();
        tokio::spawn(async move {
            let mut delay = Duration::from_millis(200);
            loop {
                if let Ok(session) = crate::connect::connect(&me.spec, &me.opts).await {
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
pub(super) struct Route {
    pub(super) client: rmcp::service::Peer<RoleServer>,
    pub(super) token: Value,
}

/// A connected client.
#[derive(Clone)]
pub(super) struct Client {
    pub(super) id: u64,
    pub(super) peer: rmcp::service::Peer<RoleServer>,
    /// Notifications for everyone go through this queue, sent by a task of the client's own,
    /// so a client that stops reading holds up nobody else (and loses what overflows).
    pub(super) queue: tokio::sync::mpsc::Sender<rmcp::model::ServerNotification>,
    /// How many notifications were put in the queue, and how many of them the task has sent
    /// (or given up on): a call's answer waits until what was queued before it is sent.
    pub(super) queued: Arc<AtomicU64>,
    pub(super) sent: tokio::sync::watch::Receiver<u64>,
}

impl Client {
    pub(super) fn new(id: u64, peer: rmcp::service::Peer<RoleServer>) -> Client {
        let (queue, mut rx) = tokio::sync::mpsc::channel(256);
        let (sent_tx, sent) = tokio::sync::watch::channel(0u64);
        let to = peer.clone();
        tokio::spawn(async move {
            while let Some(note) = rx.recv().await {
                let _ = tokio::time::timeout(SEND_TIMEOUT, to.send_notification(note)).await;
                sent_tx.send_modify(|n| *n += 1);
            }
        });
        Client {
            id,
            peer,
            queue,
            queued: Arc::new(AtomicU64::new(0)),
            sent,
        }
    }

    /// Queue a notification for the client's task (dropped when the queue is full).
    pub(super) fn enqueue(&self, note: rmcp::model::ServerNotification) {
        if self.queue.try_send(note).is_ok() {
            self.queued.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Wait until every notification queued so far has been sent, at most `limit`.
    pub(super) async fn drained(&self, limit: Duration) {
        let queued = self.queued.load(Ordering::SeqCst);
        let mut sent = self.sent.clone();
        let _ = tokio::time::timeout(limit, sent.wait_for(|n| *n >= queued)).await;
    }
}

/// Everything the proxy's clones share.
pub(super) struct Shared {
    pub(super) upstream: Arc<Upstream>,
    pub(super) opts: ProxyOptions,
    pub(super) filter: ToolFilter,
    /// The tools the client sees, as JSON definitions, `mcp_budget_read` last.
    pub(super) tools: std::sync::RwLock<Arc<Vec<Value>>>,
    /// The upstream's tools as the client may see them (filtered, shaped by the policy) and
    /// their search index: what the lazy tools find and call.
    pub(super) catalog: std::sync::RwLock<Arc<Catalog>>,
    /// The schema tax per turn of `tools` (for the call log).
    pub(super) shown_tokens: AtomicUsize,
    /// Tools found with the lazy find tool and shown in the list, with when they were last
    /// found or called (`--lazy-expose`).
    pub(super) exposed: std::sync::Mutex<Vec<(String, std::time::Instant)>>,
    /// What the start-up counted (the upstream's schema tax, for the call log).
    pub(super) startup: Startup,
    /// The connected clients (one over stdio, one per session over HTTP): the upstream's
    /// notifications are forwarded to them.
    pub(super) clients: std::sync::Mutex<Vec<Client>>,
    /// The id the next client session gets.
    pub(super) next_client: AtomicU64,
    /// Calls in flight that asked for progress, by the upstream session and its progress token.
    pub(super) routes: std::sync::Mutex<HashMap<String, Route>>,
    /// Calls sent upstream whose progress route is not in `routes` yet: a fast upstream's
    /// progress can arrive before the route is written, so the relay waits for these.
    pub(super) routing: tokio::sync::watch::Sender<usize>,
    /// Tool calls in flight per client: the upstream's sampling and elicitation requests go to
    /// the client whose call is running.
    pub(super) in_flight: std::sync::Mutex<HashMap<u64, usize>>,
    /// The client whose roots the upstream sees: the last one with roots to connect or to say
    /// its roots changed.
    pub(super) roots_from: std::sync::Mutex<Option<u64>>,
    /// Which clients subscribed to each resource URI (the upstream is subscribed once).
    pub(super) subscriptions: std::sync::Mutex<HashMap<String, HashSet<u64>>>,
    /// Each client's logging level (an index into [`LOG_LEVELS`]), once it set one.
    pub(super) log_levels: std::sync::Mutex<HashMap<u64, usize>>,
    /// What the operator should hear of, each message once (the binary prints them).
    pub(super) warnings: Warnings,
    pub(super) info: Value,
    /// The engine's spill store confined to this upstream's folder: what `mcp_budget_read`
    /// and the spill resources serve (a shared store holds other servers' spills too).
    pub(super) spills: crate::budget::SpillStore,
    /// A call log line failed to be written (said once).
    pub(super) log_broken: AtomicBool,
}

/// The MCP logging levels, least severe first.
pub(super) const LOG_LEVELS: [&str; 8] = [
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
pub(super) fn log_rank(level: &Value) -> usize {
    LOG_LEVELS
        .iter()
        .position(|l| level.as_str() == Some(l))
        .unwrap_or(0)
}

/// How long a notification may wait for one client: a client that stops reading must not
/// hold up the others.
pub(super) const SEND_TIMEOUT: Duration = Duration::from_secs(1);

impl Shared {
    /// The state at start: no client yet, the upstream's session, the tools shown and the
    /// server info the clients get.
    pub(super) fn new(
        upstream: Upstream,
        opts: ProxyOptions,
        filter: ToolFilter,
        (tools, catalog, startup): (Vec<Value>, Catalog, Startup),
        info: Value,
    ) -> Shared {
        Shared {
            upstream: Arc::new(upstream),
            filter,
            tools: std::sync::RwLock::new(Arc::new(tools)),
            catalog: std::sync::RwLock::new(Arc::new(catalog)),
            shown_tokens: AtomicUsize::new(startup.shown_tokens),
            exposed: std::sync::Mutex::new(Vec::new()),
            startup,
            clients: std::sync::Mutex::new(Vec::new()),
            next_client: AtomicU64::new(1),
            routes: std::sync::Mutex::new(HashMap::new()),
            routing: tokio::sync::watch::Sender::new(0),
            in_flight: std::sync::Mutex::new(HashMap::new()),
            roots_from: std::sync::Mutex::new(None),
            subscriptions: std::sync::Mutex::new(HashMap::new()),
            log_levels: std::sync::Mutex::new(HashMap::new()),
            warnings: Warnings::default(),
            info,
            spills: opts.engine.store().confined_to(&opts.server),
            log_broken: AtomicBool::new(false),
            opts,
        }
    }

    /// The connected clients; those gone are forgotten, with their levels and subscriptions
    /// (a resource nobody wants any more stays subscribed upstream, and its updates go nowhere).
    pub(super) fn live_clients(&self) -> Vec<Client> {
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

    pub(super) fn client(&self, id: u64) -> Option<Client> {
        self.live_clients().into_iter().find(|c| c.id == id)
    }

    /// The client an upstream request made during a tool call belongs to: the one client with
    /// calls running (or, with none running, the only client connected). Several clients with
    /// calls running cannot be told apart: the request is refused rather than sent to a client
    /// it may not be meant for.
    pub(super) fn caller(&self, what: &str) -> Result<Client, ErrorData> {
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
pub(super) struct InFlight<'a> {
    shared: &'a Shared,
    client: u64,
}

impl<'a> InFlight<'a> {
    pub(super) fn new(shared: &'a Shared, client: u64) -> Self {
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

pub(super) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A session's notifications, with the session's identity (for progress routes).
pub(super) fn subscribe(session: &Arc<Session>) -> NotificationRx {
    let (rx, order) = session.wire().subscribe_notifications();
    (rx, order, session_key(session))
}

/// Which upstream session this is (a restarted upstream counts progress tokens from the start
/// again, so routes are keyed by session and token).
pub(super) fn session_key(session: &Session) -> u64 {
    session.id()
}

pub(super) fn route_key(session: u64, token: &Value) -> String {
    format!("{session}:{token}")
}

impl Shared {
    /// A restarted upstream is a new session: subscribe it again to what clients want, and set
    /// the logging level they asked for.
    pub(super) async fn restore(&self, session: &Session) {
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

    pub(super) fn warn(&self, message: String) {
        self.warnings.warn(message);
    }

    /// Append a call log line; a line that cannot be written is said once (the calls go on,
    /// and their results are not held up by a log).
    pub(super) fn append_log(
        &self,
        log: &crate::calllog::CallLog,
        record: &crate::calllog::CallRecord,
    ) {
        if let Err(e) = log.append(record) {
            if !self.log_broken.swap(true, Ordering::SeqCst) {
                self.warn(format!(
                    "the call log {} cannot be written ({e}); calls go on, and lines that fail are not said again",
                    log.path().display()
                ));
            }
        }
    }
}

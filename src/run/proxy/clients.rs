//! What lives per downstream client: the connected clients and their notification queues, the
//! calls each has running and their progress routes, and what each asked of the upstream
//! (resource subscriptions, a logging level, whose roots it sees), restored on a restarted
//! upstream.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rmcp::{ErrorData, RoleServer};
use serde_json::{json, Value};

use super::locked::lock;
use crate::wire::upstream::Session;

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

/// The clients of one proxy and what lives per client.
pub(super) struct Clients {
    /// The connected clients (one over stdio, one per session over HTTP): the upstream's
    /// notifications are forwarded to them.
    pub(super) connected: std::sync::Mutex<Vec<Client>>,
    /// The id the next client session gets.
    next_client: AtomicU64,
    /// Calls in flight that asked for progress, by the upstream session and its progress token.
    pub(super) routes: std::sync::Mutex<HashMap<String, Route>>,
    /// Calls sent upstream whose progress route is not in `routes` yet: a fast upstream's
    /// progress can arrive before the route is written, so the relay waits for these.
    pub(super) routing: tokio::sync::watch::Sender<usize>,
    /// Tool calls in flight per client: the upstream's sampling and elicitation requests go to
    /// the client whose call is running.
    in_flight: std::sync::Mutex<HashMap<u64, usize>>,
    /// The client whose roots the upstream sees: the last one with roots to connect or to say
    /// its roots changed.
    pub(super) roots_from: std::sync::Mutex<Option<u64>>,
    /// Which clients subscribed to each resource URI (the upstream is subscribed once).
    pub(super) subscriptions: std::sync::Mutex<HashMap<String, HashSet<u64>>>,
    /// Each client's logging level (an index into [`LOG_LEVELS`]), once it set one.
    pub(super) log_levels: std::sync::Mutex<HashMap<u64, usize>>,
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

/// How long a progress note waits for the route of a call just sent (normally microseconds:
/// the time between the request leaving and its route being written).
const ROUTE_WAIT: Duration = Duration::from_millis(500);

impl Clients {
    /// No client yet; the first to connect (stdio's only one) is client 0.
    pub(super) fn new() -> Clients {
        Clients {
            connected: std::sync::Mutex::new(Vec::new()),
            next_client: AtomicU64::new(1),
            routes: std::sync::Mutex::new(HashMap::new()),
            routing: tokio::sync::watch::Sender::new(0),
            in_flight: std::sync::Mutex::new(HashMap::new()),
            roots_from: std::sync::Mutex::new(None),
            subscriptions: std::sync::Mutex::new(HashMap::new()),
            log_levels: std::sync::Mutex::new(HashMap::new()),
        }
    }

    /// The id of one more client (an HTTP session).
    pub(super) fn next_id(&self) -> u64 {
        self.next_client.fetch_add(1, Ordering::SeqCst)
    }

    /// The connected clients; those gone are forgotten, with their levels and subscriptions
    /// (a resource nobody wants any more stays subscribed upstream, and its updates go nowhere).
    pub(super) fn live(&self) -> Vec<Client> {
        let mut clients = lock(&self.connected);
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

    pub(super) fn get(&self, id: u64) -> Option<Client> {
        self.live().into_iter().find(|c| c.id == id)
    }

    /// The client an upstream request made during a tool call belongs to: the one client with
    /// calls running (or, with none running, the only client connected). Several clients with
    /// calls running cannot be told apart: the request is refused rather than sent to a client
    /// it may not be meant for.
    pub(super) fn caller(&self, what: &str) -> Result<Client, ErrorData> {
        let live = self.live();
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

    /// Queue `note` for every connected client.
    pub(super) fn tell_all(&self, note: &rmcp::model::ServerNotification) {
        for client in self.live() {
            client.enqueue(note.clone());
        }
    }

    /// The client and token a progress note goes to. A fast upstream can answer with progress
    /// before the call's route is written: while some call is between sending and writing its
    /// route, wait for it (at most [`ROUTE_WAIT`]) and look again. Progress for a call that
    /// did not ask for it (rmcp gives every request a token) has no route and is dropped.
    pub(super) async fn progress_route(
        &self,
        key: &str,
    ) -> Option<(rmcp::service::Peer<rmcp::RoleServer>, Value)> {
        let find = || {
            lock(&self.routes)
                .get(key)
                .map(|r| (r.client.clone(), r.token.clone()))
        };
        if let Some(found) = find() {
            return Some(found);
        }
        let mut routing = self.routing.subscribe();
        let _ = tokio::time::timeout(ROUTE_WAIT, routing.wait_for(|n| *n == 0)).await;
        find()
    }

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
}

/// Counts a client's call as running until it ends, however it ends.
pub(super) struct InFlight<'a> {
    clients: &'a Clients,
    client: u64,
}

impl<'a> InFlight<'a> {
    pub(super) fn new(clients: &'a Clients, client: u64) -> Self {
        *lock(&clients.in_flight).entry(client).or_default() += 1;
        InFlight { clients, client }
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let mut map = lock(&self.clients.in_flight);
        if let Some(n) = map.get_mut(&self.client) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                map.remove(&self.client);
            }
        }
    }
}

/// Which upstream session this is (a restarted upstream counts progress tokens from the start
/// again, so routes are keyed by session and token), and the progress token.
pub(super) fn route_key(session: u64, token: &Value) -> String {
    format!("{session}:{token}")
}

//! The proxy's upstream: the session serving now, started again (with backoff) when the server
//! dies, and its notifications for the relay.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::clients::Clients;
use super::locked::lock;
use crate::config::ServerSpec;
use crate::wire::upstream::{NotificationOrder, Session, SessionOptions};

/// A session's notifications: the lines, their order of forwarding, and the session's key.
pub(super) type NotificationRx = (
    tokio::sync::mpsc::UnboundedReceiver<crate::wire::upstream::Line>,
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
    /// What the clients asked of the old session, told to a restarted one.
    clients: Arc<Clients>,
    /// A restarted session's notifications, subscribed before the session serves anything,
    /// for the relay to take up (subscribing after it was published lost its first ones).
    pub(super) next_notes: std::sync::Mutex<Option<NotificationRx>>,
}

impl Upstream {
    /// The upstream as first started, serving `session`.
    pub(super) fn new(
        spec: ServerSpec,
        opts: SessionOptions,
        session: Arc<Session>,
        clients: Arc<Clients>,
    ) -> Upstream {
        Upstream {
            spec,
            opts,
            current: std::sync::RwLock::new(session),
            restarting: AtomicBool::new(false),
            restarts: AtomicUsize::new(0),
            next_notes: std::sync::Mutex::new(None),
            clients,
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
                if let Ok(session) = crate::wire::connect::connect(&me.spec, &me.opts).await {
                    let session = Arc::new(session);
                    *lock(&me.next_notes) = Some(subscribe(&session));
                    me.clients.restore(&session).await;
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

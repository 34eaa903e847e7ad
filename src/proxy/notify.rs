//! The upstream's notifications fanned out to the clients: progress to the caller, log
//! messages by each client's level, resource updates to the subscribers, the rest to all.

use std::time::Duration;

use serde_json::{json, Value};

use super::state::{lock, log_rank, route_key, Client, NotificationRx, Shared, SEND_TIMEOUT};

/// Forward the upstream's notifications for as long as the proxy lives, following the upstream
/// across restarts: progress to the client whose call it is, under that client's token;
/// logging messages, resource updates and list changes to every client (a tools/list_changed
/// refreshes the tools shown first). The upstream's own cancellations are not forwarded: they
/// are about requests it made, and the proxy forwards none.
pub(super) fn relay_notifications(shared: std::sync::Weak<Shared>, first: NotificationRx) {
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

/// How long a progress note waits for the route of a call just sent (normally microseconds:
/// the time between the request leaving and its route being written).
const ROUTE_WAIT: Duration = Duration::from_millis(500);

impl Shared {
    /// The client and token a progress note goes to. A fast upstream can answer with progress
    /// before the call's route is written: while some call is between sending and writing its
    /// route, wait for it (at most [`ROUTE_WAIT`]) and look again. Progress for a call that
    /// did not ask for it (rmcp gives every request a token) has no route and is dropped.
    async fn progress_route(
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

    /// One notification of the upstream to the clients it concerns: progress to the client
    /// whose call it is (under that client's token), a log message to the clients whose level
    /// it meets, a resource update to the clients subscribed to it, anything else to all.
    pub(super) async fn relay(&self, session: u64, line: &str) {
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
                let Some((client, token)) = self.progress_route(&key).await else {
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
            client.enqueue(n.clone());
        }
    }
}

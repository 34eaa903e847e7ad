//! Notifications to the clients: the upstream's fanned out (progress to the caller, log messages
//! by each client's level, resource updates to the subscribers, the rest to all), and the
//! proxy's own `tools/list_changed` when exposed tools come and go (`--lazy-expose`).

use std::time::Duration;

use serde_json::{json, Value};

use super::clients::{log_rank, route_key, Client, SEND_TIMEOUT};
use super::locked::lock;
use super::state::Shared;
use super::upstream::NotificationRx;

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
                relay(&s, session, &line).await;
                order.done_one();
            }
            // the session was replaced (a restart): follow the new one
        }
    });
}

/// One notification of the upstream to the clients it concerns: progress to the client
/// whose call it is (under that client's token), a log message to the clients whose level
/// it meets, a resource update to the clients subscribed to it, anything else to all.
async fn relay(shared: &Shared, session: u64, line: &str) {
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
            let Some((client, token)) = shared.clients.progress_route(&key).await else {
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
            let levels = lock(&shared.clients.log_levels).clone();
            shared
                .clients
                .live()
                .into_iter()
                .filter(|c| levels.get(&c.id).is_none_or(|&min| rank >= min))
                .collect()
        }
        "notifications/resources/updated" => {
            let subscribed = params["uri"]
                .as_str()
                .and_then(|u| lock(&shared.clients.subscriptions).get(u).cloned());
            shared
                .clients
                .live()
                .into_iter()
                .filter(|c| subscribed.as_ref().is_none_or(|s| s.contains(&c.id)))
                .collect()
        }
        _ => {
            if method == "notifications/tools/list_changed" {
                let session = shared.upstream.get();
                for w in shared.tools.refresh(&session, &shared.opts).await {
                    shared.warn(w);
                }
            }
            shared.clients.live()
        }
    };
    let Some(n) = note(params) else {
        return;
    };
    for client in targets {
        client.enqueue(n.clone());
    }
}

/// Send every client `notifications/tools/list_changed`.
pub(super) fn tell_tools_changed(shared: &Shared) {
    let note = serde_json::from_value::<rmcp::model::ServerNotification>(
        json!({"method": "notifications/tools/list_changed"}),
    );
    if let Ok(note) = note {
        shared.clients.tell_all(&note);
    }
}

/// Take exposed tools off the list `ttl` after they were last found or called, for as long as
/// the proxy lives, telling the clients when the list changed.
pub(super) fn expire_exposed(shared: std::sync::Weak<Shared>, ttl: Duration) {
    let tick = (ttl / 4).clamp(Duration::from_millis(100), Duration::from_secs(30));
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(tick).await;
            let Some(s) = shared.upgrade() else { return };
            if s.tools.expire(ttl, &s.opts) {
                tell_tools_changed(&s);
            }
        }
    });
}

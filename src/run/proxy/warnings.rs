//! What the proxy noticed that its operator should hear of (an upstream that lists a tool twice,
//! pages in a circle, or names a tool like the proxy's own). The library never prints: each
//! message goes once into a queue the binary drains to stderr.

use std::collections::HashSet;
use std::sync::Mutex;

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

/// Messages at most kept (a hostile upstream cannot grow the set without end).
const MAX_WARNINGS: usize = 1000;

/// A queue of distinct warnings.
#[derive(Debug)]
pub(super) struct Warnings {
    sent: Mutex<HashSet<String>>,
    tx: UnboundedSender<String>,
    rx: Mutex<Option<UnboundedReceiver<String>>>,
}

impl Default for Warnings {
    fn default() -> Self {
        let (tx, rx) = unbounded_channel();
        Warnings {
            sent: Mutex::default(),
            tx,
            rx: Mutex::new(Some(rx)),
        }
    }
}

impl Warnings {
    /// Queue `message` unless it was queued before. Once [`MAX_WARNINGS`] are remembered,
    /// new messages are still queued, only no longer remembered (a spill failure must never
    /// go unsaid because a hostile upstream filled the set).
    pub(super) fn warn(&self, message: String) {
        let mut sent = self.sent.lock().unwrap_or_else(|p| p.into_inner());
        if sent.contains(&message) {
            return;
        }
        if sent.len() < MAX_WARNINGS {
            sent.insert(message.clone());
        }
        let _ = self.tx.send(message);
    }

    /// The queue's receiving end: every warning so far and to come (`None` once taken).
    pub(super) fn take(&self) -> Option<UnboundedReceiver<String>> {
        self.rx.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_message_is_queued_once() {
        let w = Warnings::default();
        w.warn("a".into());
        w.warn("b".into());
        w.warn("a".into());
        let mut rx = w.take().unwrap();
        assert!(w.take().is_none());
        let mut got = Vec::new();
        while let Ok(m) = rx.try_recv() {
            got.push(m);
        }
        assert_eq!(got, ["a", "b"]);
    }

    #[test]
    fn a_full_set_still_says_new_messages() {
        let w = Warnings::default();
        for i in 0..MAX_WARNINGS + 3 {
            w.warn(format!("m{i}"));
        }
        let mut rx = w.take().unwrap();
        let mut n = 0;
        while rx.try_recv().is_ok() {
            n += 1;
        }
        assert_eq!(n, MAX_WARNINGS + 3);
    }
}

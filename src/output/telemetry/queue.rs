//! Exporting never holds up a call: an ended span goes into a bounded queue (a full queue drops
//! it, counted) and one thread of its own sends the batches with the OTLP exporter, each export
//! bounded by the exporter's timeout. What is lost, dropped at a full queue or in an export
//! that failed, is counted and said once. At the end, what is queued is flushed within a
//! bounded time, then given up.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry::Context;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{Span, SpanData, SpanExporter, SpanProcessor};

use super::http::Cause;

/// How many ended spans wait at most; past it a span is dropped (and counted).
pub const QUEUE_SPANS: usize = 2048;
/// Spans sent in one export at most.
const BATCH_SPANS: usize = 512;
/// How long a span waits for its batch at most.
const BATCH_DELAY: Duration = Duration::from_millis(500);

/// Where lost telemetry is counted and said, once.
pub struct Losses {
    spans: AtomicU64,
    metric_exports: AtomicU64,
    said: AtomicBool,
    say: Box<dyn Fn(String) + Send + Sync>,
}

impl std::fmt::Debug for Losses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Losses")
            .field("spans", &self.spans)
            .field("metric_exports", &self.metric_exports)
            .finish()
    }
}

impl Losses {
    pub fn new(say: Box<dyn Fn(String) + Send + Sync>) -> Losses {
        Losses {
            spans: AtomicU64::new(0),
            metric_exports: AtomicU64::new(0),
            said: AtomicBool::new(false),
            say,
        }
    }

    /// `n` spans lost, and why; the first loss is said (calls go on either way).
    pub fn spans_lost(&self, n: u64, why: &str) {
        self.spans.fetch_add(n, Ordering::Relaxed);
        self.say_once(why);
    }

    /// One export of metrics failed (the next one carries the same cumulative numbers).
    pub fn metrics_lost(&self, why: &str) {
        self.metric_exports.fetch_add(1, Ordering::Relaxed);
        self.say_once(why);
    }

    /// At the end: what was lost in all, when anything was (the first loss was said as it
    /// happened; this is the count).
    pub fn say_totals(&self) {
        let spans = self.spans.load(Ordering::Relaxed);
        let metrics = self.metric_exports.load(Ordering::Relaxed);
        if spans + metrics > 0 {
            (self.say)(format!(
                "telemetry: {spans} span(s) and {metrics} metric export(s) lost in all"
            ));
        }
    }

    /// The metrics reached their cap of series: said once (what is folded is counted by the
    /// fold counter, not lost).
    pub fn series_capped(&self, max: usize) {
        (self.say)(format!(
            "telemetry: the metrics reached their cap of {} series; requests with labels new from now on are counted under `other` (mcp_budget_labels_folded_total{{mcp_budget_fold_reason=\"series\"}} counts them; said once)",
            crate::ground::units::thousands(max)
        ));
    }

    fn say_once(&self, why: &str) {
        if !self.said.swap(true, Ordering::SeqCst) {
            (self.say)(format!(
                "telemetry: {why}; calls are not affected, and what is lost is counted (said once)"
            ));
        }
    }
}

enum Msg {
    Span(Box<SpanData>),
    Flush(std::sync::mpsc::Sender<()>),
    Shutdown(std::sync::mpsc::Sender<()>),
}

/// The bounded span queue and its export thread.
#[derive(Debug)]
pub struct QueueProcessor {
    tx: SyncSender<Msg>,
    losses: Arc<Losses>,
    worker: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl QueueProcessor {
    /// Start the export thread with `exporter` (its resource already set).
    pub fn start<E: SpanExporter + 'static>(
        exporter: E,
        losses: Arc<Losses>,
        cause: Cause,
    ) -> QueueProcessor {
        let (tx, rx) = std::sync::mpsc::sync_channel(QUEUE_SPANS);
        let lost = losses.clone();
        let worker = std::thread::Builder::new()
            .name("mcp-budget-otlp-spans".into())
            .spawn(move || export_loop(rx, exporter, &lost, &cause))
            .expect("a thread can be started");
        QueueProcessor {
            tx,
            losses,
            worker: Mutex::new(Some(worker)),
        }
    }

    /// Send `msg` (a flush, the shutdown) before `deadline`, waiting for room in the queue.
    fn send_until(&self, mut msg: Msg, deadline: Instant) -> bool {
        loop {
            match self.tx.try_send(msg) {
                Ok(()) => return true,
                Err(TrySendError::Disconnected(_)) => return false,
                Err(TrySendError::Full(m)) if Instant::now() < deadline => {
                    msg = m;
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(TrySendError::Full(_)) => return false,
            }
        }
    }

    /// Ask the thread for `msg` and wait for its answer until `timeout` has passed.
    fn ask(
        &self,
        msg: impl FnOnce(std::sync::mpsc::Sender<()>) -> Msg,
        timeout: Duration,
    ) -> OTelSdkResult {
        let deadline = Instant::now() + timeout;
        let (done, answered) = std::sync::mpsc::channel();
        if !self.send_until(msg(done), deadline) {
            return Err(OTelSdkError::Timeout(timeout));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        answered
            .recv_timeout(left)
            .map_err(|_| OTelSdkError::Timeout(timeout))
    }
}

impl SpanProcessor for QueueProcessor {
    fn on_start(&self, _span: &mut Span, _cx: &Context) {}

    fn on_end(&self, span: SpanData) {
        match self.tx.try_send(Msg::Span(Box::new(span))) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => self.losses.spans_lost(
                1,
                &format!("the queue of {QUEUE_SPANS} spans is full (the collector is slow or down): spans are dropped"),
            ),
            Err(TrySendError::Disconnected(_)) => {
                self.losses.spans_lost(1, "the span exporter has stopped")
            }
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.ask(Msg::Flush, Duration::from_secs(5))
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        let answered = self.ask(Msg::Shutdown, timeout);
        if answered.is_ok() {
            if let Some(worker) = self.worker.lock().unwrap_or_else(|p| p.into_inner()).take() {
                let _ = worker.join();
            }
        }
        answered
    }
}

/// The export thread: batches of up to [`BATCH_SPANS`], sent when full, after [`BATCH_DELAY`],
/// on a flush and at the end.
fn export_loop<E: SpanExporter>(rx: Receiver<Msg>, exporter: E, losses: &Losses, cause: &Cause) {
    let mut batch: Vec<SpanData> = Vec::new();
    let mut due = Instant::now() + BATCH_DELAY;
    loop {
        let wait = due.saturating_duration_since(Instant::now());
        match rx.recv_timeout(wait) {
            Ok(Msg::Span(s)) => {
                batch.push(*s);
                if batch.len() >= BATCH_SPANS {
                    export(&exporter, &mut batch, losses, cause);
                    due = Instant::now() + BATCH_DELAY;
                }
            }
            Ok(Msg::Flush(done)) => {
                export(&exporter, &mut batch, losses, cause);
                let _ = done.send(());
            }
            Ok(Msg::Shutdown(done)) => {
                export(&exporter, &mut batch, losses, cause);
                let _ = exporter.shutdown();
                let _ = done.send(());
                return;
            }
            Err(RecvTimeoutError::Timeout) => {
                export(&exporter, &mut batch, losses, cause);
                due = Instant::now() + BATCH_DELAY;
            }
            Err(RecvTimeoutError::Disconnected) => {
                export(&exporter, &mut batch, losses, cause);
                return;
            }
        }
    }
}

fn export<E: SpanExporter>(
    exporter: &E,
    batch: &mut Vec<SpanData>,
    losses: &Losses,
    cause: &Cause,
) {
    if batch.is_empty() {
        return;
    }
    let spans = std::mem::take(batch);
    let n = spans.len() as u64;
    if let Err(e) = futures::executor::block_on(exporter.export(spans)) {
        let why = cause.take();
        losses.spans_lost(n, &format!("an export of {n} spans failed ({e}{why})"));
    }
}

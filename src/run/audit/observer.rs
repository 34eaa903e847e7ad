//! Progress callbacks of an audit, so the binary can draw bars without the core printing.

use crate::measure::facts::ServerReport;

/// Where a server's audit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Connecting,
    Listing,
    Probing { done: usize, total: usize },
}

/// Told about each server as its audit moves on. Called from several tasks at once.
pub trait AuditObserver: Send + Sync {
    fn phase(&self, server: &str, phase: Phase);
    fn finished(&self, report: &ServerReport);
}

/// An observer that ignores everything.
pub struct NoProgress;

impl AuditObserver for NoProgress {
    fn phase(&self, _: &str, _: Phase) {}
    fn finished(&self, _: &ServerReport) {}
}

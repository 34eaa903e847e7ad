//! Progress bars on stderr while an audit runs: drawn only when stderr is a terminal.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use mcp_budget::audit::{AuditObserver, Phase};
use mcp_budget::report::{ServerReport, Status};

/// One overall bar and a spinner per server in flight.
pub struct Bars {
    multi: MultiProgress,
    overall: ProgressBar,
    servers: Mutex<HashMap<String, ProgressBar>>,
}

impl Bars {
    pub fn new(total: usize) -> Self {
        let target = if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let multi = MultiProgress::with_draw_target(target);
        let overall = multi.add(ProgressBar::new(total as u64));
        overall.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} servers audited {elapsed}")
                .expect("static template is valid"),
        );
        overall.enable_steady_tick(Duration::from_millis(250));
        Bars {
            multi,
            overall,
            servers: Mutex::new(HashMap::new()),
        }
    }

    fn bar(&self, server: &str) -> ProgressBar {
        let mut map = self.servers.lock().unwrap_or_else(|p| p.into_inner());
        map.entry(server.to_string())
            .or_insert_with(|| {
                let b = self.multi.add(ProgressBar::new_spinner());
                b.set_style(
                    ProgressStyle::with_template("  {spinner} {prefix}: {msg}")
                        .expect("static template is valid"),
                );
                b.set_prefix(server.to_string());
                b.enable_steady_tick(Duration::from_millis(120));
                b
            })
            .clone()
    }

    pub fn finish(&self) {
        self.overall.finish_and_clear();
        let _ = self.multi.clear();
    }
}

impl AuditObserver for Bars {
    fn phase(&self, server: &str, phase: Phase) {
        let msg = match phase {
            Phase::Connecting => "connecting".to_string(),
            Phase::Listing => "listing tools".to_string(),
            Phase::Probing { done, total } => format!("probe {}/{}", done + 1, total),
        };
        self.bar(server).set_message(msg);
    }

    fn finished(&self, report: &ServerReport) {
        if let Some(b) = self
            .servers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&report.name)
        {
            b.finish_and_clear();
        }
        if report.status == Status::Error {
            let _ = self.multi.println(format!(
                "error: server `{}`: {}",
                report.name,
                report.error.as_deref().unwrap_or("failed")
            ));
        }
        self.overall.inc(1);
    }
}

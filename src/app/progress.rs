//! Progress on stderr while an audit runs, drawn only when stderr is a terminal: one bar per
//! phase (servers connected, tools listed, probes called), so 50 servers take three lines, not
//! fifty. The probes bar grows as each server says how many probes it has; its message names a
//! few of the servers still in flight.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use mcp_budget::measure::facts::{ServerReport, Status};
use mcp_budget::run::audit::{AuditObserver, Phase};

/// How far one server has got.
#[derive(Debug, Default, Clone, Copy)]
struct Progress {
    connected: bool,
    listed: bool,
    probes_total: usize,
    probes_done: usize,
}

/// The three phase bars and each server's progress.
pub struct Bars {
    multi: MultiProgress,
    connected: ProgressBar,
    listed: ProgressBar,
    probes: ProgressBar,
    servers: Mutex<BTreeMap<String, Progress>>,
}

fn bar(multi: &MultiProgress, len: u64, what: &str) -> ProgressBar {
    let b = multi.add(ProgressBar::new(len));
    let template = format!("{{bar:30}} {{pos:>4}}/{{len:<4}} {what} {{msg}}");
    b.set_style(ProgressStyle::with_template(&template).expect("static template is valid"));
    b
}

impl Bars {
    pub fn new(servers: usize) -> Self {
        let target = if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        Self::with_target(servers, target)
    }

    fn with_target(servers: usize, target: ProgressDrawTarget) -> Self {
        let multi = MultiProgress::with_draw_target(target);
        let connected = bar(&multi, servers as u64, "servers connected");
        let listed = bar(&multi, servers as u64, "tool lists read   ");
        let probes = bar(&multi, 0, "probes called     ");
        probes.enable_steady_tick(Duration::from_millis(250));
        Bars {
            multi,
            connected,
            listed,
            probes,
            servers: Mutex::new(BTreeMap::new()),
        }
    }

    pub fn finish(&self) {
        for b in [&self.connected, &self.listed, &self.probes] {
            b.finish_and_clear();
        }
        let _ = self.multi.clear();
    }

    /// Move `server` to `to`, advancing every bar it passes.
    fn advance(&self, server: &str, to: Progress) {
        let mut map = self.servers.lock().unwrap_or_else(|p| p.into_inner());
        let now = map.entry(server.to_string()).or_default();
        if to.connected && !now.connected {
            self.connected.inc(1);
        }
        if to.listed && !now.listed {
            self.listed.inc(1);
        }
        if to.probes_total > now.probes_total {
            self.probes
                .inc_length((to.probes_total - now.probes_total) as u64);
        }
        if to.probes_done > now.probes_done {
            self.probes.inc((to.probes_done - now.probes_done) as u64);
        }
        *now = Progress {
            connected: now.connected || to.connected,
            listed: now.listed || to.listed,
            probes_total: now.probes_total.max(to.probes_total),
            probes_done: now.probes_done.max(to.probes_done),
        };
        let in_flight: Vec<&str> = map
            .iter()
            .filter(|(_, p)| !p.listed || p.probes_done < p.probes_total)
            .map(|(name, _)| name.as_str())
            .collect();
        let mut msg = in_flight
            .iter()
            .take(3)
            .copied()
            .collect::<Vec<_>>()
            .join(", ");
        if in_flight.len() > 3 {
            msg.push_str(&format!(" +{} more", in_flight.len() - 3));
        }
        self.probes
            .set_message(mcp_budget::ground::text::one_line(&msg).into_owned());
    }
}

impl AuditObserver for Bars {
    fn phase(&self, server: &str, phase: Phase) {
        let to = match phase {
            Phase::Connecting => Progress::default(),
            Phase::Listing => Progress {
                connected: true,
                ..Progress::default()
            },
            Phase::Probing { done, total } => Progress {
                connected: true,
                listed: true,
                probes_total: total,
                probes_done: done,
            },
        };
        self.advance(server, to);
    }

    fn finished(&self, report: &ServerReport) {
        // a server that failed early still counts as done in every phase it skipped
        let total = {
            let map = self.servers.lock().unwrap_or_else(|p| p.into_inner());
            map.get(&report.name).map_or(0, |p| p.probes_total)
        };
        self.advance(
            &report.name,
            Progress {
                connected: true,
                listed: true,
                probes_total: total,
                probes_done: total,
            },
        );
        if report.status == Status::Error {
            let _ = self.multi.println(mcp_budget::ground::text::lines(&format!(
                "error: server `{}`: {}",
                report.name,
                report.error.as_deref().unwrap_or("failed")
            )));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn positions(b: &Bars) -> [(u64, u64); 3] {
        [&b.connected, &b.listed, &b.probes].map(|p| (p.position(), p.length().unwrap_or(0)))
    }

    #[test]
    fn each_phase_has_its_own_bar() {
        let b = Bars::with_target(3, ProgressDrawTarget::hidden());
        for s in ["a", "b", "c"] {
            b.phase(s, Phase::Connecting);
        }
        assert_eq!(positions(&b), [(0, 3), (0, 3), (0, 0)]);
        b.phase("a", Phase::Listing);
        b.phase("b", Phase::Listing);
        assert_eq!(positions(&b), [(2, 3), (0, 3), (0, 0)]);
        b.phase("a", Phase::Probing { done: 0, total: 4 });
        b.phase("a", Phase::Probing { done: 1, total: 4 });
        b.phase("b", Phase::Probing { done: 0, total: 2 });
        assert_eq!(positions(&b), [(2, 3), (2, 3), (1, 6)]);
        assert_eq!(b.probes.message(), "a, b, c");

        // a finished server completes its probes; one that failed while connecting
        // completes the connect and list bars without adding probes
        let mut done = ServerReport::new("a", "stdio", "x", "t.toml");
        done.status = Status::Ok;
        b.finished(&done);
        let mut failed = ServerReport::new("c", "stdio", "x", "t.toml");
        failed.status = Status::Error;
        b.finished(&failed);
        assert_eq!(positions(&b), [(3, 3), (3, 3), (4, 6)]);
        assert_eq!(b.probes.message(), "b");
    }
}

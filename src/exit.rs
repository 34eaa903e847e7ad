//! Every exit status of the binary, in one place (documented in the README and docs/exit-codes.md).

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0: everything was measured (and every gate passed).
    Success,
    /// 1: a gate failed (thresholds or regression); `--exit-zero` turns it into 0.
    GateFailed,
    /// 2: usage, config or I/O error, or a server that could not be audited (the report is
    /// still written for the others).
    Error,
    /// 130: interrupted by Ctrl-C (SIGINT); servers were stopped.
    Interrupted,
    /// 143: ended by SIGTERM (`timeout`, `kill`, a stopped container); servers were stopped.
    Terminated,
    /// 129: ended by SIGHUP (the terminal closed, a cancelled CI job); servers were stopped.
    HungUp,
}

impl From<ExitStatus> for std::process::ExitCode {
    fn from(s: ExitStatus) -> Self {
        std::process::ExitCode::from(match s {
            ExitStatus::Success => 0,
            ExitStatus::GateFailed => 1,
            ExitStatus::Error => 2,
            ExitStatus::Interrupted => 130,
            ExitStatus::Terminated => 143,
            ExitStatus::HungUp => 129,
        })
    }
}

impl ExitStatus {
    /// The signal's name, for the message that says why the run ended.
    pub fn signal_name(self) -> &'static str {
        match self {
            ExitStatus::Terminated => "SIGTERM",
            ExitStatus::HungUp => "SIGHUP",
            _ => "SIGINT",
        }
    }

    /// A gate's verdict: 1 when it failed, unless `--exit-zero`.
    pub fn of_verdict(verdict: &mcp_budget::gate::Verdict, exit_zero: bool) -> ExitStatus {
        if verdict.passed || exit_zero {
            ExitStatus::Success
        } else {
            ExitStatus::GateFailed
        }
    }
}

//! Every exit status of the binary, in one place (documented in the README and docs/exit-codes.md).
//!
//! A command returns `anyhow::Result<()>`. Success is `Ok(())`; an error is 2 and `main` prints
//! it once, with its causes; and a [`Failure`] carried in the error picks its own status by its
//! variant (a failed gate is 1, a signal 130, 143 or 129, an error already said on stderr 2
//! with nothing more printed). No command names an exit code.

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

/// A signal that ends a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Interrupt,
    Terminate,
    HangUp,
}

impl Signal {
    /// The signal's name, for the message that says why the run ended.
    pub fn name(self) -> &'static str {
        match self {
            Signal::Interrupt => "SIGINT",
            Signal::Terminate => "SIGTERM",
            Signal::HangUp => "SIGHUP",
        }
    }
}

/// A command's end that is not success and that the error's text alone does not say: its
/// variant picks the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// 2: what failed was already said on stderr, a line per server, file or probe.
    #[error("failed (said above)")]
    Reported,
    /// 1: a gate failed (its verdict was printed).
    #[error("the gate failed")]
    GateFailed,
    /// 130, 143 or 129: a signal ended the run; its servers were stopped.
    #[error("ended by {}", .0.name())]
    Signalled(Signal),
}

impl Failure {
    /// The exit status this failure picks.
    pub fn status(self) -> ExitStatus {
        match self {
            Failure::Reported => ExitStatus::Error,
            Failure::GateFailed => ExitStatus::GateFailed,
            Failure::Signalled(Signal::Interrupt) => ExitStatus::Interrupted,
            Failure::Signalled(Signal::Terminate) => ExitStatus::Terminated,
            Failure::Signalled(Signal::HangUp) => ExitStatus::HungUp,
        }
    }

    /// `Ok` when nothing failed, else [`Failure::Reported`] (each failure was said on stderr).
    pub fn unless_failed(failed: bool) -> anyhow::Result<()> {
        if failed {
            Err(Failure::Reported.into())
        } else {
            Ok(())
        }
    }

    /// A gate's verdict: [`Failure::GateFailed`] when it failed, unless `--exit-zero`.
    pub fn of_verdict(
        verdict: &mcp_budget::judge::gate::Verdict,
        exit_zero: bool,
    ) -> anyhow::Result<()> {
        if verdict.passed || exit_zero {
            Ok(())
        } else {
            Err(Failure::GateFailed.into())
        }
    }
}

/// The exit status of a command's outcome, and whether its error is still to be printed (a
/// [`Failure`] was said already, or needs no words).
pub fn status_of(outcome: &anyhow::Result<()>) -> (ExitStatus, bool) {
    match outcome {
        Ok(()) => (ExitStatus::Success, false),
        Err(e) => match e.downcast_ref::<Failure>() {
            Some(f) => (f.status(), false),
            None => (ExitStatus::Error, true),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_failure_picks_its_status_and_any_other_error_is_2_and_printed() {
        let f = |x: Failure| status_of(&Err(x.into()));
        assert_eq!(f(Failure::GateFailed), (ExitStatus::GateFailed, false));
        assert_eq!(f(Failure::Reported), (ExitStatus::Error, false));
        assert_eq!(
            f(Failure::Signalled(Signal::HangUp)),
            (ExitStatus::HungUp, false)
        );
        assert_eq!(
            f(Failure::Signalled(Signal::Terminate)),
            (ExitStatus::Terminated, false)
        );
        assert_eq!(status_of(&Ok(())), (ExitStatus::Success, false));
        let other: anyhow::Result<()> = Err(anyhow::anyhow!("no such file"));
        assert_eq!(status_of(&other), (ExitStatus::Error, true));
        // a failure wrapped in context still picks its status
        let wrapped: anyhow::Result<()> =
            Err(anyhow::Error::from(Failure::GateFailed).context("gating"));
        assert_eq!(status_of(&wrapped).0, ExitStatus::GateFailed);
    }
}

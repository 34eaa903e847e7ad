//! One file per subcommand: resolved settings in, core calls, printing, an exit status out.
//! A command imports no other command: what two share lives in `settings`, `printer` or the
//! library.

mod audit;
mod auth;
mod completions;
pub use completions::COMPLETE_VAR;
mod count;
mod demo_server;
mod gate;
mod intercept;
#[cfg(feature = "lab")]
mod lab;
mod proxy;
mod replay;
mod schema;
mod serve_capture;
mod servers;
mod stats;
mod wrap;

use crate::app::cli::{Cli, Command};
use crate::app::exit::Signal;

/// Run the chosen subcommand.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Audit(args) => audit::run(*args),
        Command::Replay(args) => replay::run(args),
        Command::Intercept(args) => intercept::run(args),
        Command::Servers(args) => servers::run(args),
        Command::Login(args) => auth::login(args),
        Command::Logout(args) => auth::logout(args),
        Command::Count(args) => count::run(args),
        Command::DemoServer => demo_server::run(),
        Command::Wrap(args) => wrap::wrap(*args),
        Command::Unwrap(args) => wrap::unwrap(args),
        Command::Gate(args) => gate::run(args),
        Command::Proxy(args) => proxy::run(*args),
        Command::Stats(args) => stats::run(args),
        Command::ServeCapture(args) => serve_capture::run(args),
        #[cfg(feature = "lab")]
        Command::Lab(args) => lab::run(*args),
        Command::Completions(args) => completions::completions(args),
        Command::Man(args) => completions::man(args),
        Command::Schema(args) => schema::run(args),
        #[cfg(feature = "lab")]
        Command::LabTap(args) => lab::tap(args),
        #[cfg(feature = "lab")]
        Command::LabServer(args) => lab::shape_server(&args),
        #[cfg(not(feature = "lab"))]
        Command::Lab(_) | Command::LabTap(_) | Command::LabServer(_) => {
            Err(crate::app::settings::without_lab())
        }
    }
}

pub(crate) use crate::app::runtime::runtime;

/// The signals that end a run: SIGINT (130), SIGTERM (143) and SIGHUP (129), the first of them
/// (a command ends with `Failure::Signalled`, whose status is the signal's). Listening starts now (before any server is started), so none of
/// them ends the process before its servers are ended (`upstream::end_all`).
fn signals() -> anyhow::Result<impl std::future::Future<Output = Signal>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    let mut hup = signal(SignalKind::hangup())?;
    Ok(async move {
        tokio::select! {
            _ = int.recv() => Signal::Interrupt,
            _ = term.recv() => Signal::Terminate,
            _ = hup.recv() => Signal::HangUp,
        }
    })
}

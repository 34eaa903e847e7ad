//! Whether a report can be gated at all: a report that measured nothing, or that lost a server
//! the baseline has, says nothing about growth, so it is an error rather than a pass.

use crate::measure::facts::{Report, Status};

/// Why a report cannot be judged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotComparable {
    #[error("{current} measured no server (none listed, or every one failed): nothing to gate")]
    NothingMeasured { current: String },
    #[error(
        "{current} has no measurement of server `{server}`, which the baseline {baseline} has"
    )]
    MissingServer {
        current: String,
        server: String,
        baseline: String,
    },
}

/// Check that `current` (shown as `current_path`) measured something and measured every server
/// the baseline measured.
pub fn check_comparable(
    current: &Report,
    current_path: &str,
    baseline: Option<(&Report, &str)>,
) -> Result<(), NotComparable> {
    let measured = |r: &Report, name: &str| {
        r.servers
            .iter()
            .any(|s| s.name == name && s.status == Status::Ok)
    };
    if !current.servers.iter().any(|s| s.status == Status::Ok) {
        return Err(NotComparable::NothingMeasured {
            current: current_path.to_string(),
        });
    }
    let Some((base, base_path)) = baseline else {
        return Ok(());
    };
    match base
        .servers
        .iter()
        .filter(|s| s.status == Status::Ok)
        .find(|s| !measured(current, &s.name))
    {
        Some(lost) => Err(NotComparable::MissingServer {
            current: current_path.to_string(),
            server: lost.name.clone(),
            baseline: base_path.to_string(),
        }),
        None => Ok(()),
    }
}

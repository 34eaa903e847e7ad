//! `audit --client X`: a client installed here in another version than the one its profile was
//! measured with is said, with the command that measures it again (the profile may no longer
//! say what that client does).

use mcp_budget::measure::facts::Report;

use crate::app::printer::warn;

/// Say each of the report's clients whose installed version is not its profile's.
pub fn say(report: &Report) {
    let profiled: Vec<&str> = report
        .clients
        .iter()
        .map(|c| c.id.as_str())
        .filter(|id| {
            mcp_budget::config::profiles::profile(id).is_some_and(|p| p.measured.is_some())
        })
        .collect();
    if profiled.is_empty() {
        return;
    }
    let Ok(runtime) = super::super::runtime() else {
        return;
    };
    for id in profiled {
        let installed = runtime.block_on(mcp_budget::lab::installed_version(id));
        if let Some(line) = installed.and_then(|v| mcp_budget::lab::stale_profile(id, &v)) {
            warn(&format!("warning: {line}"));
        }
    }
}

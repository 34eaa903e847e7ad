//! `audit --client X`: a client installed here in another version than the one its profile was
//! measured with is said, with the command that measures it again (the profile may no longer
//! say what that client does).

use mcp_budget::facts::Report;

use crate::printer::warn;

/// Say each of the report's clients whose installed version is not its profile's.
pub fn say(report: &Report) {
    let profiled: Vec<(String, String)> = report
        .clients
        .iter()
        .filter_map(|c| {
            let p = mcp_budget::profiles::profile(&c.id)?;
            Some((c.id.clone(), p.measured.as_ref()?.version.clone()))
        })
        .collect();
    let Ok(runtime) = super::super::runtime() else {
        return;
    };
    if profiled.is_empty() {
        return;
    }
    let installed = runtime.block_on(async {
        let mut out = Vec::new();
        for (id, _) in &profiled {
            out.push(mcp_budget::lab::installed_version(id).await);
        }
        out
    });
    for ((id, on), installed) in profiled.iter().zip(installed) {
        if let Some(v) = installed.filter(|v| v != on) {
            warn(&format!(
                "warning: {id}: profile measured on {on}, installed {v}: run `mcp-budget lab --derive --client {id}`"
            ));
        }
    }
}

//! `gate`'s settings: the thresholds of the probe files' `[gate]` tables with the flags on top.

use mcp_budget::config::ProbeFile;
use mcp_budget::judge::gate::Thresholds;

use crate::app::cli::GateArgs;

/// What `gate` judges with.
pub struct Gate {
    pub thresholds: Thresholds,
}

impl Gate {
    pub fn resolve(args: &GateArgs) -> anyhow::Result<Gate> {
        let probe_files = args
            .configs
            .iter()
            .map(|path| ProbeFile::read(path))
            .collect::<Result<Vec<_>, _>>()?;
        let thresholds =
            super::thresholds(super::probe_thresholds(&probe_files)?, &args.thresholds)?;
        Ok(Gate { thresholds })
    }
}

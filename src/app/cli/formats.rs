//! The output formats as flags, and the core's formats they stand for.

use clap::ValueEnum;
use mcp_budget::output::report::Listing;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StatsFormat {
    Table,
    Json,
    Csv,
}

/// Output of the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VerdictFormat {
    Table,
    Markdown,
    Github,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    Table,
    Json,
}

impl ListFormat {
    /// The core's listing format, a table `width` wide.
    pub fn listing(self, width: Option<u16>) -> Listing {
        match self {
            ListFormat::Table => Listing::Table { width },
            ListFormat::Json => Listing::Json,
        }
    }
}

impl StatsFormat {
    /// The core's listing format, a table `width` wide.
    pub fn listing(self, width: Option<u16>) -> Listing {
        match self {
            StatsFormat::Table => Listing::Table { width },
            StatsFormat::Json => Listing::Json,
            StatsFormat::Csv => Listing::Csv,
        }
    }
}

impl VerdictFormat {
    /// The core's verdict format, a table `width` wide (its lines wrapped to it when `wrap`).
    pub fn core(self, width: Option<u16>, wrap: bool) -> mcp_budget::output::gate::GateFormat {
        use mcp_budget::output::gate::GateFormat as G;
        match self {
            VerdictFormat::Table => G::Table { width, wrap },
            VerdictFormat::Markdown => G::Markdown,
            VerdictFormat::Github => G::Github,
            VerdictFormat::Json => G::Json,
        }
    }
}

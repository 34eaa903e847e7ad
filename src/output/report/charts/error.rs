//! Why a chart could not be drawn, encoded or written.

use std::path::PathBuf;

#[cfg(feature = "charts")]
pub(super) type DrawError = Box<dyn std::error::Error + Send + Sync>;

#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error("this mcp-budget was built without charts (the `charts` feature is off): build it with `--features charts`")]
    NotBuilt,
    #[error("failed to load the embedded chart font")]
    Font,
    #[error("failed to draw the {chart} chart")]
    Draw {
        chart: &'static str,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[cfg(feature = "charts")]
    #[error("failed to encode the {chart} chart as PNG")]
    Encode {
        chart: &'static str,
        #[source]
        source: png::EncodingError,
    },
    #[error("failed to write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

#[cfg(feature = "charts")]
pub(super) fn draw_error(chart: &'static str, source: DrawError) -> ChartError {
    ChartError::Draw { chart, source }
}

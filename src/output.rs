//! What is written: the report's writers (terminal, CSV, JSON, Markdown, HTML, charts), the gate's writers, telemetry (OTLP and Prometheus).

pub mod gate;
pub mod report;
pub mod telemetry;

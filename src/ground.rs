//! The ground: text, whole-or-nothing writes, units, exact token counts, the proxy's call log.

pub mod atomic;
pub mod calllog;
pub mod text;
pub mod tokens;
pub mod units;

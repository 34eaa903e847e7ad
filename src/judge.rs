//! The judges of a report: findings, client views, limits and prices (`assess`), and the gate's thresholds, baselines and verdict (`gate`).

pub mod assess;
pub mod gate;

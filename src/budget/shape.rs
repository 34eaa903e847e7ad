//! The shaping stages: a JSON result written compactly (`compaction`), projected by JMESPath
//! (`project`), filled to a budget keeping JSON valid (`fill`, the structural shrink) or written
//! as TOON (`toon`), each number as the server wrote it (`exact`).

pub(super) mod compaction;
pub(super) mod exact;
pub(super) mod fill;
pub(super) mod project;
pub(super) mod toon;

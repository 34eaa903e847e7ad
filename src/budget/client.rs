//! The engine for one client: the policy's limits tightened to what the client's profile says it
//! keeps of a result (`proxy --client`, `replay --client`, the audit's `budgeted` client view).

use super::{Engine, SizeLimits};
use crate::profiles::{engine_limits, ClientProfile, ResultLimits};

impl Engine {
    /// A copy whose every tool's limits are tightened to `limits`, a client's limits in its own
    /// units.
    pub fn for_limits(&self, limits: ResultLimits) -> Engine {
        self.tightened(
            limits.tokens,
            SizeLimits {
                bytes: limits.bytes,
                chars: limits.chars,
                lines: limits.lines,
            },
            limits.note_first,
        )
    }

    /// A copy tightened to the limits of `profile`'s result rules.
    pub fn for_client(&self, profile: &ClientProfile) -> Engine {
        self.for_limits(engine_limits(profile))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::{Policy, SpillStore};
    use crate::profiles::profile;
    use crate::tokens::Tokenizer;

    #[test]
    fn a_clients_limits_tighten_every_tool_and_none_leave_the_policy_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::new(
            Policy::default(),
            Tokenizer::Cl100k,
            SpillStore::new(dir.path(), 1 << 20),
        );
        let codex = profile("codex").unwrap();
        let limits = engine_limits(codex);
        assert_eq!(
            limits.bytes,
            Some(12_000),
            "codex keeps 12,000 bytes: {limits:?}"
        );
        let tight = engine.for_client(codex);
        assert_eq!(tight.policy().for_tool("x").size.bytes, Some(12_000));
        let same = engine.for_limits(ResultLimits::default());
        assert_eq!(
            same.policy().for_tool("x").budget,
            engine.policy().for_tool("x").budget
        );
        assert_eq!(same.policy().for_tool("x").size.bytes, None);
    }
}

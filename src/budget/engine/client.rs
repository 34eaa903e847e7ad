//! The engine for one client: the policy's limits tightened to what the client's profile says it
//! keeps of a result (`proxy --client`, `replay --client`, the audit's `budgeted` client view).

use super::Engine;
use crate::budget::policy::size::SizeLimits;
use crate::config::profiles::{engine_limits, ClientProfile, ResultLimits};

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
        .with_resources_json(limits.resources_json)
    }

    /// A copy tightened to the tightest limits of `profiles` in every unit (one proxy in front
    /// of several clients); no profile: the engine as it is.
    pub fn for_clients(&self, profiles: &[&ClientProfile]) -> Engine {
        match profiles
            .iter()
            .map(|p| engine_limits(p))
            .reduce(ResultLimits::tightest)
        {
            Some(limits) => self.for_limits(limits),
            None => self.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::policy::Policy;
    use crate::budget::spill::SpillStore;
    use crate::config::profiles::profile;
    use crate::ground::tokens::Tokenizer;

    /// The default engine, spilling into `dir`.
    fn engine(dir: &std::path::Path) -> Engine {
        Engine::new(
            Policy::default(),
            Tokenizer::Cl100k,
            SpillStore::new(dir, 1 << 20),
        )
    }

    #[test]
    fn a_clients_limits_tighten_every_tool_and_none_leave_the_policy_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let engine = engine(dir.path());
        let codex = profile("codex").unwrap();
        let limits = engine_limits(codex);
        assert_eq!(
            limits.bytes,
            Some(12_000),
            "codex keeps 12,000 bytes: {limits:?}"
        );
        let tight = engine.for_clients(&[codex]);
        assert_eq!(tight.policy().for_tool("x").size.bytes, Some(12_000));
        let same = engine.for_limits(ResultLimits::default());
        assert_eq!(
            same.policy().for_tool("x").budget,
            engine.policy().for_tool("x").budget
        );
        assert_eq!(same.policy().for_tool("x").size.bytes, None);
    }

    #[test]
    fn several_clients_get_the_tightest_limit_of_each_unit() {
        let dir = tempfile::tempdir().unwrap();
        let engine = engine(dir.path());
        let (codex, claude) = (profile("codex").unwrap(), profile("claude-code").unwrap());
        let both = engine.for_clients(&[codex, claude]);
        let p = both.policy().for_tool("x");
        // Codex's 12,000 bytes and Claude Code's 50,000 characters, each kept
        assert_eq!(p.size.bytes, Some(12_000));
        assert_eq!(p.size.chars, Some(50_000));
        assert!(
            p.size.bytes.is_some() && p.size.chars.is_some(),
            "{:?}",
            p.size
        );
        // the order of the clients does not matter
        let other = engine.for_clients(&[claude, codex]);
        assert_eq!(other.policy().for_tool("x").size, p.size);
        assert_eq!(
            engine.for_clients(&[]).policy().for_tool("x").size,
            engine.policy().for_tool("x").size
        );
    }

    /// Codex sends an embedded resource as its block's JSON and holds that to 12,000 bytes: a
    /// text of lines and quotes (which JSON escapes) is cut so the block fits, and Codex then
    /// keeps it whole; measured as plain text it would be over and cut again.
    #[test]
    fn a_resource_sent_as_json_fits_the_client_once_escaped() {
        let dir = tempfile::tempdir().unwrap();
        let engine = engine(dir.path());
        let codex = profile("codex").unwrap();
        assert!(engine_limits(codex).resources_json);
        let text: String = (0..3000)
            .map(|i| format!("let s{i} = \"v\\{i}\";\n"))
            .collect();
        let result = serde_json::json!({"content": [{"type": "resource", "resource": {
            "uri": "file:///src/lib.rs", "mimeType": "text/x-rust", "text": text}}]});
        let call = crate::budget::CallInfo {
            server: "s",
            tool: "read_file",
            raw: None,
            output_schema: false,
        };
        let out = engine.for_clients(&[codex]).run(&call, &result).result;
        let block = &out["content"][0];
        assert_eq!(block["type"], "resource", "{out}");
        let sent = serde_json::to_string(block).unwrap();
        assert!(sent.len() <= 12_000, "{} bytes", sent.len());
        // a preview that fills what is left: most of the 12,000 bytes
        assert!(sent.len() > 10_000, "{} bytes", sent.len());
        let seen = crate::config::profiles::client_view(codex, &out, Tokenizer::Cl100k);
        assert_eq!(
            seen.outcome,
            crate::config::profiles::Outcome::Full,
            "{seen:?}"
        );
        // the same engine without the client's JSON view: its preview is over once escaped
        let plain = engine
            .for_limits(ResultLimits {
                resources_json: false,
                ..engine_limits(codex)
            })
            .run(&call, &result)
            .result;
        let seen = crate::config::profiles::client_view(codex, &plain, Tokenizer::Cl100k);
        assert_eq!(
            seen.outcome,
            crate::config::profiles::Outcome::Truncated,
            "{seen:?}"
        );
    }
}

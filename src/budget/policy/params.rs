//! The policy keys that shape a tool's parameters in the proxy: `hide_params` (globs of optional
//! parameters taken out of the schema, each checked to compile) and `fixed_arguments` (values
//! supplied on every call, read from TOML into JSON once per rule applied).

use crate::budget::policy::{PolicyError, ToolPolicy};

/// Apply a rule's `hide_params` and `fixed_arguments` to `p` (`tool` names the rule in errors).
pub(super) fn apply(
    p: &mut ToolPolicy,
    hide_params: Option<&[String]>,
    fixed_arguments: Option<&toml::Table>,
    tool: &str,
) -> Result<(), PolicyError> {
    if let Some(names) = hide_params {
        for n in names {
            globset::Glob::new(n).map_err(|e| PolicyError {
                tool: tool.into(),
                message: format!("`hide_params` entry `{n}` is not a glob: {e}"),
            })?;
        }
        p.hide_params = names.to_vec();
    }
    if let Some(args) = fixed_arguments {
        let v = serde_json::to_value(args).map_err(|e| PolicyError {
            tool: tool.into(),
            message: format!("`fixed_arguments` cannot be read as JSON: {e}"),
        })?;
        if let serde_json::Value::Object(m) = v {
            p.fixed_arguments.extend(m);
        }
    }
    Ok(())
}

//! `${VAR}`, `${VAR:-default}` and VS Code's `${env:VAR}` in config strings, read from the
//! environment. Values are never printed: callers redact them through [`super::Redactor`].

/// Expand every `${...}` in `input` with `lookup`; the error names the first missing variable.
pub fn expand_vars(input: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("unclosed `${{` in `{input}`"));
        };
        let expr = &after[..end];
        out.push_str(&resolve(expr, lookup)?);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn resolve(expr: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let expr = expr.strip_prefix("env:").unwrap_or(expr);
    let (name, default) = match expr.split_once(":-") {
        Some((n, d)) => (n, Some(d)),
        None => (expr, None),
    };
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("unsupported variable `${{{expr}}}`"));
    }
    match (lookup(name), default) {
        (Some(v), _) => Ok(v),
        (None, Some(d)) => Ok(d.to_string()),
        (None, None) => Err(format!("environment variable `{name}` is not set")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("s3cret".into()),
            "HOME" => Some("/home/u".into()),
            _ => None,
        }
    }

    #[test]
    fn expands_plain_default_and_vscode_forms() {
        assert_eq!(
            expand_vars("Bearer ${TOKEN}", &env).unwrap(),
            "Bearer s3cret"
        );
        assert_eq!(
            expand_vars("${HOME}/x:${env:TOKEN}", &env).unwrap(),
            "/home/u/x:s3cret"
        );
        assert_eq!(
            expand_vars("${MISSING:-fallback}", &env).unwrap(),
            "fallback"
        );
        assert_eq!(expand_vars("no vars $HOME", &env).unwrap(), "no vars $HOME");
    }

    #[test]
    fn names_the_missing_variable() {
        let err = expand_vars("x ${NOPE} y", &env).unwrap_err();
        assert!(err.contains("`NOPE`"), "{err}");
        assert!(expand_vars("${OPEN", &env)
            .unwrap_err()
            .contains("unclosed"));
        assert!(expand_vars("${input:pat}", &env)
            .unwrap_err()
            .contains("unsupported"));
    }
}

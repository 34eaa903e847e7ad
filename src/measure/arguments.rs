//! A call's arguments against the tool it names: why a tool's input schema refuses them, and
//! which listed names are a typo away from one that is not listed. `audit` warns of a probe
//! that breaks either; the lazy proxy answers a model's call with them.

use serde_json::Value;

/// Errors reported per call at most.
const MAX_ERRORS: usize = 10;
/// Characters of one error at most (a schema error quotes the value it refused).
const MAX_ERROR_CHARS: usize = 200;

/// Why a tool with input schema `schema` would refuse `arguments`: each way they break it, as
/// `path: message` (at most 10, each cut to 200 characters); empty when they match, when the
/// tool has no schema, or when it cannot be compiled (the server judges then).
pub fn schema_errors(schema: Option<&Value>, arguments: &Value) -> Vec<String> {
    let Some(schema) = schema else {
        return Vec::new();
    };
    if !super::schema_check::well_formed(schema) {
        return Vec::new();
    }
    super::schema_check::check(schema, arguments)
        .into_iter()
        .take(MAX_ERRORS)
        .map(|e| {
            let at = match e.path.is_empty() {
                true => "(the arguments)",
                false => e.path.as_str(),
            };
            crate::ground::text::preview(&format!("{at}: {}", e.message), MAX_ERROR_CHARS)
        })
        .collect()
}

/// The names in `names` a typo away from `name` (an edit distance of at most a third of its
/// length, and at least 2), nearest first, then in their order.
pub fn near_names<'a>(name: &str, names: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let most = (name.chars().count() / 3).max(2);
    let mut near: Vec<(usize, usize, &str)> = names
        .into_iter()
        .enumerate()
        .map(|(i, n)| (edit_distance(name, n), i, n))
        .filter(|(d, _, _)| *d <= most)
        .collect();
    near.sort_unstable();
    near.into_iter().map(|(_, _, n)| n).collect()
}

/// Levenshtein distance over characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_are_checked_against_the_schema() {
        let tool = json!({"name": "get_issue", "inputSchema": {"type": "object",
            "properties": {"owner": {"type": "string"}, "number": {"type": "integer"}},
            "required": ["owner", "number"], "additionalProperties": false}});
        assert!(
            schema_errors(tool.get("inputSchema"), &json!({"owner": "o", "number": 3})).is_empty()
        );
        let errors = schema_errors(
            tool.get("inputSchema"),
            &json!({"owner": "o", "number": "3", "x": 1}),
        );
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(
            errors.iter().any(|e| e.starts_with("/number:")),
            "{errors:?}"
        );
        let missing = schema_errors(tool.get("inputSchema"), &json!({}));
        assert!(missing.iter().any(|e| e.contains("owner")), "{missing:?}");
        // a schema that cannot be compiled leaves the judging to the server
        let broken = json!({"name": "x", "inputSchema": {"type": 12}});
        assert!(schema_errors(broken.get("inputSchema"), &json!({})).is_empty());
    }

    #[test]
    fn an_error_quoting_a_huge_value_is_cut() {
        let tool = json!({"name": "t", "inputSchema": {"type": "object",
            "properties": {"q": {"type": "integer"}}}});
        let errors = schema_errors(tool.get("inputSchema"), &json!({"q": "x".repeat(10_000)}));
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].starts_with("/q: "), "{errors:?}");
        assert!(
            errors[0].chars().count() <= MAX_ERROR_CHARS + 3,
            "{}",
            errors[0].len()
        );
    }

    #[test]
    fn near_names_are_a_typo_away_nearest_first() {
        let names = ["get_file", "get_issue", "list_issues", "get_issues"];
        assert_eq!(
            near_names("get_isue", names),
            vec!["get_issue", "get_issues"]
        );
        assert!(near_names("delete_everything", names).is_empty());
        assert_eq!(edit_distance("get_isue", "get_issue"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}

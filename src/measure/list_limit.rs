//! Whether a list-shaped tool lets the model ask for less (the `list-without-limit` rule). A
//! limit counts wherever the input schema holds it: at the top, or inside a wrapper object
//! (PagerDuty's `query_model`, a pydantic model behind a `$ref`; LaunchDarkly's `request`) or an
//! array's items (a batch of searches, each with its cursor). A required query in a language that
//! states its own limit (SQL's `LIMIT`, GraphQL's `first:`, KQL's `take`, SPL's `head`) counts
//! too: the model bounds the result in the query. JQL, LogQL, Lucene and Confluence's CQL have
//! no such clause, so a tool that takes only such a query is still flagged, and says why.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value};

use crate::measure::facts::SchemaLint;

static LIST_SHAPED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(^|[_\-.])(list|search|query|find|browse|get_all|fetch_all)([_\-.]|s?$)|^list|^search")
        .expect("static regex")
});
static LIMIT_PARAM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(limit|max|max_?results|max_?items|max_?count|per_?page|page_?size|count|top|first|n|num_?results|k|top_?k|cursor|page|offset|after|page_?token|next_?token|start_?index)$")
        .expect("static regex")
});
/// A parameter named as the query a tool runs (its words, lowercase, one space apart).
static QUERY_NAMED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(^| )(q|query|sql|statement|stmt|expr|expression|filter|cypher|sparql|gremlin|graphql|promql|logql|kql|jql|cql|soql|nrql|spl|ppl|esql|jmespath|jsonpath)( |$)")
        .expect("static regex")
});

/// The query languages a description or a name can name, the more specific first, and whether
/// a query in it can bound its own result.
static LANGUAGES: LazyLock<Vec<(Regex, &'static str, bool)>> = LazyLock::new(|| {
    [
        (r"(?i)\bgraph ?ql\b", "GraphQL", true),
        (r"(?i)\b(prom ?ql|metrics ?ql)\b", "PromQL", true),
        (r"(?i)\blog ?ql\b", "LogQL", false),
        (r"(?i)\b(kql|kusto)\b", "KQL", true),
        (r"(?i)\bjql\b", "JQL", false),
        (r"(?i)\bsoql\b", "SOQL", true),
        (r"(?i)\bnrql\b", "NRQL", true),
        (r"(?i)\b(es ?\|? ?ql)\b", "ES|QL", true),
        (r"(?i)\bppl\b", "PPL", true),
        (r"(?i)\bspl\b|\bsplunk search\b", "SPL", true),
        (r"(?i)\bcypher\b", "Cypher", true),
        (r"(?i)\bsparql\b", "SPARQL", true),
        (r"(?i)\bgremlin\b", "Gremlin", true),
        (r"(?i)\bjmes ?path\b", "JMESPath", true),
        (r"(?i)\bjson ?path\b", "JSONPath", true),
        (r"(?i)\blucene\b", "Lucene", false),
        (r"(?i)\bcassandra\b", "CQL", true),
        (r"(?i)\bcql\b", "CQL", false),
        // SQL, PostgreSQL, MySQL, SQLite, T-SQL, Spark SQL; not NoSQL
        (
            r"(?i)(^|[^a-z]|postgre|my|spark|duck)(sql|sqlite)\b",
            "SQL",
            true,
        ),
    ]
    .into_iter()
    .map(|(re, name, bounds)| (Regex::new(re).expect("static regex"), name, bounds))
    .collect()
});

/// Whether a tool's name says it lists, searches or queries.
pub fn list_shaped(name: &str) -> bool {
    LIST_SHAPED.is_match(name)
}

/// Whether a parameter's name says it bounds a list: a limit, a page size or a cursor.
pub fn limit_named(param: &str) -> bool {
    LIMIT_PARAM.is_match(param)
}

/// How a list-shaped tool's input schema lets the model bound what it returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bound {
    /// A parameter named like a limit or cursor, by its path (`limit`, `query_model.limit`,
    /// `queries[].cursor`).
    Parameter(String),
    /// A required query in a language with a limit clause: the parameter and the language.
    InQuery {
        parameter: String,
        language: &'static str,
    },
    /// Neither; `query` is a required query in a language without a limit clause (JQL).
    Unbounded {
        query: Option<(String, &'static str)>,
    },
}

/// How deep the walk goes (objects inside objects, `$ref`s followed) and how many schema
/// objects it reads at most: a hostile schema of `$ref`s that fan out cannot make it long.
const MAX_DEPTH: usize = 8;
const MAX_VISITS: usize = 4_096;

struct Walk<'a> {
    root: &'a Value,
    visits: usize,
    limit: Option<String>,
    query: Option<(String, &'static str, bool)>,
}

/// What bounds a tool with this input schema.
pub fn bound(schema: &Value) -> Bound {
    let mut w = Walk {
        root: schema,
        visits: 0,
        limit: None,
        query: None,
    };
    let only_one = schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| p.len() == 1);
    w.schema(schema, "", 0, true, only_one);
    match (w.limit, w.query) {
        (Some(path), _) => Bound::Parameter(path),
        (None, Some((parameter, language, true))) => Bound::InQuery {
            parameter,
            language,
        },
        (None, query) => Bound::Unbounded {
            query: query.map(|(p, l, _)| (p, l)),
        },
    }
}

impl<'a> Walk<'a> {
    /// One schema object at `path`; `required`: every object on the way is required, so a query
    /// found here is one the call must give; `only`: the schema is the tool's one parameter.
    fn schema(&mut self, s: &'a Value, path: &str, depth: usize, required: bool, only: bool) {
        let Value::Object(m) = s else { return };
        self.visits += 1;
        if self.limit.is_some() || depth > MAX_DEPTH || self.visits > MAX_VISITS {
            return;
        }
        if let Some(target) = m.get("$ref").and_then(Value::as_str) {
            let resolved = target
                .strip_prefix('#')
                .and_then(|pointer| self.root.pointer(pointer));
            if let Some(r) = resolved {
                self.schema(r, path, depth + 1, required, only);
            }
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            for sub in m.get(key).and_then(Value::as_array).into_iter().flatten() {
                // one branch of anyOf/oneOf need not be taken: a query in it is not required
                self.schema(sub, path, depth + 1, required && key == "allOf", only);
            }
        }
        match m.get("items") {
            Some(items @ Value::Object(_)) => {
                self.schema(items, &format!("{path}[]"), depth + 1, false, false)
            }
            Some(Value::Array(list)) => list
                .iter()
                .for_each(|i| self.schema(i, &format!("{path}[]"), depth + 1, false, false)),
            _ => {}
        }
        if let Some(props) = m.get("properties").and_then(Value::as_object) {
            self.properties(m, props, path, depth, required, only);
        }
    }

    fn properties(
        &mut self,
        parent: &Map<String, Value>,
        props: &'a Map<String, Value>,
        path: &str,
        depth: usize,
        required: bool,
        only: bool,
    ) {
        let at = |name: &str| {
            if path.is_empty() {
                name.to_string()
            } else {
                format!("{path}.{name}")
            }
        };
        if let Some(name) = props.keys().find(|n| limit_named(n)) {
            self.limit = Some(at(name));
            return;
        }
        let needed: Vec<&str> = parent
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, sub) in props {
            let must = required && (needed.contains(&name.as_str()) || (only && props.len() == 1));
            if must && self.query.is_none() {
                self.query = query_language(name, sub).map(|(l, b)| (at(name), l, b));
            }
            self.schema(sub, &at(name), depth + 1, must, false);
        }
    }
}

/// The language of a query parameter: a string parameter named as a query whose name or
/// description names a query language, with whether that language can bound its result.
fn query_language(name: &str, schema: &Value) -> Option<(&'static str, bool)> {
    let words = words(name);
    if !QUERY_NAMED.is_match(&words) || !is_string(schema) {
        return None;
    }
    let description = schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("");
    [words.as_str(), description].iter().find_map(|text| {
        LANGUAGES
            .iter()
            .find(|(re, ..)| re.is_match(text))
            .map(|(_, language, bounds)| (*language, *bounds))
    })
}

/// A schema that takes a string: `type: "string"` (alone or in a list), or an `anyOf`/`oneOf`
/// branch that does (pydantic's `str | None`).
fn is_string(s: &Value) -> bool {
    match s.get("type") {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "string"),
        _ => ["anyOf", "oneOf"]
            .iter()
            .filter_map(|k| s.get(*k).and_then(Value::as_array))
            .flatten()
            .any(|b| b.get("type").and_then(Value::as_str) == Some("string")),
    }
}

/// A name's words, lowercase, one space apart: `sqlQuery` and `sql_query` are `sql query`.
fn words(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && prev_lower {
                out.push(' ');
            }
            out.extend(c.to_lowercase());
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
        } else {
            if !out.ends_with(' ') && !out.is_empty() {
                out.push(' ');
            }
            prev_lower = false;
        }
    }
    out.trim_end().to_string()
}

/// The `list-without-limit` verdict on one tool (no saving: the fix adds a parameter).
pub(super) fn list_without_limit(tool: &Map<String, Value>) -> Option<SchemaLint> {
    let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
    if !list_shaped(name) {
        return None;
    }
    let empty = Value::Object(Map::new());
    let schema = tool.get("inputSchema").unwrap_or(&empty);
    let Bound::Unbounded { query } = bound(schema) else {
        return None;
    };
    let params: Vec<&str> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let message = unbounded_message(name, &params, query.as_ref());
    Some(SchemaLint {
        rule: "list-without-limit".into(),
        saves_tokens: 0,
        saves_wire_tokens: 0,
        message,
    })
}

/// The finding's message: the tool, why it has no bound, and its parameters.
pub fn unbounded_message(name: &str, params: &[&str], query: Option<&(String, &str)>) -> String {
    let why = match query {
        Some((parameter, language)) => format!(
            "takes no limit or cursor, and its {language} query (`{parameter}`) has no limit clause"
        ),
        None => "takes no limit or cursor".to_string(),
    };
    format!(
        "`{name}` looks list-shaped but {why} (parameters: {})",
        if params.is_empty() {
            "none".to_string()
        } else {
            params.join(", ")
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_limit_counts_at_any_depth() {
        let top = json!({"properties": {"q": {"type": "string"}, "per_page": {"type": "integer"}}});
        assert_eq!(bound(&top), Bound::Parameter("per_page".into()));
        // pydantic: the model behind a $ref, optional as anyOf [model, null]
        let pydantic = json!({"$defs": {"Q": {"properties": {"since": {}, "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}}},
            "properties": {"query_model": {"anyOf": [{"$ref": "#/$defs/Q"}, {"type": "null"}]}}});
        assert_eq!(
            bound(&pydantic),
            Bound::Parameter("query_model.limit".into())
        );
        let batch = json!({"properties": {"queries": {"type": "array", "items": {"properties": {"query": {"type": "string"}, "cursor": {"type": "string"}}}}}});
        assert_eq!(bound(&batch), Bound::Parameter("queries[].cursor".into()));
        let none =
            json!({"properties": {"request": {"properties": {"projectKey": {"type": "string"}}}}});
        assert_eq!(bound(&none), Bound::Unbounded { query: None });
    }

    #[test]
    fn a_query_in_a_language_with_a_limit_clause_counts_and_one_without_does_not() {
        let sql = json!({"properties": {"query": {"type": "string", "description": "SELECT SQL query to execute"}}, "required": ["query"]});
        let want = Bound::InQuery {
            parameter: "query".into(),
            language: "SQL",
        };
        assert_eq!(bound(&sql), want);
        // the one parameter, not marked required (the Postgres reference server's `query`)
        let only = json!({"properties": {"sql": {"type": "string"}}});
        assert_eq!(
            bound(&only),
            Bound::InQuery {
                parameter: "sql".into(),
                language: "SQL"
            }
        );
        // optional, beside others: the call need not carry a query
        let optional =
            json!({"properties": {"sql": {"type": "string"}, "table": {"type": "string"}}});
        assert_eq!(bound(&optional), Bound::Unbounded { query: None });
        let jql = json!({"properties": {"jql": {"type": "string"}, "fields": {"type": "array"}}, "required": ["jql"]});
        assert_eq!(
            bound(&jql),
            Bound::Unbounded {
                query: Some(("jql".into(), "JQL"))
            }
        );
        // a natural-language query names no language; NoSQL is not SQL
        for d in [
            "The search query to match against entity names",
            "A key in the NoSQL store",
        ] {
            let s = json!({"properties": {"query": {"type": "string", "description": d}}, "required": ["query"]});
            assert_eq!(bound(&s), Bound::Unbounded { query: None }, "{d}");
        }
        assert_eq!(words("sqlQuery"), "sql query");
        assert_eq!(words("cypher_query"), "cypher query");
        assert_eq!(words("PromQL-Expr"), "prom ql expr");
    }

    #[test]
    fn a_schema_of_fanning_refs_is_read_in_bounded_time() {
        // each definition refers to the next twice: 2^40 paths if followed blindly
        let mut defs = Map::new();
        for i in 0..40 {
            defs.insert(
                format!("d{i}"),
                json!({"properties": {"a": {"$ref": format!("#/$defs/d{}", i + 1)}, "b": {"$ref": format!("#/$defs/d{}", i + 1)}}}),
            );
        }
        let s = json!({"$defs": defs, "properties": {"x": {"$ref": "#/$defs/d0"}}});
        assert_eq!(bound(&s), Bound::Unbounded { query: None });
        // a $ref to itself ends too
        let cycle = json!({"$defs": {"n": {"properties": {"next": {"$ref": "#/$defs/n"}}}}, "properties": {"head": {"$ref": "#/$defs/n"}}});
        assert_eq!(bound(&cycle), Bound::Unbounded { query: None });
    }
}

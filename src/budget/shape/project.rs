//! JMESPath projections, with the expression's key order kept in the output (the `jmespath`
//! crate returns objects with keys sorted, which changes the text and its token count), run on
//! the data without what the expression cannot read (`need.rs`).

mod fits;
mod need;

use std::sync::Arc;

use jmespath::ast::Ast;
use serde_json::{Map, Value};

use need::Need;

/// A compiled projection.
#[derive(Clone)]
pub struct Projection {
    pub expression: String,
    compiled: Arc<jmespath::Expression<'static>>,
    /// Key lists of every multiselect hash in the expression, in written order.
    key_orders: Vec<Vec<String>>,
    /// What the expression can read of its input.
    need: Need,
    /// A built-in projection's guess: every field of the shape it was written for (data with
    /// another field is not that shape).
    known: Option<&'static [&'static str]>,
}

impl std::fmt::Debug for Projection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Projection({:?})", self.expression)
    }
}

impl Projection {
    /// Compile; the error gives the column and the parser's reason on one line.
    pub fn compile(expression: &str) -> Result<Projection, String> {
        let compiled = jmespath::compile(expression).map_err(|e| {
            format!(
                "JMESPath error at column {}: {} in `{expression}`",
                e.column, e.reason
            )
        })?;
        let mut key_orders = Vec::new();
        collect_orders(compiled.as_ast(), &mut key_orders);
        let need = Need::of(compiled.as_ast(), Need::All);
        Ok(Projection {
            expression: expression.to_string(),
            compiled: Arc::new(compiled),
            key_orders,
            need,
            known: None,
        })
    }

    /// A built-in projection, used only on data of the shape whose fields are `known`.
    pub fn builtin(expression: &str, known: &'static [&'static str]) -> Result<Projection, String> {
        Ok(Projection {
            known: Some(known),
            ..Projection::compile(expression)?
        })
    }

    /// Whether the expression is a built-in guess (from the tool's name).
    pub fn is_builtin(&self) -> bool {
        self.known.is_some()
    }

    /// Why this projection does not fit the JSON `text` (a field it names is missing, or a
    /// built-in meets a field of another shape), or `None` when it fits.
    pub fn misfit(&self, text: &str) -> Option<String> {
        fits::misfit(&self.need, self.known, text)
    }

    /// Apply to `value`; `None` when it does not fit the data (null result or runtime error).
    pub fn apply(&self, value: &Value) -> Option<Value> {
        self.search(&self.need.prune(value))
    }

    /// Apply to the JSON `text`, read without what the expression cannot read.
    pub fn apply_text(&self, text: &str) -> Option<Value> {
        self.search(&self.need.read(text)?)
    }

    /// The expression's result on `value` (already pruned: the same result as on the whole).
    fn search(&self, value: &Value) -> Option<Value> {
        // parsing JSON text into the crate's values is several times faster than its generic
        // serde path from a `serde_json::Value`
        let text = serde_json::to_string(value).ok()?;
        let data = jmespath::Variable::from_json(&text).ok()?;
        let out = self.compiled.search(data).ok()?;
        let json = serde_json::to_value(&*out).ok()?;
        // a projection of data of another shape gives nulls: that is not a projection
        if !has_value(&json) {
            return None;
        }
        Some(self.reorder(json))
    }

    fn reorder(&self, v: Value) -> Value {
        match v {
            Value::Array(items) => {
                Value::Array(items.into_iter().map(|i| self.reorder(i)).collect())
            }
            Value::Object(map) => {
                let order = self
                    .key_orders
                    .iter()
                    .find(|o| o.len() == map.len() && o.iter().all(|k| map.contains_key(k)));
                let mut map = map;
                let mut out = Map::new();
                if let Some(order) = order {
                    for k in order {
                        if let Some(v) = map.remove(k) {
                            out.insert(k.clone(), self.reorder(v));
                        }
                    }
                }
                for (k, v) in map {
                    out.insert(k, self.reorder(v));
                }
                Value::Object(out)
            }
            other => other,
        }
    }
}

/// Whether any leaf of `v` is not null.
fn has_value(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Array(items) => items.iter().any(has_value),
        Value::Object(map) => map.values().any(has_value),
        _ => true,
    }
}

fn collect_orders(ast: &Ast, out: &mut Vec<Vec<String>>) {
    match ast {
        Ast::MultiHash { elements, .. } => {
            out.push(elements.iter().map(|kv| kv.key.clone()).collect());
            for kv in elements {
                collect_orders(&kv.value, out);
            }
        }
        Ast::MultiList { elements, .. } | Ast::Function { args: elements, .. } => {
            for e in elements {
                collect_orders(e, out);
            }
        }
        Ast::Subexpr { lhs, rhs, .. }
        | Ast::Projection { lhs, rhs, .. }
        | Ast::And { lhs, rhs, .. }
        | Ast::Or { lhs, rhs, .. }
        | Ast::Condition {
            predicate: lhs,
            then: rhs,
            ..
        }
        | Ast::Comparison { lhs, rhs, .. } => {
            collect_orders(lhs, out);
            collect_orders(rhs, out);
        }
        Ast::Flatten { node, .. }
        | Ast::Not { node, .. }
        | Ast::ObjectValues { node, .. }
        | Ast::Expref { ast: node, .. } => collect_orders(node, out),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_expression_key_order() {
        let p =
            Projection::compile("items[:2].{zeta: name, alpha: path, repo: repository.full_name}")
                .unwrap();
        let data = json!({"items": [{"name": "a", "path": "p", "repository": {"full_name": "o/r"}}, {"name": "b", "path": "q", "repository": {"full_name": "o/s"}}, {"name": "c"}]});
        let out = p.apply(&data).unwrap();
        assert_eq!(
            out.to_string(),
            r#"[{"zeta":"a","alpha":"p","repo":"o/r"},{"zeta":"b","alpha":"q","repo":"o/s"}]"#
        );
        assert!(p.apply(&json!({"other": 1})).is_none());
        let hash = Projection::compile("{total: total_count, items: items}").unwrap();
        assert!(
            hash.apply(&json!({"message": "Validation Failed"}))
                .is_none(),
            "all-null is no fit"
        );
    }

    /// Expressions of every kind of node, as policies write them and as they can trip a
    /// pruning: filters, functions (with expressions as arguments), wildcards, flattening,
    /// slices and negative indexes, truth tests, comparisons of whole values.
    const EXPRESSIONS: &[&str] = &[
        "a",
        "a.b",
        "a.b.c",
        "a[0]",
        "a[-1]",
        "a[1:3]",
        "a[::-1]",
        "a[*].b",
        "a[].b",
        "a[].b[]",
        "*.a",
        "a.*",
        "[a, b.c]",
        "{x: a, y: b.c}",
        "a[?b == `1`]",
        "a[?b].c",
        "a[?!b]",
        "a || b",
        "a && b",
        "!a",
        "length(a)",
        "keys(@)",
        "sort_by(a, &b)",
        "max_by(a, &b)",
        "a[].{n: b, m: c[0]}",
        "a | [0]",
        "a[*][0]",
        "a[].b | [0]",
        "to_string(a)",
        "merge(a, b)",
        "contains(a, `1`)",
        "@",
        "a.b || c.d",
        "[*].a",
        "[].a",
        "[?a].b",
        "values(@)",
        "not_null(a.b, c)",
        "a[?b > c].d",
        "a.b[0:2].c",
        "a == b",
        "{n: length(a[?b]), first: a[0].c}",
        "a[].b.c || `[]`",
        "[a][0].b",
        "a[?b == c].d",
    ];

    fn json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-3i64..4).prop_map(|n| Value::Number(n.into())),
            "[xy]{0,2}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 60, 5, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::vec(("[abcd]", inner), 0..5)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// Every expression gives on the pruned data (a value pruned, or text read pruned)
        /// what it gives on the whole data.
        #[test]
        fn pruned_data_gives_the_same_result(v in json()) {
            let text = serde_json::to_string(&v).unwrap();
            let builtins = crate::budget::policy::github::PROJECTIONS.iter().map(|(_, e)| *e);
            for expr in EXPRESSIONS.iter().copied().chain(builtins) {
                let p = Projection::compile(expr).unwrap();
                let whole = p.search(&v);
                proptest::prop_assert_eq!(&p.apply(&v), &whole, "{} on {}", expr, text);
                proptest::prop_assert_eq!(&p.apply_text(&text), &whole, "{} on {}", expr, text);
            }
        }
    }

    /// Data made for the rules a pruning could get wrong: a filter whose test is an object or
    /// array (an emptied one reads as false), arrays of arrays flattened, a wildcard over an
    /// object's values, whole values compared, counted or output.
    #[test]
    fn tricky_data_gives_the_same_result() {
        let data = [
            json!({"a": [{"b": {"x": 1}, "c": 1}, {"b": {}, "c": 2}, {"b": [0], "c": 3}]}),
            json!({"a": [[{"b": 1, "c": 9}], {"b": 2}, [[{"b": 3}]]], "b": {"c": [1, 2]}}),
            json!({"a": {"b": {"c": 1, "d": 2}}, "b": {"c": 1, "d": 2}, "c": {"d": [1]}}),
            json!([{"a": {"q": 1}, "b": 1}, {"a": {}, "b": 2}, {"a": [], "b": 3}]),
        ];
        for v in &data {
            let text = v.to_string();
            for expr in EXPRESSIONS {
                let p = Projection::compile(expr).unwrap();
                let whole = p.search(v);
                assert_eq!(p.apply(v), whole, "{expr} on {text}");
                assert_eq!(p.apply_text(&text), whole, "{expr} on {text}");
            }
        }
    }

    #[test]
    fn a_projection_reads_only_what_it_names() {
        let p = Projection::compile(crate::budget::policy::github::PROJECTIONS[0].1).unwrap();
        let item = json!({"name": "n", "path": "p", "sha": "s", "html_url": "h", "url": "u",
            "repository": {"full_name": "o/r", "owner": {"login": "o", "avatar_url": "x"}}});
        let data = json!({"total_count": 1, "incomplete_results": false, "items": [item]});
        let pruned = p.need.prune(&data);
        assert_eq!(
            pruned,
            json!({"total_count": 1, "incomplete_results": false, "items": [{"name": "n",
                "path": "p", "sha": "s", "html_url": "h", "repository": {"full_name": "o/r"}}]})
        );
        assert_eq!(p.apply(&data), p.search(&data));
    }

    #[test]
    fn syntax_errors_name_the_column() {
        let e = Projection::compile("items[:5].{name: name").unwrap_err();
        assert!(e.contains("column") && !e.contains('\n'), "{e}");
    }
}

//! JMESPath projections, with the expression's key order kept in the output (the `jmespath`
//! crate returns objects with keys sorted, which changes the text and its token count).

use std::sync::Arc;

use jmespath::ast::Ast;
use serde_json::{Map, Value};

/// A compiled projection.
#[derive(Clone)]
pub struct Projection {
    pub expression: String,
    compiled: Arc<jmespath::Expression<'static>>,
    /// Key lists of every multiselect hash in the expression, in written order.
    key_orders: Vec<Vec<String>>,
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
        Ok(Projection {
            expression: expression.to_string(),
            compiled: Arc::new(compiled),
            key_orders,
        })
    }

    /// Apply to `value`; `None` when it does not fit the data (null result or runtime error).
    pub fn apply(&self, value: &Value) -> Option<Value> {
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

    #[test]
    fn syntax_errors_name_the_column() {
        let e = Projection::compile("items[:5].{name: name").unwrap_err();
        assert!(e.contains("column") && !e.contains('\n'), "{e}");
    }
}

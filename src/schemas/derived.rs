//! The schemas derived from the types (schemars, a dev-dependency), held equal to the committed
//! copies the binary prints.

use schemars::generate::SchemaSettings;
use serde_json::Value;

use super::Document;

impl Document {
    /// What the document is, for the schema's description.
    fn description(self) -> &'static str {
        match self {
            Document::Audit => {
                "audit.json: what `mcp-budget audit` measured (schema tax per server and tool, \
                 probe results raw and budgeted, per-client rows, findings). Fields are added, \
                 never renamed; a change of meaning bumps schema_version."
            }
            Document::Gate => {
                "gate.json: the gate's verdict on a report (thresholds broken, changes against \
                 the baseline)."
            }
            Document::CallLog => {
                "One line of the call log `mcp-budget proxy --log FILE` appends: a JSON object \
                 per proxied tool call."
            }
            #[cfg(feature = "lab")]
            Document::Lab => {
                "The lab's report (`mcp-budget lab --format json`): what each real client sent \
                 its model."
            }
        }
    }

    /// The schema (JSON Schema 2020-12).
    fn schema(self) -> Value {
        let generator = SchemaSettings::draft2020_12().into_generator();
        let schema = match self {
            Document::Audit => generator.into_root_schema_for::<crate::measure::facts::Report>(),
            Document::Gate => generator.into_root_schema_for::<crate::judge::gate::Verdict>(),
            Document::CallLog => {
                generator.into_root_schema_for::<crate::ground::calllog::CallRecord>()
            }
            #[cfg(feature = "lab")]
            Document::Lab => generator.into_root_schema_for::<crate::lab::LabReport>(),
        };
        // the header first: what the file is, then its body as schemars wrote it
        let mut out = serde_json::Map::new();
        let Value::Object(body) = schema.to_value() else {
            unreachable!("a root schema is an object")
        };
        for key in ["$schema", "$id", "title"] {
            out.insert(key.into(), Value::Null);
        }
        out.insert(
            "description".into(),
            Value::String(self.description().into()),
        );
        out["$id"] = Value::String(format!("mcp-budget/{}.schema.json", self.name()));
        for (k, v) in body {
            if k != "description" {
                out.insert(k, v);
            }
        }
        Value::Object(out)
    }

    /// The schema as it is committed: pretty JSON and a newline.
    fn derived(self) -> String {
        let mut text =
            serde_json::to_string_pretty(&self.schema()).expect("a schema always serialises");
        text.push('\n');
        text
    }
}

/// Every committed schema is the one its types give; with `MCP_BUDGET_WRITE_SCHEMAS=1`, the
/// derived ones are written over the committed copies first.
#[test]
fn the_committed_schemas_are_the_derived_ones() {
    let write = std::env::var_os("MCP_BUDGET_WRITE_SCHEMAS").is_some();
    for &d in Document::ALL {
        let derived = d.derived();
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("docs/schemas/{}.schema.json", d.name()));
        if write {
            std::fs::write(&path, &derived).expect("docs/schemas/ is writable");
        }
        let committed = std::fs::read_to_string(&path).expect("a committed schema");
        assert!(
            committed == derived,
            "{} is stale: MCP_BUDGET_WRITE_SCHEMAS=1 cargo test --lib schemas",
            path.display()
        );
        // the binary prints what it was built with: the same text unless a schema was just
        // written, which the next build picks up
        if !write {
            assert_eq!(d.rendered(), derived);
        }
    }
}

/// The derived schema of the audit report reads as it is documented: its title, and a
/// defaulted field not required.
#[test]
fn the_derived_audit_schema_is_draft_2020_12() {
    let s = Document::Audit.schema();
    assert_eq!(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert_eq!(s["$id"], "mcp-budget/audit.schema.json");
    assert!(s["description"]
        .as_str()
        .unwrap()
        .starts_with("audit.json: "));
}

//! The JSON Schemas of what mcp-budget writes for other programs to read: `audit.json`,
//! `gate.json`, a call log line and the lab's report. Each is derived (schemars) from the very
//! types that serialise the document, so a field added to a type is in its schema at once;
//! `docs/schemas/` holds the committed copies, and a test holds them equal to these.

use schemars::generate::SchemaSettings;
use serde_json::Value;

/// A document with a schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Document {
    /// `audit.json`: `audit`'s report (and `audit --format json`).
    Audit,
    /// `gate.json`: the gate's verdict (and `gate --format json`).
    Gate,
    /// One line of the proxy's call log (`--log`), a JSON object per line.
    CallLog,
    /// The lab's report (`lab --format json`, `lab.json`).
    #[cfg(feature = "lab")]
    Lab,
}

impl Document {
    /// Every document, in the order `mcp-budget schema --help` lists them.
    #[cfg(feature = "lab")]
    pub const ALL: &[Document] = &[
        Document::Audit,
        Document::Gate,
        Document::CallLog,
        Document::Lab,
    ];
    /// Every document (built without the lab: not its report).
    #[cfg(not(feature = "lab"))]
    pub const ALL: &[Document] = &[Document::Audit, Document::Gate, Document::CallLog];

    /// The name `mcp-budget schema NAME` takes, and the file's stem under `docs/schemas/`.
    pub fn name(self) -> &'static str {
        match self {
            Document::Audit => "audit",
            Document::Gate => "gate",
            Document::CallLog => "call-log",
            #[cfg(feature = "lab")]
            Document::Lab => "lab",
        }
    }

    /// The document for a name, if it is one.
    pub fn from_name(name: &str) -> Option<Document> {
        Document::ALL.iter().copied().find(|d| d.name() == name)
    }

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
    pub fn schema(self) -> Value {
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

    /// The schema as `mcp-budget schema NAME` prints it: pretty JSON and a newline.
    pub fn rendered(self) -> String {
        let mut text =
            serde_json::to_string_pretty(&self.schema()).expect("a schema always serialises");
        text.push('\n');
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_and_no_other() {
        for &d in Document::ALL {
            assert_eq!(Document::from_name(d.name()), Some(d));
        }
        assert_eq!(Document::from_name("audit.json"), None);
    }

    #[test]
    fn the_audit_schema_names_the_report_fields_and_requires_the_version() {
        let s = Document::Audit.schema();
        assert_eq!(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
        assert_eq!(s["title"], "Report");
        let required: Vec<&str> = s["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert!(required.contains(&"schema_version"), "{required:?}");
        assert!(required.contains(&"servers"), "{required:?}");
        // `#[serde(default)]` fields may be absent from older reports.
        assert!(!required.contains(&"config_errors"), "{required:?}");
        assert!(s["properties"]["servers"]["items"]["$ref"]
            .as_str()
            .unwrap()
            .starts_with("#/$defs/"));
    }
}

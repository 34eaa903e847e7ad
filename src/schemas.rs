//! The JSON Schemas of what mcp-budget writes for other programs to read: `audit.json`,
//! `gate.json`, a call log line and the lab's report. Each is derived (schemars, in the tests)
//! from the very types that serialise the document; `docs/schemas/` holds the derived text, the
//! binary prints it as built in, and a test fails when a type and its committed schema differ
//! (`MCP_BUDGET_WRITE_SCHEMAS=1 cargo test --lib schemas` writes them again). Deriving them at
//! run time built schemars and a schema function for every type into the binary: 0.4 MB.

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

    /// The schema (JSON Schema 2020-12) as `mcp-budget schema NAME` prints it: the committed
    /// copy, pretty JSON and a newline.
    pub fn rendered(self) -> &'static str {
        match self {
            Document::Audit => include_str!("../docs/schemas/audit.schema.json"),
            Document::Gate => include_str!("../docs/schemas/gate.schema.json"),
            Document::CallLog => include_str!("../docs/schemas/call-log.schema.json"),
            #[cfg(feature = "lab")]
            Document::Lab => include_str!("../docs/schemas/lab.schema.json"),
        }
    }
}

#[cfg(test)]
mod derived;
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
        let s: serde_json::Value = serde_json::from_str(Document::Audit.rendered()).unwrap();
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

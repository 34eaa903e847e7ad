//! Issue 39, part 4: each client's rows are also counted in its model's tokenizer
//! (`[client.model]`): Codex's in o200k_base, Claude Code's in the Claude estimate, and a client
//! whose model's tokenizer is not built in (Gemini CLI) in the report's own, said. A count in
//! the model's tokenizer is what an audit with that tokenizer as its primary one counts.

use serde_json::Value;

use crate::support::audit_probe;

/// The demo audited with `--tokenizer T`, two probes that no client cuts; the server's report.
fn audit(dir: &std::path::Path, tokenizer: &str) -> Value {
    let probes = "[servers.demo]\nbuiltin = \"demo\"\n\n[[servers.demo.probes]]\ntool = \"get_forecast\"\narguments = { city = \"Lisbon\" }\n\n[[servers.demo.probes]]\ntool = \"list_pull_requests\"\narguments = { owner = \"acme\", repo = \"widgets\", per_page = 2 }\n";
    let args = [
        "--client",
        "codex,claude-code,gemini-cli",
        "--tokenizer",
        tokenizer,
    ];
    let (report, _) = audit_probe(dir, probes, &args, &[], 0);
    report["servers"][0].clone()
}

fn row<'a>(rows: &'a Value, id: &str) -> &'a Value {
    rows.as_array()
        .unwrap()
        .iter()
        .find(|c| c["client"] == id)
        .unwrap()
}

#[test]
fn each_clients_rows_are_counted_in_its_models_tokenizer_as_that_tokenizers_audit_counts() {
    let dir = tempfile::tempdir().unwrap();
    let cl100k = audit(dir.path(), "cl100k_base");
    let o200k = audit(dir.path(), "o200k_base");
    let claude = audit(dir.path(), "claude-estimate");
    // the schema tax per turn: Codex sends every definition
    let codex = row(&cl100k["clients"], "codex");
    assert_eq!(codex["model_tokenizer"], "o200k_base", "{codex:#}");
    assert_eq!(
        codex["model_tokens_per_turn"],
        row(&o200k["clients"], "codex")["schema_tokens_per_turn"]
    );
    assert_ne!(
        codex["model_tokens_per_turn"], codex["schema_tokens_per_turn"],
        "o200k_base and cl100k_base count these definitions differently"
    );
    // Claude Code defers: its names, in the Claude estimate
    let cc = row(&cl100k["clients"], "claude-code");
    assert_eq!(cc["model_tokenizer"], "claude-estimate", "{cc:#}");
    assert_eq!(
        cc["model_tokens_per_turn"],
        row(&claude["clients"], "claude-code")["schema_tokens_per_turn"]
    );
    // Gemini's tokenizer is not built in: its rows stay in the report's tokenizer, unlabelled
    let gemini = row(&cl100k["clients"], "gemini-cli");
    assert!(gemini.get("model_tokenizer").is_none(), "{gemini:#}");
    // every probe's result rows likewise
    for (i, p) in cl100k["probes"].as_array().unwrap().iter().enumerate() {
        let codex = row(&p["clients"], "codex");
        assert_eq!(codex["model_tokenizer"], "o200k_base");
        let seen = row(&o200k["probes"][i]["clients"], "codex");
        assert_eq!(
            codex["raw"]["model_tokens"], seen["raw"]["tokens_to_model"],
            "{}",
            p["tool"]
        );
        let cc = row(&p["clients"], "claude-code");
        let seen = row(&claude["probes"][i]["clients"], "claude-code");
        assert_eq!(cc["raw"]["model_tokens"], seen["raw"]["tokens_to_model"]);
        assert!(row(&p["clients"], "gemini-cli")["raw"]
            .get("model_tokens")
            .is_none());
    }
}

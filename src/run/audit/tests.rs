use std::collections::{BTreeMap, HashMap};

use tokio::task::JoinSet;

use super::*;
use crate::config::{Origin, TransportSpec};
use crate::measure::facts::Status;

fn spec(name: &str) -> ServerSpec {
    ServerSpec {
        name: name.into(),
        origin: Origin {
            file: "p.toml".into(),
            key: format!("servers.{name}"),
            client: "probe-file".into(),
        },
        transport: TransportSpec::Stdio {
            command: "srv".into(),
            args: vec![],
            env: BTreeMap::from([("API_KEY".into(), "sk-live-4242".into())]),
            cwd: None,
        },
        probes: vec![],
        timeout_secs: None,
        trust: Default::default(),
    }
}

/// A server whose audit task panics is an error row that names it (and no secret); the other
/// server's row is there as it was.
#[tokio::test]
async fn a_panicking_audit_is_an_error_row_not_a_missing_one() {
    let mut set = JoinSet::new();
    let mut tasks = HashMap::new();
    let (good, bad) = (spec("good"), spec("bad"));
    let row = ServerReport::new("good", "stdio", "srv", "p.toml");
    let t = set.spawn(async move { (0, row) });
    tasks.insert(t.id(), (0, good));
    let t = set.spawn(async move {
        if tasks_panic() {
            panic!("index out of bounds near sk-live-4242");
        }
        (1, server::crashed(&spec("never"), ""))
    });
    tasks.insert(t.id(), (1, bad));
    let mut rows = rows_of(set, tasks, &NoProgress).await;
    rows.sort_by_key(|(i, _)| *i);
    assert_eq!(rows.len(), 2);
    assert_eq!(
        rows[0].1,
        ServerReport::new("good", "stdio", "srv", "p.toml")
    );
    let (index, bad) = &rows[1];
    assert_eq!((*index, bad.name.as_str()), (1, "bad"));
    assert_eq!(bad.status, Status::Error);
    let error = bad.error.as_deref().unwrap();
    assert!(
        error.contains("a bug in mcp-budget") && error.contains("index out of bounds"),
        "{error}"
    );
    assert!(!error.contains("sk-live-4242"), "{error}");
}

/// Always true; a function, so the panic above is not dead code to the compiler.
fn tasks_panic() -> bool {
    std::hint::black_box(true)
}

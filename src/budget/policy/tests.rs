use super::*;

fn policy(text: &str) -> Result<Policy, PolicyError> {
    let v: toml::Value = toml::from_str(text).unwrap();
    let mut p = Policy::builtin();
    p.extend_from_toml(&v["policy"])?;
    Ok(p)
}

#[test]
fn globs_override_in_order_and_builtins_apply() {
    let p = policy(
        r#"
[policy]
budget = 6000
[policy.tools."browser_*"]
budget = 3000
strip = { blank_lines = false }
[policy.tools.browser_snapshot]
max_array_items = 5
"#,
    )
    .unwrap();
    assert_eq!(p.for_tool("fetch").budget, 6000);
    let snap = p.for_tool("browser_snapshot");
    assert_eq!(
        (snap.budget, snap.max_array_items, snap.strip.blank_lines),
        (3000, Some(5), false)
    );
    assert!(
        p.for_tool("search_code").project.is_some(),
        "built-in GitHub projection"
    );
}

#[test]
fn errors_name_the_tool_and_the_problem() {
    let e =
        policy("[policy.tools.search_code]\nproject = \"items[:5].{name: name\"\n").unwrap_err();
    assert_eq!(e.tool, "search_code");
    assert!(e.message.contains("column"), "{}", e.message);
    let e = policy("[policy.tools.x]\nbudget = 10\n").unwrap_err();
    assert!(e.to_string().contains("below the minimum"), "{e}");
    let e = policy("[policy.tools.x]\nbudgett = 10\n").unwrap_err();
    assert!(e.message.contains("budgett"), "{e}");
    let e = policy("[policy.tools.y]\nmax_depth = 0\n").unwrap_err();
    assert_eq!(e.tool, "y");
    let e = policy("[policy.tools.z]\nbudget_bytes = 999\n").unwrap_err();
    assert_eq!(e.tool, "z");
    assert!(
        e.message
            .contains("`budget_bytes` 999 is below the minimum of 1000"),
        "{e}"
    );
    let e = policy("[policy]\nbudget_lines = 19\n").unwrap_err();
    assert!(e.message.contains("budget_lines"), "{e}");
}

#[test]
fn hidden_parameters_and_fixed_arguments_are_read_per_tool() {
    let p = policy(
        "[policy]\nfixed_arguments = { region = \"eu\" }\n[policy.tools.\"az_*\"]\nhide_params = [\"tenant\", \"retry-*\"]\nfixed_arguments = { tenant = \"acme\", retries = 3 }\n",
    )
    .unwrap();
    let az = p.for_tool("az_list");
    assert_eq!(az.hide_params, ["tenant", "retry-*"]);
    assert_eq!(
        serde_json::Value::Object(az.fixed_arguments),
        serde_json::json!({"region": "eu", "tenant": "acme", "retries": 3})
    );
    let other = p.for_tool("other");
    assert!(other.hide_params.is_empty());
    assert_eq!(other.fixed_arguments.len(), 1);
    // the call path's question: the tool's arguments, or none without building its policy
    assert_eq!(p.fixed_arguments("az_list").map(|m| m.len()), Some(3));
    assert_eq!(Policy::builtin().fixed_arguments("az_list"), None);
    let e = policy("[policy.tools.q]\nhide_params = [\"[\"]\n").unwrap_err();
    assert_eq!(e.tool, "q");
    assert!(e.message.contains("is not a glob"), "{e}");
}

#[test]
fn size_bounds_and_a_clients_limits_only_tighten() {
    let mut p = policy(
        "[policy]\nbudget_bytes = 20000\n[policy.tools.fetch]\nbudget_lines = 100\nnote_first = true\n",
    )
    .unwrap();
    let fetch = p.for_tool("fetch");
    assert_eq!(
        (fetch.size.bytes, fetch.size.lines, fetch.note_first),
        (Some(20_000), Some(100), true)
    );
    // a client's 10,000 bytes and 256 lines: the tighter of each wins, per unit
    p.tighten_to(
        Some(25_000),
        SizeLimits {
            bytes: Some(10_000),
            chars: None,
            lines: Some(256),
        },
    );
    let fetch = p.for_tool("fetch");
    assert_eq!(
        fetch.budget, 8000,
        "the policy's 8,000 is below the client's 25,000"
    );
    assert_eq!(
        (fetch.size.bytes, fetch.size.lines),
        (Some(10_000), Some(100))
    );
    // bounds below the minimums are raised to them: a note must still fit
    p.tighten_to(
        Some(10),
        SizeLimits {
            bytes: Some(5),
            chars: None,
            lines: Some(1),
        },
    );
    let other = p.for_tool("other");
    assert_eq!(other.budget, MIN_BUDGET);
    assert_eq!(
        (other.size.bytes, other.size.lines),
        (Some(MIN_SIZE_CHARS), Some(MIN_SIZE_LINES))
    );
    assert!(!other.note_first);
}

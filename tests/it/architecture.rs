//! The house rules of docs/architecture.md, checked on the source: imports run one way between
//! the library's parts, its top-level modules (no cycle, no arrow up a layer), commands import
//! no other command, one module convention (`x.rs` beside `x/`, no `mod.rs`), and no source
//! file is over 500 lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::support::repo;

/// The library's parts, in layers, lowest first. A part may import its own layer's parts (as
/// long as no cycle forms) and any layer below, never one above.
const LAYERS: &[&[&str]] = &[
    &["ground"],
    &["config"],
    &["measure"],
    &["budget"],
    &["wire"],
    &["judge"],
    &["output"],
    &["run", "lab"],
    &["schemas"],
];

/// Arrows the layers allow but the design does not: measuring needs no engine. (`measure` and
/// `budget` importing `output` is an arrow up the layers, so the first test refuses it.)
const FORBIDDEN: &[(&str, &str)] = &[("measure", "budget")];

#[test]
fn library_modules_import_down_the_layers_only() {
    let graph = module_graph();
    assert!(!graph.is_empty(), "no module found under src/");
    let layer = |m: &str| {
        LAYERS
            .iter()
            .position(|l| l.contains(&m))
            .unwrap_or_else(|| panic!("module `{m}` is in no layer of tests/it/architecture.rs and docs/architecture.md"))
    };
    let mut up = Vec::new();
    for (from, tos) in &graph {
        for to in tos {
            if layer(to) > layer(from) {
                up.push(format!("{from} -> {to}"));
            }
        }
    }
    assert!(up.is_empty(), "imports that run up a layer: {up:?}");
    let forbidden: Vec<_> = FORBIDDEN
        .iter()
        .filter(|(from, to)| graph.get(*from).is_some_and(|t| t.contains(*to)))
        .collect();
    assert!(forbidden.is_empty(), "forbidden imports: {forbidden:?}");
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import cycle between modules: {}", cycle.join(" -> "));
    }
}

#[test]
fn commands_import_no_other_command() {
    let dir = repo().join("src/app/commands");
    let commands: BTreeSet<String> = rust_files(&dir)
        .iter()
        .filter_map(|p| p.file_stem()?.to_str().map(String::from))
        .filter(|s| s != "mod")
        .collect();
    assert!(commands.contains("audit"), "{commands:?}");
    let mut found = Vec::new();
    for file in rust_files(&dir) {
        let code = code_of(&std::fs::read_to_string(&file).unwrap());
        let mut seen = BTreeSet::new();
        imports_in(&code, "super::", &mut seen);
        imports_in(&code, "commands::", &mut seen);
        let me = file.file_stem().unwrap().to_str().unwrap();
        for c in seen
            .iter()
            .filter(|c| commands.contains(*c) && c.as_str() != me)
        {
            found.push(format!("{} uses {c}", file.display()));
        }
    }
    assert!(found.is_empty(), "{found:?}");
}

/// Issue 42: one module convention, `x.rs` beside its folder `x/`: no `mod.rs` anywhere.
#[test]
fn every_module_with_children_is_a_file_beside_its_folder() {
    let files = rust_files(&repo().join("src"));
    assert!(files.len() > 100, "{}", files.len());
    let mod_rs: Vec<_> = files
        .iter()
        .filter(|f| f.file_name().is_some_and(|n| n == "mod.rs"))
        .collect();
    assert!(mod_rs.is_empty(), "mod.rs files: {mod_rs:?}");
    // and every folder of modules has its file
    for f in &files {
        let dir = f.parent().unwrap();
        if dir != repo().join("src") {
            let file = dir.with_extension("rs");
            assert!(
                file.is_file(),
                "{} has no {}",
                dir.display(),
                file.display()
            );
        }
    }
}

#[test]
fn no_source_file_is_over_500_lines() {
    let mut long = Vec::new();
    for file in rust_files(&repo().join("src")) {
        let rel = file.strip_prefix(repo()).unwrap().display().to_string();
        let lines = std::fs::read_to_string(&file).unwrap().lines().count();
        if lines > 500 {
            long.push(format!("{rel}: {lines}"));
        }
    }
    assert!(long.is_empty(), "files over 500 lines: {long:?}");
}

/// What the repository's root may hold (docs/architecture.md, "The repository's root"): a file
/// that is not named here is a stray, such as the output of a manual run.
const ROOT_LAYOUT: &[&str] = &[
    ".ci",
    ".github",
    ".gitignore",
    "CHANGELOG.md",
    "Cargo.lock",
    "Cargo.toml",
    "README.md",
    "action.yml",
    "benches",
    "build.rs",
    "docs",
    "fuzz",
    "packaging",
    "probes",
    "proptest-regressions",
    "pyproject.toml",
    "reports",
    "scripts",
    "src",
    "tests",
];

/// Issue 26, item 18: the root holds only what the layout names. Git decides what is in the
/// repository: its tracked files and the untracked ones it does not ignore (so `target/`,
/// `reports/latest/` and the other ignored outputs never count, and a stray is caught before it
/// is committed).
#[test]
fn the_root_holds_only_what_the_layout_names() {
    let out = std::process::Command::new("git")
        .args([
            "ls-files",
            "--cached",
            "--others",
            "--exclude-standard",
            "-z",
        ])
        .current_dir(repo())
        .output();
    let listing = match out {
        Ok(o) if o.status.success() => o.stdout,
        _ => {
            crate::support::skip(&format!(
                "{} is not a git checkout (or git is missing)",
                repo().display()
            ));
            return;
        }
    };
    let roots: BTreeSet<String> = listing
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| {
            let p = String::from_utf8_lossy(p);
            p.split('/').next().unwrap_or_default().to_string()
        })
        .collect();
    assert!(roots.contains("src"), "git listed no src/: {roots:?}");
    let strays: Vec<&String> = roots
        .iter()
        .filter(|r| !ROOT_LAYOUT.contains(&r.as_str()))
        .collect();
    assert!(
        strays.is_empty(),
        "files at the repository's root that the layout does not name (remove them, or add \
         them to ROOT_LAYOUT and docs/architecture.md): {strays:?}"
    );
}

/// Issue 37: `.ci/run` left the tree dirty, two Python bytecode files of the fixtures being
/// tracked. No `__pycache__/` is tracked, and git ignores one wherever Python writes it.
#[test]
fn python_bytecode_is_neither_tracked_nor_left_unignored() {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(repo())
            .output()
            .ok()
            .filter(|o| o.status.success())
    };
    let Some(listing) = git(&["ls-files", "--cached", "--others", "--exclude-standard"]) else {
        crate::support::skip(&format!(
            "{} is not a git checkout (or git is missing)",
            repo().display()
        ));
        return;
    };
    let listing = String::from_utf8_lossy(&listing.stdout).to_string();
    let bytecode: Vec<&str> = listing
        .lines()
        .filter(|p| p.contains("__pycache__/") || p.ends_with(".pyc"))
        .collect();
    assert!(
        bytecode.is_empty(),
        "Python bytecode in the tree: {bytecode:?}"
    );
    for path in [
        "tests/fixtures/__pycache__/x.cpython-311.pyc",
        "scripts/__pycache__/y.pyc",
    ] {
        assert!(
            git(&["check-ignore", "--no-index", "-q", path]).is_some(),
            "{path} is not ignored"
        );
    }
}

#[test]
fn the_import_reader_sees_through_strings_comments_and_groups() {
    let code = code_of(
        "use crate::{a, b::c};\n// use crate::d;\nlet s = \"crate::e\";\nlet r = r#\"crate::f\"#;\nlet q = '\"'; crate::g::h();\n/* crate::i */ fn x<'a>(v: &'a str) {}",
    );
    let mut seen = BTreeSet::new();
    imports_in(&code, "crate::", &mut seen);
    let seen: Vec<&str> = seen.iter().map(String::as_str).collect();
    assert_eq!(seen, ["a", "b", "g"]);
    // `super::` counted exactly: two reach `up2`, three only `up3`
    let code = code_of(
        "use super::super::up2::x;\nuse super::super::super::up3;\nuse super::{near, far};",
    );
    let (mut two, mut one) = (BTreeSet::new(), BTreeSet::new());
    imports_in(&code, "super::super::", &mut two);
    imports_in(&code, "super::", &mut one);
    assert_eq!(two.into_iter().collect::<Vec<_>>(), ["up2"]);
    assert_eq!(one.into_iter().collect::<Vec<_>>(), ["far", "near"]);
    assert_eq!(
        module_depth(Path::new("src"), Path::new("src/a/b/mod.rs")),
        2
    );
    assert_eq!(module_depth(Path::new("src"), Path::new("src/a/b.rs")), 2);
}

/// Part (top-level library module) -> the parts it names through `crate::`.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = repo().join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let modules: BTreeSet<String> = code_of(&lib)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';').trim().to_string())
        .collect();
    let mut graph = BTreeMap::new();
    for m in &modules {
        let mut files = rust_files(&src.join(m));
        files.push(src.join(format!("{m}.rs")));
        let mut seen = BTreeSet::new();
        for file in files.iter().filter(|f| f.is_file()) {
            let code = code_of(&std::fs::read_to_string(file).unwrap());
            imports_in(&code, "crate::", &mut seen);
            // `super::` as many times as the file is deep reaches the crate root
            let depth = module_depth(&src, file);
            imports_in(&code, &"super::".repeat(depth), &mut seen);
        }
        seen.retain(|s| s != m && modules.contains(s));
        graph.insert(m.clone(), seen);
    }
    graph
}

/// How many modules deep a file under `src/` is: `src/m.rs` and `src/m/mod.rs` are 1,
/// `src/m/x.rs` 2.
fn module_depth(src: &Path, file: &Path) -> usize {
    let parts = file.strip_prefix(src).unwrap().components().count();
    if file.file_name().is_some_and(|n| n == "mod.rs") {
        parts - 1
    } else {
        parts
    }
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// The names right after each `prefix` (`crate::a::b` and each item of `crate::{a, b}` for
/// `crate::`); a prefix that continues a longer path (`x::crate::`, `super::super::` for
/// `super::`) does not count.
fn imports_in(code: &str, prefix: &str, seen: &mut BTreeSet<String>) {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut at = 0;
    while let Some(i) = code[at..].find(prefix) {
        let before = code[..at + i].chars().next_back();
        at += i + prefix.len();
        let rest = &code[at..];
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
            continue; // part of a longer path
        }
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut item_start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => item_start = true,
                    c if c.is_whitespace() => {}
                    _ if item_start && depth == 1 => {
                        let name = ident(&group[j..]);
                        if !name.is_empty() && name != "self" {
                            seen.insert(name);
                        }
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            let name = ident(rest);
            // `super::super::x` read with the prefix `super::` goes on up: not a name
            if !name.is_empty() && name != "super" {
                seen.insert(name);
            }
        }
    }
}

/// The code of a Rust file with comments, string literals and char literals blanked out.
fn code_of(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == '*' && b[i + 1] == '/') {
                i += 1;
            }
            i += 2;
            out.push(' ');
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !prev_ident(&b, i) {
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                i += if b[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' && (next == Some('\\') || b.get(i + 2) == Some(&'\'')) {
            // a char literal ('x', '\n', '\''); a lifetime ('a) is left alone
            i += 1;
            while i < b.len() && b[i] != '\'' {
                i += if b[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn prev_ident(b: &[char], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == '_')
}

/// A cycle in the graph, as the names along it, if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(n) {
            Some(2) => return None,
            Some(1) => {
                let start = path.iter().position(|p| p == n).unwrap();
                let mut cycle = path[start..].to_vec();
                cycle.push(n.to_string());
                return Some(cycle);
            }
            _ => {}
        }
        state.insert(n.to_string(), 1);
        path.push(n.to_string());
        for to in graph.get(n).into_iter().flatten() {
            if let Some(c) = visit(to, graph, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in graph.keys() {
        if let Some(c) = visit(n, graph, &mut state, &mut Vec::new()) {
            return Some(c);
        }
    }
    None
}

/// src/lib.rs's doc names every module it declares, each in the layer the table puts it in
/// (the doc's numbered list is the table, lowest first), and declares every module the table
/// names.
#[test]
fn the_library_doc_lists_every_module_in_its_layer() {
    let lib = std::fs::read_to_string(repo().join("src/lib.rs")).unwrap();
    let declared: BTreeSet<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod "))
        .map(|l| l.trim_end_matches(';'))
        .collect();
    let tabled: BTreeSet<&str> = LAYERS.iter().flat_map(|l| l.iter().copied()).collect();
    assert_eq!(declared, tabled, "lib.rs's modules against the layer table");
    // the doc's numbered items, in order: item N names exactly the modules of layer N
    let doc: Vec<&str> = lib.lines().map_while(|l| l.strip_prefix("//!")).collect();
    let mut items: Vec<String> = Vec::new();
    for line in &doc {
        let line = line.trim_start();
        match line.split_once(". ") {
            Some((n, rest)) if n.parse::<usize>().is_ok() => items.push(rest.to_string()),
            _ if !line.is_empty() && !items.is_empty() => {
                let last = items.last_mut().unwrap();
                last.push(' ');
                last.push_str(line);
            }
            _ => {}
        }
    }
    assert_eq!(items.len(), LAYERS.len(), "{items:#?}");
    for (item, layer) in items.iter().zip(LAYERS) {
        let named: BTreeSet<&str> = item
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|n| tabled.contains(n))
            .collect();
        let want: BTreeSet<&str> = layer.iter().copied().collect();
        assert_eq!(named, want, "{item}");
    }
}

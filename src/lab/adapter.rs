//! A client adapter: how to run one coding client headless against the lab's model, as data
//! (a TOML file per client in `src/lab/clients/`, or one given with `--adapter FILE`). Rendering
//! fills its templates for one run and refuses any URL that is not on 127.0.0.1.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::model::Api;
use super::LabError;

/// The adapters built in: one file per client.
const BUILT_IN: [(&str, &str); 9] = [
    ("claude-code.toml", include_str!("clients/claude-code.toml")),
    ("codex.toml", include_str!("clients/codex.toml")),
    ("gemini-cli.toml", include_str!("clients/gemini-cli.toml")),
    ("opencode.toml", include_str!("clients/opencode.toml")),
    ("copilot-cli.toml", include_str!("clients/copilot-cli.toml")),
    ("qwen-code.toml", include_str!("clients/qwen-code.toml")),
    ("cline.toml", include_str!("clients/cline.toml")),
    ("kilo.toml", include_str!("clients/kilo.toml")),
    (
        "continue-cli.toml",
        include_str!("clients/continue-cli.toml"),
    ),
];

/// How to run one client.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Adapter {
    /// The client's id (also its profile's id in `clients.toml`).
    pub id: String,
    pub name: String,
    /// The npm package it comes in (what the README's install step installs).
    pub package: String,
    /// The wire API it speaks to its model.
    pub api: Api,
    /// The model name it is told (several clients key their handling to it).
    #[serde(default = "default_model")]
    pub model: String,
    /// How the client names an MCP tool for its model (`{server}`, `{tool}`).
    pub tool_name: String,
    /// The discovery step the scripted model drives, in words.
    pub discovery: String,
    /// The executable's names, looked up on PATH and in `node_modules/.bin` folders.
    pub binaries: Vec<String>,
    pub version_args: Vec<String>,
    /// The arguments after the executable, templated.
    pub command: Vec<String>,
    /// Commands of the same executable run first, in order, each with these arguments
    /// (templated), the run's environment and folder, and the run's timeout (Cline's
    /// `auth`); one that fails ends the run.
    #[serde(default)]
    pub before: Vec<Vec<String>>,
    /// The prompt (templated); a plain request to call the probe's tool.
    #[serde(default = "default_prompt")]
    pub prompt: String,
    /// How many sizes one client run of `lab --derive` tries, one call of the tool after
    /// another (each once the previous result came back): a client that takes seconds to start
    /// derives in a few runs a shape. 1 (the default) for a client whose earlier results change
    /// what it does with the next (one that compacts its context, as Continue does).
    #[serde(default = "one_call")]
    pub derive_calls: usize,
    /// Variables set on top of the cleared environment, templated.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Files written into the private HOME before the run, templated.
    #[serde(default)]
    pub files: Vec<AdapterFile>,
    /// Where the adapter was read from (`built-in:FILE` or a path).
    #[serde(skip)]
    pub origin: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdapterFile {
    /// Relative to the private HOME.
    pub path: String,
    pub text: String,
}

fn default_model() -> String {
    "lab-model".into()
}

/// The most calls one derive run makes (each result stays in the client's context).
pub const MAX_DERIVE_CALLS: usize = 8;

fn one_call() -> usize {
    1
}

fn default_prompt() -> String {
    "Call the {server} tool {tool}.".into()
}

/// What one run fills the templates with.
#[derive(Debug, Clone)]
pub struct RunValues {
    pub home: PathBuf,
    pub base_url: String,
    pub server: String,
    pub tool: String,
    /// The MCP server's command line as the client starts it (the lab's tap in front).
    pub server_argv: Vec<String>,
}

/// An adapter with its templates filled for one run.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub args: Vec<String>,
    pub before: Vec<Vec<String>>,
    pub env: BTreeMap<String, String>,
    pub files: Vec<(PathBuf, String)>,
}

impl Adapter {
    /// Read an adapter file.
    pub fn parse(text: &str, origin: &str) -> Result<Adapter, LabError> {
        let mut adapter: Adapter = toml::from_str(text).map_err(|e| LabError::Adapter {
            origin: origin.into(),
            message: e.message().to_string(),
        })?;
        adapter.origin = origin.into();
        if !(1..=MAX_DERIVE_CALLS).contains(&adapter.derive_calls) {
            let n = adapter.derive_calls;
            return Err(adapter.error(format!(
                "derive_calls is {n}: it must be 1 to {MAX_DERIVE_CALLS} (calls in one client run)"
            )));
        }
        Ok(adapter)
    }

    /// Read an adapter from a file.
    pub fn load(path: &Path) -> Result<Adapter, LabError> {
        let text = std::fs::read_to_string(path).map_err(|e| LabError::Adapter {
            origin: path.display().to_string(),
            message: e.to_string(),
        })?;
        Adapter::parse(&text, &path.display().to_string())
    }

    /// Every built-in adapter, in a fixed order.
    pub fn built_in() -> Vec<Adapter> {
        BUILT_IN
            .iter()
            .map(|(file, text)| {
                Adapter::parse(text, &format!("built-in:{file}"))
                    .expect("the built-in adapters parse (tested)")
            })
            .collect()
    }

    /// The name the client gives the probe's tool for its model.
    pub fn tool_name(&self, server: &str, tool: &str) -> String {
        self.tool_name
            .replace("{server}", server)
            .replace("{tool}", tool)
    }

    /// Fill the templates for one run; any URL in the result must be on 127.0.0.1.
    pub fn render(&self, v: &RunValues) -> Result<Rendered, LabError> {
        let values = self.values(v);
        let fill_ = |t: &str| fill(t, &values).map_err(|m| self.error(m));
        let prompt = fill_(&self.prompt)?;
        let mut with_prompt = values.clone();
        with_prompt.insert("prompt", prompt);
        let fill_args = |args: &[String]| {
            args.iter()
                .map(|a| fill(a, &with_prompt).map_err(|m| self.error(m)))
                .collect::<Result<Vec<_>, _>>()
        };
        let args = fill_args(&self.command)?;
        let before = self
            .before
            .iter()
            .map(|b| fill_args(b))
            .collect::<Result<Vec<_>, _>>()?;
        let mut env = BTreeMap::new();
        for (k, t) in &self.env {
            env.insert(k.clone(), fill_(t)?);
        }
        let mut files = Vec::new();
        for f in &self.files {
            let rel = fill_(&f.path)?;
            if Path::new(&rel).is_absolute() || rel.split('/').any(|p| p == "..") {
                return Err(self.error(format!("file `{rel}` is not inside the private HOME")));
            }
            files.push((v.home.join(rel), fill_(&f.text)?));
        }
        let rendered = Rendered {
            args,
            before,
            env,
            files,
        };
        rendered.check_loopback().map_err(|m| self.error(m))?;
        Ok(rendered)
    }

    fn values(&self, v: &RunValues) -> BTreeMap<&'static str, String> {
        let json = |x: &serde_json::Value| x.to_string();
        let (command, args) = v.server_argv.split_first().unwrap_or((&v.server, &[]));
        BTreeMap::from([
            ("home", v.home.display().to_string()),
            ("base_url", v.base_url.clone()),
            ("server", v.server.clone()),
            ("tool", v.tool.clone()),
            ("tool_name", self.tool_name(&v.server, &v.tool)),
            ("model", self.model.clone()),
            ("server_command_json", json(&command.as_str().into())),
            ("server_args_json", json(&args.into())),
            ("server_argv_json", json(&v.server_argv.clone().into())),
        ])
    }

    fn error(&self, message: String) -> LabError {
        LabError::Adapter {
            origin: self.origin.clone(),
            message,
        }
    }
}

/// Replace each `{name}` of `values` in `template`; a `{name}` with no value is an error. Other
/// braces (JSON's) are left alone.
fn fill(template: &str, values: &BTreeMap<&'static str, String>) -> Result<String, String> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
            .unwrap_or(after.len());
        if name_len > 0 && after[name_len..].starts_with('}') {
            let name = &after[..name_len];
            let value = values
                .get(name)
                .ok_or_else(|| format!("unknown template value `{{{name}}}`"))?;
            out.push_str(value);
            rest = &after[name_len + 1..];
        } else {
            out.push('{');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

impl Rendered {
    /// Every `http://` or `https://` URL in the arguments, variables and files must have the
    /// host 127.0.0.1: the lab's model, nothing else.
    fn check_loopback(&self) -> Result<(), String> {
        let texts = self
            .args
            .iter()
            .chain(self.before.iter().flatten())
            .chain(self.env.values())
            .chain(self.files.iter().map(|(_, t)| t));
        for text in texts {
            for url in urls(text) {
                let host = url
                    .split_once("://")
                    .map(|(_, r)| r)
                    .unwrap_or("")
                    .split(['/', '?', '#'])
                    .next()
                    .unwrap_or("");
                let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
                let name = host.rsplit_once(':').map_or(host, |(h, _)| h);
                if name != "127.0.0.1" {
                    return Err(format!(
                        "`{url}` is not on 127.0.0.1: the lab never points a client elsewhere"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The URLs in a text: from each `http://` or `https://` to the next quote, space or bracket.
fn urls(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let lower = text.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = lower[from..].find("http").map(|i| i + from) {
        let rest = &lower[at..];
        if rest.starts_with("http://") || rest.starts_with("https://") {
            let end = text[at..]
                .find(|c: char| c.is_whitespace() || "\"'<>()[]{},".contains(c))
                .map_or(text.len(), |e| at + e);
            found.push(&text[at..end]);
            from = end;
        } else {
            from = at + 4;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(base_url: &str) -> RunValues {
        RunValues {
            home: PathBuf::from("/tmp/lab-home"),
            base_url: base_url.into(),
            server: "demo".into(),
            tool: "get_forecast".into(),
            server_argv: vec!["/bin/mcp-budget".into(), "lab-tap".into(), "x y".into()],
        }
    }

    #[test]
    fn every_built_in_adapter_parses_and_renders_json_that_parses() {
        let adapters = Adapter::built_in();
        assert_eq!(adapters.len(), BUILT_IN.len());
        for a in adapters {
            let r = a.render(&values("http://127.0.0.1:4000")).unwrap();
            assert!(
                r.args.iter().any(|x| x.contains("get_forecast")),
                "{}",
                a.id
            );
            for (path, text) in &r.files {
                assert!(path.starts_with("/tmp/lab-home"));
                // YAML (Continue's config.yaml) is written as JSON, which YAML reads too
                if path.extension().is_some_and(|e| e == "json" || e == "yaml") {
                    let v: serde_json::Value = serde_json::from_str(text).unwrap();
                    assert!(v.to_string().contains(r#""x y"]"#), "{}: {v}", a.id);
                } else {
                    let v: toml::Value = toml::from_str(text).unwrap();
                    assert_eq!(v["mcp_servers"]["demo"]["args"][1].as_str(), Some("x y"));
                }
            }
        }
    }

    #[test]
    fn a_url_off_loopback_is_refused_before_anything_runs() {
        let claude = Adapter::built_in().into_iter().next().unwrap();
        for bad in [
            "http://10.0.0.1:80",
            "https://api.anthropic.com",
            "http://127.0.0.1.evil.example:80",
            "http://localhost:4000",
        ] {
            let e = claude.render(&values(bad)).unwrap_err().to_string();
            assert!(e.contains("is not on 127.0.0.1"), "{bad}: {e}");
            assert!(e.contains("built-in:claude-code.toml"), "{e}");
        }
        let mut a = claude.clone();
        a.env
            .insert("X".into(), "see HTTPS://user@8.8.8.8/x".into());
        assert!(a.render(&values("http://127.0.0.1:1")).is_err());
    }

    #[test]
    fn templates_fill_known_names_and_refuse_unknown_ones() {
        let v = BTreeMap::from([("server", "demo".to_string())]);
        assert_eq!(
            fill(r#"{"a": "{server}"}"#, &v).unwrap(),
            r#"{"a": "demo"}"#
        );
        assert_eq!(fill("{}{x-y}{", &v).unwrap(), "{}{x-y}{");
        assert!(fill("{nope}", &v).unwrap_err().contains("`{nope}`"));
    }

    #[test]
    fn steps_before_the_run_are_filled_and_their_urls_checked() {
        let mut a = Adapter::built_in().remove(0);
        a.before = vec![vec!["auth".into(), "-b".into(), "{base_url}/v1".into()]];
        let r = a.render(&values("http://127.0.0.1:4000")).unwrap();
        assert_eq!(r.before, [["auth", "-b", "http://127.0.0.1:4000/v1"]]);
        a.before[0][2] = "https://api.example.com/v1".into();
        let e = a.render(&values("http://127.0.0.1:4000")).unwrap_err();
        assert!(e.to_string().contains("is not on 127.0.0.1"), "{e}");
    }

    #[test]
    fn a_file_outside_the_home_is_refused() {
        let mut a = Adapter::built_in().remove(0);
        a.files[0].path = "../escape.json".into();
        let e = a.render(&values("http://127.0.0.1:1")).unwrap_err();
        assert!(e.to_string().contains("not inside the private HOME"), "{e}");
    }
}

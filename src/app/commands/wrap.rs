//! `mcp-budget wrap` and `unwrap`: plan every file's edit, show it (a diff with secrets
//! redacted under `--dry-run`, else what was written and where its backup is), write. A file
//! that cannot be edited safely is said in one line naming it and left as it was; the others
//! are still edited, and the exit status is 2. Every name from a file (a server's, a header's,
//! a path) is shown on one line, its control characters escaped: a name cannot fake a line.

use mcp_budget::config::{parse_config_text, spec_secrets, Redactor};
use mcp_budget::ground::text::one_line;
use mcp_budget::run::wrap::{self, Edit, EntryOutcome, FilePlan, Wrote};

use crate::app::cli::{UnwrapArgs, WrapArgs};
use crate::app::exit::Failure;
use crate::app::settings;

pub fn wrap(args: WrapArgs) -> anyhow::Result<()> {
    let settings = settings::Wrap::resolve(&args)?;
    let options = settings.options.clone();
    run(&settings, Edit::Wrap(&options), "wrap")
}

pub fn unwrap(args: UnwrapArgs) -> anyhow::Result<()> {
    let settings = settings::Wrap::resolve_where(&args.at)?;
    run(&settings, Edit::Unwrap, "unwrap")
}

fn run(s: &settings::Wrap, direction: Edit, verb: &str) -> anyhow::Result<()> {
    if s.targets.is_empty() {
        anyhow::bail!(
            "no client config found to {verb} (name one with --config; project configs need --project)"
        );
    }
    let mut failed = false;
    let mut plans = Vec::new();
    for target in &s.targets {
        match wrap::plan(target, direction, &s.servers, &s.store) {
            Ok(p) => plans.push(p),
            Err(e) => {
                warn(verb, &e.to_string());
                failed = true;
            }
        }
    }
    for why in fragile(&plans) {
        warn(verb, &why);
    }
    for name in &s.servers {
        if !plans
            .iter()
            .any(|p| p.entries.iter().any(|e| &e.server == name))
            && !failed
        {
            anyhow::bail!(
                "--server {}: no server of that name in the configs read",
                one_line(name)
            );
        }
    }
    let token = wrap::token(&plans);
    let mut out = String::new();
    for p in &plans {
        out += &describe(p);
        if s.dry_run && p.changes() {
            out += &diff(p, direction);
        }
    }
    let changing = plans.iter().filter(|p| p.changes()).count();
    if s.dry_run {
        if changing > 0 {
            wrap::remember_dry_run(&plans, &token, &s.store)?;
            out += &format!(
                "\nDry run: nothing written. To write exactly these edits: {} --expect {token}\n",
                same_command()
            );
        } else {
            out += "\nDry run: nothing to change.\n";
        }
        crate::app::printer::print(&out)?;
        return fail_if(failed);
    }
    if let Some(expected) = &s.expect {
        if *expected != token {
            crate::app::printer::print(&out)?;
            anyhow::bail!(
                "{}; nothing written: run `mcp-budget {verb} --dry-run` again",
                wrap::differs_from_dry_run(&plans, expected, &s.store)
            );
        }
    }
    let mut wrote = 0;
    for p in plans.iter().filter(|p| p.changes()) {
        match wrap::write(p, &s.store) {
            Ok(how) => {
                wrote += 1;
                let kept = match how {
                    Wrote::Replaced => String::new(),
                    Wrote::InPlace { links } => {
                        format!("; written in place: its {links} hard links kept")
                    }
                };
                out += &format!(
                    "wrote {} (backup: {}{kept})\n",
                    one_line(&p.target.path.display().to_string()),
                    one_line(&p.backup.display().to_string())
                )
            }
            Err(e) => {
                warn(verb, &e.to_string());
                failed = true;
            }
        }
    }
    if wrote > 0 {
        out += "Restart the clients (or reload their MCP servers) to use the edited configs.\n";
    }
    // unwrap was asked to take the proxy out: an entry left behind it is a failure
    let left = matches!(direction, Edit::Unwrap)
        && plans
            .iter()
            .flat_map(|p| &p.entries)
            .any(|e| matches!(e.outcome, EntryOutcome::Skipped(_)));
    if left {
        warn(
            verb,
            "some entries are still behind the proxy (listed above)",
        );
        failed = true;
    }
    crate::app::printer::print(&out)?;
    fail_if(failed)
}

fn fail_if(failed: bool) -> anyhow::Result<()> {
    if failed {
        return Err(Failure::Reported.into());
    }
    Ok(())
}

/// One line on stderr, whatever the message holds (a file's name, a server's).
fn warn(verb: &str, message: &str) {
    crate::app::printer::warn(&format!("mcp-budget {verb}: {}", one_line(message)));
}

/// Why the binaries the plans write may stop working (under `target/`, a temporary folder, not
/// on the PATH), one line each.
fn fragile(plans: &[FilePlan]) -> Vec<String> {
    let mut bins: Vec<&str> = plans.iter().filter_map(|p| p.bin.as_deref()).collect();
    bins.sort_unstable();
    bins.dedup();
    bins.into_iter().filter_map(wrap::fragile_binary).collect()
}

/// The file's line, then one line per entry; a shared file's line says what it gets instead
/// of what belongs to this user and machine.
fn describe(p: &FilePlan) -> String {
    let mut out = format!(
        "{} ({})\n",
        one_line(&p.target.path.display().to_string()),
        p.target.client.id()
    );
    if let (Some(root), Some(bin)) = (&p.target.shared, &p.bin) {
        let secrets = match p.references.as_slice() {
            [] => String::new(),
            refs => format!(" ({})", refs.join(", ")),
        };
        out += &one_line(&format!(
            "  in the git work tree {}: no secret value written{secrets}; command `{bin}`; \
             backup in {}",
            root.display(),
            p.backup.display()
        ));
        out += "\n";
    }
    if p.entries.is_empty() {
        out += "  no server entries\n";
    }
    for e in &p.entries {
        let profile = match (&e.outcome, wrap::profile_of(p.target.client)) {
            (EntryOutcome::Wrapped, Some(id)) => format!(" (--client {id})"),
            (EntryOutcome::Wrapped, None) => {
                " (no client profile: the proxy's default budget)".into()
            }
            _ => String::new(),
        };
        out += &format!(
            "  {}\n",
            one_line(&format!("{}: {}{profile}", e.server, e.outcome))
        );
    }
    out
}

/// A unified diff of the edit, every secret the file's servers carry (env values, header
/// values, URL credentials) redacted before and after.
fn diff(p: &FilePlan, direction: Edit) -> String {
    let mut redactor = Redactor::default();
    // the secrets as the file holds them: a `${VAR}` stays a reference (never set to a value
    // that could match), so an entry whose variable is unset still gives its literal secrets
    let unexpanded = |_: &str| Some("\u{0}".to_string());
    // both sides as written (a header moved into `env`, the OTEL_* variables `--otlp` added)
    for text in [&p.before, &p.after] {
        redactor.add_secrets(wrap::written_secrets(p.target.client, text));
    }
    // and what the loader finds in the side with the original entries (secret flag values in
    // their args, URL credentials): the wrapped entries carry the same values after `--`
    let original = match direction {
        Edit::Wrap(_) => &p.before,
        Edit::Unwrap => &p.after,
    };
    if let Ok(file) = parse_config_text(
        &p.target.path,
        original,
        settings::home().as_deref(),
        &unexpanded,
    ) {
        for spec in &file.servers.servers {
            redactor.add_secrets(spec_secrets(spec));
        }
    }
    let shown = p.target.path.display().to_string();
    let diff = similar::TextDiff::from_lines(&p.before, &p.after)
        .unified_diff()
        .context_radius(2)
        .header(&shown, &shown)
        .to_string();
    redactor.redact(&diff)
}

/// This command line without `--dry-run`, each argument quoted for a POSIX shell when it
/// needs it.
fn same_command() -> String {
    let mut words = vec!["mcp-budget".to_string()];
    for a in std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .filter(|a| a != "--dry-run")
    {
        let plain = !a.is_empty()
            && a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+".contains(c));
        words.push(if plain {
            a
        } else {
            format!("'{}'", a.replace('\'', "'\\''"))
        });
    }
    words.join(" ")
}

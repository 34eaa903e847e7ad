#!/usr/bin/env python3
"""The numbers of the survey, from its audit.json, as Markdown (scripts/survey.sh writes them to
reports/survey/numbers.md; analysis.md is written from them). Every figure is computed here from
the report, so a re-run of the survey recomputes all of them.

    python3 scripts/survey-analysis.py reports/survey/audit.json

With a `measured/` folder beside audit.json (SURVEY_LAB=1 scripts/survey.sh), it adds what the
probe results became in each client, measured in the lab: raw (measured/raw) and behind
`mcp-budget proxy --client ID` (measured/raw-ID, measured/proxy-ID).
"""
import collections
import json
import pathlib
import statistics
import sys


def n(x):
    return f"{x:,}"


def main():
    report = json.load(open(sys.argv[1], encoding="utf-8"))
    servers = report["servers"]
    ok = [s for s in servers if s["status"] == "ok"]
    failed = [s for s in servers if s["status"] != "ok"]
    out = []
    say = out.append
    say(f"# The survey's numbers\n\n{len(servers)} servers audited: {len(ok)} ok, {len(failed)} failed to start or list.\n")

    modern = [s for s in ok if "2026-07-28" in s.get("eras", [])]
    say(f"Protocol eras (`--protocol auto`): {len(modern)} of {len(ok)} speak 2026-07-28 "
        f"({', '.join(s['name'] for s in modern) or 'none'}), every one of those also the handshake era; "
        f"{sum(1 for s in ok if s.get('protocol_version') == '2024-11-05')} answer only 2024-11-05.\n")
    say("## Schema tax per server (tokens per turn, cl100k_base model view)\n")
    taxes = sorted(((s["tools_list"]["model_tokens"], s) for s in ok), key=lambda t: -t[0])
    values = [t for t, _ in taxes]
    if values:
        q = statistics.quantiles(values, n=10) if len(values) >= 2 else values
        say(f"Median {n(int(statistics.median(values)))}, p90 {n(int(q[-1]))}, max {n(values[0])}, "
            f"total {n(sum(values))} for {sum(s['tools_list']['tool_count'] for s in ok)} tools.\n")
    say("| server | measured in | eras | tools | schema tax | heaviest tool | score |")
    say("|---|---|---|---:|---:|---|---|")
    for tax, s in taxes:
        top = max(s["tools"], key=lambda t: t["model_tokens"], default=None)
        score = s.get("schema_score") or {}
        say(f"| {s['name']} | {s.get('protocol_version') or '-'} | {', '.join(s.get('eras', [])) or '-'} | "
            f"{s['tools_list']['tool_count']} | {n(tax)} | "
            f"{top['name'] + ' (' + n(top['model_tokens']) + ')' if top else '-'} | "
            f"{str(score.get('score', '-')) + ' ' + score.get('grade', '')} |")

    say("\n## The heaviest tools\n")
    tools = sorted(((t["model_tokens"], s["name"], t["name"]) for s in ok for t in s["tools"]), reverse=True)
    say("| tool | server | tokens per turn |")
    say("|---|---|---:|")
    for tokens, server, tool in tools[:12]:
        say(f"| {tool} | {server} | {n(tokens)} |")

    say("\n## Probe results: raw, after the engine, and which client limits they break\n")
    say("| server | tool | raw tokens | after the engine | strategy | limits broken raw | broken after |")
    say("|---|---|---:|---:|---|---|---|")
    broke = collections.Counter()
    saved = 0
    probes = 0
    for s in ok:
        for p in s["probes"]:
            if p.get("status") != "ok" or not p.get("raw"):
                say(f"| {s['name']} | {p['tool']} | - | - | {p.get('status')}: {(p.get('error') or '')[:80]} | | |")
                continue
            probes += 1
            raw, b = p["raw"]["model_tokens"], p.get("budgeted") or {}
            saved += raw - b.get("tokens", raw)
            over = sorted({l["client"] for l in p.get("limits", []) if l.get("exceeded")})
            still = sorted({l["client"] for l in p.get("limits", []) if l.get("budgeted_exceeded")})
            for c in over:
                broke[c] += 1
            say(f"| {s['name']} | {p['tool']} | {n(raw)} | {n(b.get('tokens', raw))} | {b.get('strategy', '-')} | "
                f"{', '.join(over) or '-'} | {', '.join(still) or '-'} |")
    say(f"\n{probes} probes answered; the engine took {n(saved)} tokens out of them in all.")
    if broke:
        say("Results over a client's limit, raw: " + ", ".join(f"{c} {k}" for c, k in broke.most_common()) + ".")

    say("\n## Findings, most common first\n")
    rules = collections.Counter(f["rule"] for s in ok for f in s["findings"])
    saves = collections.Counter()
    for s in ok:
        for f in s["findings"]:
            saves[f["rule"]] += f.get("saves_tokens") or 0
    say("| rule | findings | servers | tokens per turn each saves (the fixes overlap) |")
    say("|---|---:|---:|---:|")
    for rule, k in rules.most_common():
        where = sum(1 for s in ok if any(f["rule"] == rule for f in s["findings"]))
        say(f"| {rule} | {k} | {where} | {n(saves[rule]) if saves[rule] else '-'} |")

    if failed:
        say("\n## Servers that did not start or list\n")
        say("| server | error |")
        say("|---|---|")
        for s in failed:
            say(f"| {s['name']} | {(s.get('error') or '').replace('|', '/')[:200]} |")
    measured = pathlib.Path(sys.argv[1]).parent / "measured"
    if list(measured.glob("raw*/audit.json")):
        out += measured_section(measured)
    print("\n".join(out))


# what a measured probe result became: whole, cut, filed (a file and a preview), broken (an
# error in its place, or nothing but the client's marker)
KINDS = ["whole", "cut", "filed", "broken"]
BROKEN = {"cap_no_preview", "json_array_error", "error_instead", "marker_only"}
RULES = ["client-error-instead-of-result", "client-marker-only", "client-misstated-cut", "client-cap-no-preview"]


def kind(m, probe=None):
    b = (m.get("breaks") or {}).get("kind")
    # a text-and-image result whose client put the image's file path between the texts reads
    # as "marker only" to the lab (all of the text reached the model): whole, and counted apart
    if b == "marker_only" and probe and probe["raw"].get("image_tokens"):
        return "whole"
    if m["outcome"] == "refused" or b in BROKEN:
        return "broken"
    # "truncated" with every character kept (Gemini CLI on the proxy's results under its
    # 40,000 characters): all of the text reached the model: whole, and counted apart
    if probe and m["outcome"] == "truncated" and m.get("kept_fraction", 0) >= 0.9995:
        return "whole"
    return {"full": "whole", "truncated": "cut", "spilled_to_file": "filed"}[m["outcome"]]


def results(report, client):
    """(server, tool, index, raw tokens, measured row or None) of every answered probe."""
    for s in report["servers"]:
        for i, p in enumerate(s.get("probes", [])):
            if p.get("status") != "ok" or not p.get("raw"):
                continue
            row = next((c for c in p.get("clients", []) if c["client"] == client), {})
            yield s["name"], p["tool"], i, p["raw"]["model_tokens"], row.get("measured"), p


def tally(report, client):
    count = collections.Counter()
    raw = tokens = 0
    for _, _, _, raw_tokens, m, p in results(report, client):
        if m is None:
            count["not measured"] += 1
            continue
        count[kind(m, p)] += 1
        if kind(m, p) != kind(m):
            count["image read as marker" if kind(m) == "broken" else "cut with all kept"] += 1
        raw += raw_tokens
        tokens += m["tokens_to_model"]
    return count, raw, tokens


def findings(report, name):
    """The measured compatibility findings of this run naming `name`, by rule."""
    found = collections.Counter()
    for s in report["servers"]:
        for f in s.get("findings", []):
            if f["rule"] in RULES and f["message"].startswith(name + " ") and "measured in this run" in f["message"]:
                found[f["rule"]] += 1
    return found


def measured_section(folder):
    runs = sorted(folder.glob("raw*/audit.json"))
    first = json.load(open(runs[0], encoding="utf-8"))
    for path in runs[1:]:
        for c in json.load(open(path, encoding="utf-8"))["measured_clients"]:
            if all(x["client"] != c["client"] for x in first["measured_clients"]):
                first["measured_clients"].append(c)
    out = ["\n## What the results become in each client (measured)\n"]
    say = out.append
    # each client's raw run is raw-ID (raw/, a run of several clients, where there is none)
    own, behind = {}, {}
    for c in first["measured_clients"]:
        for prefix, into in (("raw", own), ("proxy", behind)):
            path = folder / f"{prefix}-{c['client']}" / "audit.json"
            if path.is_file():
                into[c["client"]] = json.load(open(path, encoding="utf-8"))
    raws = {c["client"]: own.get(c["client"], first) for c in first["measured_clients"]}
    clients = [next(x for x in raws[c["client"]]["measured_clients"] if x["client"] == c["client"])
               for c in first["measured_clients"]]
    clients = [c for c in clients if c.get("version")]
    raw = first
    when = raw["measured_clients"][0]["measured_at"][:10] if raw["measured_clients"] else "-"
    say(f"Measured in the lab on {when} (`audit --client measured,...`, mcp-budget {raw['tool_version']}): each "
        "client ran headless against the lab's scripted model, once per probe, and what it sent its model is "
        "counted (cl100k_base). Raw: the servers as they are; behind the proxy: each server wrapped in "
        "`mcp-budget proxy --client ID` (the default 8,000-token budget, tightened to the client's limits). "
        "*Whole*: the result as sent; *cut*: part of it, with the client's marker; *filed*: saved to a file, "
        "a preview sent; *broken*: an error in place of the result, or nothing but the marker. "
        "*Sent to the client*: what the server sent (raw) or the proxy passed on, as the audit counted it "
        "(content and structuredContent), over the results measured.\n")
    marked = kept_all = 0
    say("| client | version | run | results | whole | cut | filed | broken | tokens sent to the client | tokens to the model |")
    say("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for c in clients:
        for how, report in (("raw", raws[c["client"]]), ("behind the proxy", behind.get(c["client"]))):
            if report is None:
                continue
            m = next((x for x in report["measured_clients"] if x["client"] == c["client"]), {})
            count, raw_tokens, tokens = tally(report, c["client"])
            total = sum(count[k] for k in KINDS)
            missing = f" (+{count['not measured']} not measured)" if count["not measured"] else ""
            marked += count["image read as marker"]
            kept_all += count["cut with all kept"]
            say(f"| {c['name']} | {m.get('version') or '-'} | {how} | {total}{missing} | "
                + " | ".join(str(count[k]) for k in KINDS) + f" | {n(raw_tokens)} | {n(tokens)} |")
    if marked:
        say(f"\n{marked} of the results counted *whole* are a text-and-image result the lab reports as "
            "\"marker only\" (`client-marker-only`): the client put a file path or nothing in place of the image, and all of the text "
            "reached the model (marked * below).")
    if kept_all:
        say(f"\n{kept_all} of the results counted *whole* are ones the lab reports as cut (`truncated`) with "
            "every character of the text kept (`kept_fraction` 1.0; marked * below).")
    say("\nCompatibility findings measured in the run (`servers[].findings`), raw → behind the proxy:\n")
    say("| client | " + " | ".join(f"`{r}`" for r in RULES) + " |")
    say("|---|" + "---:|" * len(RULES))
    for c in clients:
        a = findings(raws[c["client"]], c["name"])
        b = findings(behind[c["client"]], c["name"]) if c["client"] in behind else None
        say(f"| {c['name']} {c['version']} | " + " | ".join(f"{a[r]} → {b[r] if b is not None else '-'}" for r in RULES) + " |")
    say("\nEvery result, per client (raw → behind the proxy; tokens that reach the model):\n")
    say("| server | tool | raw tokens | " + " | ".join(c["name"] for c in clients) + " |")
    say("|---|---|---:|" + "---|" * len(clients))
    rows = {}
    for c in clients:
        for how, report in (("raw", raws[c["client"]]), ("proxy", behind.get(c["client"]))):
            for server, tool, i, raw_tokens, m, p in results(report or {"servers": []}, c["client"]):
                rows.setdefault((server, tool, i), {"raw": None})
                if how == "raw":
                    rows[(server, tool, i)]["raw"] = raw_tokens
                rows[(server, tool, i)][(c["client"], how)] = (m, p)
    for (server, tool, i), row in rows.items():
        cells = []
        for c in clients:
            seen = [row.get((c["client"], how)) for how in ("raw", "proxy")]
            cells.append(" → ".join(f"{kind(*x)}{'*' if kind(*x) != kind(x[0]) else ''} {n(x[0]['tokens_to_model'])}"
                                    if x and x[0] else "-" for x in seen))
        raw_tokens = n(row["raw"]) if row["raw"] is not None else "-"
        say(f"| {server} | {tool} | {raw_tokens} | " + " | ".join(cells) + " |")
    errors = []
    for c in clients:
        errors += [(c["name"], e) for e in c.get("errors", [])]
        for e in next((x for x in (behind.get(c["client"]) or {}).get("measured_clients", []) if x["client"] == c["client"]), {}).get("errors", []):
            errors.append((c["name"] + " behind the proxy", e))
    if errors:
        say("\nWhat the lab could not measure:\n")
        for who, e in errors:
            say(f"- {who}: {e[:300]}")
    return out


if __name__ == "__main__":
    main()

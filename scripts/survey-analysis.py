#!/usr/bin/env python3
"""The numbers of the survey, from its audit.json, as Markdown (scripts/survey.sh writes them to
reports/survey/numbers.md; analysis.md is written from them). Every figure is computed here from
the report, so a re-run of the survey recomputes all of them.

    python3 scripts/survey-analysis.py reports/survey/audit.json
"""
import collections
import json
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
    print("\n".join(out))


if __name__ == "__main__":
    main()

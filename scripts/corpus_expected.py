#!/usr/bin/env python3
"""Independent reference token counts for the shared MCP corpus, using the real `tiktoken`.

Computes the expected numbers that mcp-budget's Rust tests compare against:

  A) tool lists  (toolslists/live/*.tools-list.jsonl, github-mcp-server/tools-list.*.json)
     wire bytes/tokens of the exact raw `result` text, tool count, model tokens
     (sum of compact {"name","description","input_schema"} per tool), description tokens,
     input-schema tokens, and the most expensive tool.
  B) tools/call responses (responses/*.jsonl)
     wire bytes/tokens of the exact raw `result` text, text-block tokens, tokens of the raw
     `structuredContent` text, block types, and whether structuredContent duplicates a text block.

Both cl100k_base and o200k_base are counted with `Encoding.encode_ordinary` (special-token
strings count as ordinary text). Files are read as bytes and decoded as UTF-8 by hand, so no
newline translation happens.

How to run (offline is fine; only PyPI is needed once):

    python3 -m venv /tmp/refvenv
    /tmp/refvenv/bin/pip install tiktoken==0.14.0
    /tmp/refvenv/bin/python scripts/corpus_expected.py [CORPUS_DIR] > /tmp/corpus_expected.txt

CORPUS_DIR defaults to $MCP_CORPUS_DIR, else ../shared/corpus relative to the repo root
(i.e. /work/shared/corpus).

tiktoken normally downloads its rank files at run time. This script instead copies the
identical files shipped in the Rust crate bpe-openai (~/.cargo/registry/src/*/bpe-openai-*/data/,
gzipped; the crate mcp-budget counts with), or tiktoken-rs' assets/ where that is what is there,
into a cache directory under the names tiktoken expects (sha1 hex of the download URL),
checks their sha256 against tiktoken's expected hashes, and sets TIKTOKEN_CACHE_DIR before
importing tiktoken. The cache directory is $TIKTOKEN_CACHE_DIR if set, else /tmp/tiktoken-cache.

Output: (1) a human-readable table, (2) a check against the corpus INDEX.md,
(3) Rust source (struct definitions + constant arrays) ready to paste into a test.
"""

import glob
import gzip
import hashlib
import json
import os
import re
import shutil
import sys

# ----------------------------------------------------------------------------
# tiktoken rank files: offline setup (must happen before `import tiktoken`)
# ----------------------------------------------------------------------------

URL_BASE = "https://openaipublic.blob.core.windows.net/encodings/"
# sha256 values that tiktoken_ext/openai_public.py expects for these files
EXPECTED_SHA256 = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}
ENCODINGS = ("cl100k_base", "o200k_base")


def _sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _find_assets_dir():
    """The folder with the rank files: bpe-openai's `data/` (gzipped, the crate the project
    counts with), else tiktoken-rs' `assets/` (plain), under every cargo home."""
    cargo_homes = []
    if os.environ.get("CARGO_HOME"):
        cargo_homes.append(os.environ["CARGO_HOME"])
    cargo_homes.append(os.path.expanduser("~/.cargo"))
    candidates = []
    for home in cargo_homes:
        candidates += sorted(glob.glob(os.path.join(home, "registry/src/*/bpe-openai-*/data")), reverse=True)
        candidates += sorted(glob.glob(os.path.join(home, "registry/src/*/tiktoken-rs-*/assets")), reverse=True)
    for d in candidates:
        if all(_rank_file(d, name) for name in ENCODINGS):
            return d
    sys.exit("error: no rank files (cl100k_base, o200k_base) found under "
             "~/.cargo/registry/src/*/bpe-openai-*/data or */tiktoken-rs-*/assets; "
             "run `cargo fetch` in the repo first")


def _rank_file(folder, name):
    for file in (f"{name}.tiktoken", f"{name}.tiktoken.gz"):
        path = os.path.join(folder, file)
        if os.path.isfile(path):
            return path
    return None


def setup_tiktoken_cache():
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR") or "/tmp/tiktoken-cache"
    os.makedirs(cache_dir, exist_ok=True)
    assets = _find_assets_dir()
    for name in ENCODINGS:
        url = f"{URL_BASE}{name}.tiktoken"
        dst = os.path.join(cache_dir, hashlib.sha1(url.encode()).hexdigest())
        if os.path.isfile(dst) and _sha256_file(dst) == EXPECTED_SHA256[name]:
            continue
        src = _rank_file(assets, name)
        tmp = dst + ".tmp"
        if src.endswith(".gz"):
            with gzip.open(src, "rb") as f_in, open(tmp, "wb") as f_out:
                shutil.copyfileobj(f_in, f_out)
        else:
            shutil.copyfile(src, tmp)
        got = _sha256_file(tmp)
        if got != EXPECTED_SHA256[name]:
            os.remove(tmp)
            sys.exit(f"error: {src} sha256 {got} != expected {EXPECTED_SHA256[name]}")
        os.replace(tmp, dst)
    os.environ["TIKTOKEN_CACHE_DIR"] = cache_dir
    return cache_dir, assets


CACHE_DIR, ASSETS_DIR = setup_tiktoken_cache()

import tiktoken  # noqa: E402  (must come after the cache setup)

ENC = {name: tiktoken.get_encoding(name) for name in ENCODINGS}


def ntok(text, enc="cl100k_base"):
    return len(ENC[enc].encode_ordinary(text))


def both(text):
    return {e: ntok(text, e) for e in ENCODINGS}


def compact(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


# ----------------------------------------------------------------------------
# raw-offset JSON walking (no re-serialisation)
# ----------------------------------------------------------------------------

_DEC = json.JSONDecoder()
_WS = " \t\n\r"


def _skip_ws(s, i):
    while i < len(s) and s[i] in _WS:
        i += 1
    return i


def object_member_spans(s, start=0):
    """Walk the JSON object starting at s[start] (after optional whitespace).

    Returns ({key: (value_start, value_end)}, object_end) with character offsets into s.
    A duplicated key keeps the LAST occurrence (like json.loads); duplicates are recorded
    in the module-level DUP_KEYS list for reporting.
    """
    i = _skip_ws(s, start)
    if i >= len(s) or s[i] != "{":
        raise ValueError(f"expected '{{' at offset {i}")
    i += 1
    spans = {}
    i = _skip_ws(s, i)
    if i < len(s) and s[i] == "}":
        return spans, i + 1
    while True:
        i = _skip_ws(s, i)
        key, i = _DEC.raw_decode(s, i)
        if not isinstance(key, str):
            raise ValueError(f"non-string key at offset {i}")
        i = _skip_ws(s, i)
        if s[i] != ":":
            raise ValueError(f"expected ':' at offset {i}")
        i = _skip_ws(s, i + 1)
        vstart = i
        _, vend = _DEC.raw_decode(s, i)
        if key in spans:
            DUP_KEYS.append((key, vstart))
        spans[key] = (vstart, vend)
        i = _skip_ws(s, vend)
        if s[i] == ",":
            i += 1
            continue
        if s[i] == "}":
            return spans, i + 1
        raise ValueError(f"expected ',' or '}}' at offset {i}")


DUP_KEYS = []


def read_text(path):
    with open(path, "rb") as f:
        data = f.read()
    return data, data.decode("utf-8")  # strict: fail on invalid UTF-8


def file_notes(data, text):
    notes = []
    if b"\r" in data:
        notes.append("raw CR bytes")
    # odd-length run of backslashes followed by r / u = a real JSON escape
    esc_cr = len(re.findall(rb"(?<!\\)(?:\\\\)*\\r", data))
    if esc_cr:
        notes.append("escaped \\r x%d" % esc_cr)
    esc_u = len(re.findall(rb"(?<!\\)(?:\\\\)*\\u[0-9a-fA-F]{4}", data))
    if esc_u:
        notes.append("\\u escapes x%d" % esc_u)
    if re.search(rb"(?<!\\)(?:\\\\)*\\/", data):
        notes.append("escaped \\/")
    nonascii = sum(1 for ch in text if ord(ch) > 127)
    if nonascii:
        notes.append(f"non-ASCII chars x{nonascii}")
    if data.startswith(b"\xef\xbb\xbf"):
        notes.append("UTF-8 BOM")
    if not data.endswith(b"\n"):
        notes.append("no trailing newline")
    return notes


def find_floats(obj, path="$", out=None):
    """Non-integer numbers: json.dumps may spell them differently from the source/serde_json."""
    if out is None:
        out = []
    if isinstance(obj, float):
        out.append((path, obj))
    elif isinstance(obj, dict):
        for k, v in obj.items():
            find_floats(v, f"{path}.{k}", out)
    elif isinstance(obj, list):
        for n, v in enumerate(obj):
            find_floats(v, f"{path}[{n}]", out)
    return out


# ----------------------------------------------------------------------------
# A) tool lists
# ----------------------------------------------------------------------------

def analyse_toolslist(corpus, rel):
    path = os.path.join(corpus, rel)
    data, text = read_text(path)
    notes = file_notes(data, text)
    if rel.endswith(".jsonl"):
        DUP_KEYS.clear()
        spans, end = object_member_spans(text, 0)
        if _skip_ws(text, end) != len(text):
            notes.append("trailing data after top-level object")
        if "result" not in spans:
            raise ValueError(f"{rel}: no top-level result")
        rs, re_ = spans["result"]
        wire = text[rs:re_]
        if DUP_KEYS:
            notes.append(f"duplicate top-level keys {DUP_KEYS}")
        notes.append("top-level key order: " + ",".join(spans.keys()))
    else:
        wire = text.rstrip()  # bare result object: whole file minus trailing whitespace
    result = json.loads(wire)
    tools = result["tools"]
    if "nextCursor" in result:
        notes.append("has nextCursor")

    model = {e: 0 for e in ENCODINGS}
    desc = {e: 0 for e in ENCODINGS}
    schema = {e: 0 for e in ENCODINGS}
    top = None  # (model_cl100k, name)
    no_desc, no_schema, null_desc, empty_desc = [], [], [], []
    floats = []
    for t in tools:
        name = t["name"]
        obj = {"name": name}
        if "description" in t:
            if t["description"] is None:
                null_desc.append(name)
            if t["description"] == "":
                empty_desc.append(name)
            obj["description"] = t["description"]
        else:
            no_desc.append(name)
        if "inputSchema" in t:
            sch = t["inputSchema"]
        else:
            sch = {"type": "object"}
            no_schema.append(name)
        floats += find_floats(sch, f"{name}.inputSchema")
        obj["input_schema"] = sch
        mtext = compact(obj)
        stext = compact(sch)
        m_cl = None
        for e in ENCODINGS:
            m = ntok(mtext, e)
            model[e] += m
            if e == "cl100k_base":
                m_cl = m
            schema[e] += ntok(stext, e)
            if isinstance(t.get("description"), str):
                desc[e] += ntok(t["description"], e)
        if top is None or m_cl > top[0]:
            top = (m_cl, name)
    if no_desc:
        notes.append(f"{len(no_desc)} tool(s) without description: {', '.join(no_desc)}")
    if null_desc:
        notes.append(f"null description: {', '.join(null_desc)}")
    if empty_desc:
        notes.append(f"empty description: {', '.join(empty_desc)}")
    if no_schema:
        notes.append(f"{len(no_schema)} tool(s) without inputSchema (used {{\"type\":\"object\"}}): {', '.join(no_schema)}")
    if floats:
        notes.append(f"float numbers in inputSchema (dumps spelling may differ from source): {floats}")
    names = [t["name"] for t in tools]
    if len(set(names)) != len(names):
        notes.append("duplicate tool names")
    wt = both(wire)
    return {
        "file": rel,
        "file_bytes": len(data),
        "file_cl100k": ntok(text),
        "tool_count": len(tools),
        "wire_bytes": len(wire.encode("utf-8")),
        "wire": wt,
        "model": model,
        "description": desc,
        "input_schema": schema,
        "top_tool": top[1] if top else "",
        "top_tool_model_cl100k": top[0] if top else 0,
        "notes": notes,
    }


# ----------------------------------------------------------------------------
# B) responses
# ----------------------------------------------------------------------------

def analyse_response(corpus, rel):
    path = os.path.join(corpus, rel)
    data, text = read_text(path)
    notes = file_notes(data, text)
    DUP_KEYS.clear()
    spans, end = object_member_spans(text, 0)
    if _skip_ws(text, end) != len(text):
        notes.append("trailing data after top-level object")
    notes.append("top-level key order: " + ",".join(spans.keys()))
    rs, re_ = spans["result"]
    wire = text[rs:re_]
    rspans, _ = object_member_spans(text, rs)
    if DUP_KEYS:
        notes.append(f"duplicate keys {DUP_KEYS}")
    result = json.loads(wire)
    blocks = result.get("content", [])
    block_types = [b.get("type") for b in blocks]
    texts = [b["text"] for b in blocks if b.get("type") == "text"]
    text_tok = {e: sum(ntok(t, e) for t in texts) for e in ENCODINGS}

    has_sc = "structuredContent" in rspans
    if has_sc:
        ss, se = rspans["structuredContent"]
        sc_raw = text[ss:se]
        sc_tok = both(sc_raw)
        sc = result["structuredContent"]
    else:
        sc_raw = ""
        sc_tok = {e: 0 for e in ENCODINGS}
        sc = None

    dup = False
    dup_how = ""
    if has_sc:
        for t in texts:
            try:
                parsed = json.loads(t)
            except ValueError:
                continue
            if parsed == sc:
                dup, dup_how = True, "text block parses as JSON == structuredContent"
                break
        if not dup and isinstance(sc, dict):
            for k, v in sc.items():
                if isinstance(v, str) and v in texts:
                    dup, dup_how = True, f"structuredContent.{k} == text block"
                    break
    if dup_how:
        notes.append(dup_how)
    if result.get("isError"):
        notes.append("isError=true")
    wt = both(wire)
    return {
        "file": rel,
        "file_bytes": len(data),
        "file_cl100k": ntok(text),
        "wire_bytes": len(wire.encode("utf-8")),
        "wire": wt,
        "text": text_tok,
        "has_structured": has_sc,
        "structured_bytes": len(sc_raw.encode("utf-8")),
        "structured": sc_tok,
        "structured_duplicate": dup,
        "block_types": block_types,
        "notes": notes,
    }


# ----------------------------------------------------------------------------
# INDEX.md cross-check
# ----------------------------------------------------------------------------

def parse_index(corpus):
    path = os.path.join(corpus, "INDEX.md")
    if not os.path.isfile(path):
        return {}
    _, text = read_text(path)
    rows = {}
    for line in text.splitlines():
        if not line.startswith("| ") or line.startswith("| path") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 6:
            continue
        note = cells[5]
        row = {"bytes": int(cells[1]), "cl100k": int(cells[2]), "note": note}
        m = re.search(r"text_cl100k=(\d+)", note)
        if m:
            row["text_cl100k"] = int(m.group(1))
        m = re.search(r"tools=(\d+)", note)
        if m:
            row["tools"] = int(m.group(1))
        m = re.search(r"structuredContent=(True|False)", note)
        if m:
            row["structuredContent"] = m.group(1) == "True"
        m = re.search(r"types=([\w+]+)", note)
        if m:
            row["types"] = m.group(1).split("+")
        rows[cells[0]] = row
    return rows


def index_check(index, tls, rsps):
    lines = []
    mism = 0
    for r in tls + rsps:
        row = index.get(r["file"])
        if row is None:
            lines.append(f"  MISSING from INDEX.md: {r['file']}")
            mism += 1
            continue
        checks = [("bytes", r["file_bytes"], row["bytes"]), ("cl100k(whole file)", r["file_cl100k"], row["cl100k"])]
        if "tools" in row:
            checks.append(("tools", r["tool_count"], row["tools"]))
        if "text_cl100k" in row:
            checks.append(("text_cl100k", r["text"]["cl100k_base"], row["text_cl100k"]))
        if "structuredContent" in row:
            checks.append(("structuredContent", r["has_structured"], row["structuredContent"]))
        if "types" in row:
            # INDEX lists the types as a set joined by '+', compare as sets
            checks.append(("types(set)", sorted(set(r["block_types"])), sorted(set(row["types"]))))
        for what, got, want in checks:
            if got != want:
                mism += 1
                lines.append(f"  MISMATCH {r['file']}: {what} computed={got} INDEX.md={want}")
    seen = {r["file"] for r in tls + rsps}
    for p in index:
        if (p.startswith("responses/") or p.startswith("toolslists/")) and p not in seen:
            lines.append(f"  in INDEX.md but not analysed: {p}")
            mism += 1
    if not mism:
        lines.append("  all bytes, whole-file cl100k, tools=, text_cl100k=, structuredContent=, types= agree")
    return mism, lines


# ----------------------------------------------------------------------------
# output
# ----------------------------------------------------------------------------

def rust_str(s):
    out = []
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{{{ord(ch):x}}}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def print_tables(tls, rsps):
    print("=" * 100)
    print("A) TOOL LISTS  (tokens: cl100k / o200k)")
    print("=" * 100)
    hdr = f"{'file':<58} {'tools':>5} {'wire_B':>7} {'wire':>13} {'model':>13} {'descr':>13} {'schema':>13}  top tool (model cl100k)"
    print(hdr)
    print("-" * len(hdr))
    for r in tls:
        def pair(d):
            return f"{d['cl100k_base']}/{d['o200k_base']}"
        print(f"{r['file']:<58} {r['tool_count']:>5} {r['wire_bytes']:>7} {pair(r['wire']):>13} "
              f"{pair(r['model']):>13} {pair(r['description']):>13} {pair(r['input_schema']):>13}  "
              f"{r['top_tool']} ({r['top_tool_model_cl100k']})")
    print()
    for r in tls:
        if r["notes"]:
            print(f"  {r['file']}:")
            for n in r["notes"]:
                print(f"      - {n}")
    print()
    print("=" * 100)
    print("B) RESPONSES  (tokens: cl100k / o200k)")
    print("=" * 100)
    hdr = f"{'file':<48} {'wire_B':>7} {'wire':>15} {'text':>13} {'struct_B':>8} {'structured':>13} {'dup':>5}  block_types"
    print(hdr)
    print("-" * len(hdr))
    for r in rsps:
        def pair(d):
            return f"{d['cl100k_base']}/{d['o200k_base']}"
        print(f"{r['file']:<48} {r['wire_bytes']:>7} {pair(r['wire']):>15} {pair(r['text']):>13} "
              f"{r['structured_bytes']:>8} {pair(r['structured']):>13} {str(r['structured_duplicate']).lower():>5}  "
              f"{'+'.join(r['block_types'])}")
    print()
    for r in rsps:
        if r["notes"]:
            print(f"  {r['file']}:")
            for n in r["notes"]:
                print(f"      - {n}")
    print()


def print_rust(tls, rsps, version):
    print("// ---- generated by scripts/corpus_expected.py "
          f"(tiktoken {version}, encode_ordinary) ----")
    print("#[derive(Debug, Clone, Copy)]")
    print("pub struct ToolsListExpect {")
    for f, ty in [("file", "&'static str"), ("tool_count", "usize"), ("wire_bytes", "usize"),
                  ("wire_cl100k", "usize"), ("wire_o200k", "usize"),
                  ("model_cl100k", "usize"), ("model_o200k", "usize"),
                  ("description_cl100k", "usize"), ("input_schema_cl100k", "usize"),
                  ("description_o200k", "usize"), ("input_schema_o200k", "usize"),
                  ("top_tool", "&'static str"), ("top_tool_model_cl100k", "usize")]:
        print(f"    pub {f}: {ty},")
    print("}")
    print()
    print("#[derive(Debug, Clone, Copy)]")
    print("pub struct ResponseExpect {")
    for f, ty in [("file", "&'static str"), ("wire_bytes", "usize"),
                  ("wire_cl100k", "usize"), ("wire_o200k", "usize"),
                  ("text_cl100k", "usize"), ("text_o200k", "usize"),
                  ("structured_cl100k", "usize"), ("structured_duplicate", "bool"),
                  ("block_types", "&'static [&'static str]"),
                  ("has_structured", "bool"), ("structured_o200k", "usize")]:
        print(f"    pub {f}: {ty},")
    print("}")
    print()
    print("// file, tool_count, wire_bytes, wire_cl100k, wire_o200k, model_cl100k, model_o200k, "
          "description_cl100k, input_schema_cl100k, description_o200k, input_schema_o200k, "
          "top_tool, top_tool_model_cl100k")
    print("pub const TOOLSLISTS: &[ToolsListExpect] = &[")
    for r in tls:
        print(f"    ToolsListExpect {{ file: {rust_str(r['file'])}, tool_count: {r['tool_count']}, "
              f"wire_bytes: {r['wire_bytes']}, wire_cl100k: {r['wire']['cl100k_base']}, "
              f"wire_o200k: {r['wire']['o200k_base']}, model_cl100k: {r['model']['cl100k_base']}, "
              f"model_o200k: {r['model']['o200k_base']}, description_cl100k: {r['description']['cl100k_base']}, "
              f"input_schema_cl100k: {r['input_schema']['cl100k_base']}, "
              f"description_o200k: {r['description']['o200k_base']}, "
              f"input_schema_o200k: {r['input_schema']['o200k_base']}, "
              f"top_tool: {rust_str(r['top_tool'])}, top_tool_model_cl100k: {r['top_tool_model_cl100k']} }},")
    print("];")
    print()
    print("// file, wire_bytes, wire_cl100k, wire_o200k, text_cl100k, text_o200k, structured_cl100k, "
          "structured_duplicate, block_types, has_structured, structured_o200k")
    print("pub const RESPONSES: &[ResponseExpect] = &[")
    for r in rsps:
        bt = ", ".join(rust_str(t if t is not None else "") for t in r["block_types"])
        print(f"    ResponseExpect {{ file: {rust_str(r['file'])}, wire_bytes: {r['wire_bytes']}, "
              f"wire_cl100k: {r['wire']['cl100k_base']}, wire_o200k: {r['wire']['o200k_base']}, "
              f"text_cl100k: {r['text']['cl100k_base']}, text_o200k: {r['text']['o200k_base']}, "
              f"structured_cl100k: {r['structured']['cl100k_base']}, "
              f"structured_duplicate: {str(r['structured_duplicate']).lower()}, block_types: &[{bt}], "
              f"has_structured: {str(r['has_structured']).lower()}, "
              f"structured_o200k: {r['structured']['o200k_base']} }},")
    print("];")
    print("// ---- end generated ----")


def main():
    if len(sys.argv) > 1:
        corpus = sys.argv[1]
    elif os.environ.get("MCP_CORPUS_DIR"):
        corpus = os.environ["MCP_CORPUS_DIR"]
    else:
        corpus = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "corpus"))
    if not os.path.isdir(corpus):
        sys.exit(f"error: corpus dir {corpus} not found")

    tl_files = sorted(os.path.relpath(p, corpus) for p in glob.glob(os.path.join(corpus, "toolslists/live/*.tools-list.jsonl")))
    tl_files += ["toolslists/github-mcp-server/tools-list.default-toolsets-43.json",
                 "toolslists/github-mcp-server/tools-list.all-snaps-117.json"]
    rsp_files = sorted(os.path.relpath(p, corpus) for p in glob.glob(os.path.join(corpus, "responses/*.jsonl")))

    tls = [analyse_toolslist(corpus, f) for f in tl_files]
    rsps = [analyse_response(corpus, f) for f in rsp_files]

    version = getattr(tiktoken, "__version__", None)
    if version is None:
        from importlib.metadata import version as _v
        version = _v("tiktoken")
    print(f"# corpus_expected.py  tiktoken={version}  python={sys.version.split()[0]}")
    print(f"# corpus={corpus}")
    print(f"# rank files from {ASSETS_DIR} -> TIKTOKEN_CACHE_DIR={CACHE_DIR}")
    print("# tokens = len(enc.encode_ordinary(text)); wire = exact raw `result` substring of the file;")
    print("# model = sum over tools of compact json.dumps({name,description,input_schema}, ensure_ascii=False)")
    print()
    print_tables(tls, rsps)

    print("=" * 100)
    print("INDEX.md cross-check (bytes, whole-file cl100k, tools=, text_cl100k=, structuredContent=, types=)")
    print("=" * 100)
    index = parse_index(corpus)
    if not index:
        print("  INDEX.md not found / empty")
    else:
        n, lines = index_check(index, tls, rsps)
        for ln in lines:
            print(ln)
        print(f"  mismatches: {n}")
    print()
    print("=" * 100)
    print("RUST")
    print("=" * 100)
    print_rust(tls, rsps, version)


if __name__ == "__main__":
    main()

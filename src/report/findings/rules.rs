//! The checklist's rules: what each checks, why it matters, and the fix (`--explain`).

/// A description longer than this many tokens is flagged (and the suggested cut keeps at most
/// this many).
pub const LONG_DESCRIPTION_TOKENS: usize = 500;

/// One rule of the checklist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub id: &'static str,
    pub severity: &'static str,
    pub title: &'static str,
    /// What the rule checks.
    pub checks: &'static str,
    /// Why it matters.
    pub why: &'static str,
    pub fix: &'static str,
    /// The rule judges probe results, not tool definitions (the schema score counts only
    /// definition rules).
    pub about_results: bool,
}

pub const RULES: &[Rule] = &[
    Rule {
        id: "list-without-limit",
        severity: "warning",
        title: "List-shaped tool without a limit or cursor parameter",
        checks: "A tool whose name says it lists, searches or queries (list_*, search_*, *_query, find_*, get_all_*) has no input parameter named like limit, max_results, per_page, page_size, count, top, cursor, page, offset or page_token.",
        why: "Without a way to ask for less, every call returns everything: one call can exceed a client's result cap (Claude Code refuses results over 25,000 tokens) and the model cannot page.",
        fix: "add a `limit` parameter with a small default and a `cursor` for the next page",
        about_results: false,
    },
    Rule {
        id: "result-over-cap-unpaginated",
        severity: "error",
        title: "Result over a client cap with no truncation marker or pagination",
        checks: "A probe's result is over Claude Code's 25,000-token cap and its structure shows no pagination: no top-level key such as nextCursor, hasMore, truncated or total in its JSON text or structuredContent, and no truncation or continuation marker as the last line of a text (words inside the payload do not count).",
        why: "The client refuses or silently cuts the result, and the model has no way to ask for the rest.",
        fix: "return a page that fits with a `nextCursor` (or say `truncated` and how to get more)",
        about_results: true,
    },
    Rule {
        id: "long-description",
        severity: "warning",
        title: "Tool description over 500 tokens",
        checks: "A tool's description is longer than 500 tokens (primary tokenizer). The message names the sentence a cut to 500 tokens would end with, the `max_description_chars` that makes the proxy cut there, and the tokens per turn the cut saves.",
        why: "Descriptions are sent on every turn of every conversation that mounts the server: the schema tax.",
        fix: "keep the description to what the tool does and when to use it; move details into parameter descriptions",
        about_results: false,
    },
    Rule {
        id: "schema-dwarfs-description",
        severity: "info",
        title: "Input schema far larger than the description",
        checks: "A tool's input schema is over 300 tokens and more than 10 times its description.",
        why: "Large schemas (long enums, nested definitions, repeated descriptions) cost every turn, and a model picks tools by their description, which is here the small part.",
        fix: "trim the schema (shorter enums, shared definitions, fewer optional fields) and say what the tool is for",
        about_results: false,
    },
    Rule {
        id: "data-uri-in-tools-list",
        severity: "warning",
        title: "Inline data: URI (icon or image) inside tools/list",
        checks: "A tool definition contains a data:image/ or data:audio/ URI (base64 inline).",
        why: "Clients that forward the whole definition pay thousands of tokens per turn for an icon.",
        fix: "serve icons by https URL instead of inline base64",
        about_results: false,
    },
    Rule {
        id: "structured-duplicate",
        severity: "warning",
        title: "structuredContent repeats the text content",
        checks: "A probe result's structuredContent carries the same data as one of its text blocks.",
        why: "Clients that show the model both pay for the same data twice.",
        fix: "keep structuredContent and make the text block a short summary of it",
        about_results: true,
    },
    Rule {
        id: "unstable-tools-list",
        severity: "warning",
        title: "tools/list differs between two calls",
        checks: "Two tools/list calls in the same session returned different bytes (another order, or changing descriptions).",
        why: "Prompt caching needs the tool definitions byte for byte the same on every turn; a reordered list makes every turn a cache miss.",
        fix: "return the tools in a fixed order with fixed descriptions",
        about_results: false,
    },
    Rule {
        id: "cursor-ignored",
        severity: "error",
        title: "The server ignores the pagination cursor",
        checks: "tools/list asked with the server's own nextCursor returned the same page again.",
        why: "Clients that follow the cursor loop or see duplicate tools; tools past the first page are unreachable.",
        fix: "honour `cursor` in tools/list, or send no nextCursor",
        about_results: false,
    },
    Rule {
        id: "too-many-tools",
        severity: "warning",
        title: "More tools than a client mounts",
        checks: "The server alone offers more tools than a client's limit (Cursor about 40, VS Code 128).",
        why: "Clients drop or refuse the tools past their limit, and every tool adds to the schema tax.",
        fix: "split the server by task or let users enable tool groups",
        about_results: false,
    },
    Rule {
        id: "schema-meta-keys",
        severity: "info",
        title: "`$schema` or `$comment` in an input schema",
        checks: "An input schema carries `$schema` (where removing it keeps the meaning under JSON Schema 2020-12, the dialect MCP assumes without one) or `$comment` anywhere.",
        why: "They are for validators and maintainers; a model reads them on every turn for nothing. Measured: the tokens per turn the model view loses when they go.",
        fix: "drop `$schema` and `$comment` from tool schemas (`proxy --lean-schemas` does it for you)",
        about_results: false,
    },
    Rule {
        id: "title-repeats-name",
        severity: "info",
        title: "Schema titles that repeat the property's name",
        checks: "A `title` inside an input schema says the name of the property it describes (or the tool's, at the root) again, compared without case, `_`, `-`, `.` and spaces. Only keyword positions count: a property named `title` is a property.",
        why: "Generated schemas (pydantic) add `\"title\": \"Owner\"` to `owner`; the model learns nothing from it, every turn.",
        fix: "drop titles that repeat names (pydantic: `model_config = {\"json_schema_extra\": ...}` or a schema generator without titles; `proxy --lean-schemas`)",
        about_results: false,
    },
    Rule {
        id: "null-default",
        severity: "info",
        title: "`default: null` in an input schema",
        checks: "A subschema has `\"default\": null`.",
        why: "An optional property without a default already means the same to a model; `default` never decides validity.",
        fix: "drop `default: null` (`proxy --lean-schemas`)",
        about_results: false,
    },
    Rule {
        id: "repeated-subtree",
        severity: "info",
        title: "The same subschema repeated where one `$defs` entry would do",
        checks: "A subschema (at least 40 bytes of compact JSON, with no `$ref`, `$id` or anchor inside) occurs more than once; the saving is measured by moving each to `$defs` and pointing at it with `$ref`, largest saving first.",
        why: "Each copy is paid every turn. JSON Schema 2020-12, which the MCP revision of 2026-07-28 names as the default dialect, resolves `$ref` to `#/$defs/...`; some clients inline references again, so check yours.",
        fix: "define the shared shape once under `$defs` and refer to it with `$ref`",
        about_results: false,
    },
    Rule {
        id: "list-dwarfs-tool",
        severity: "warning",
        title: "An enum or examples list dwarfs the rest of the tool",
        checks: "The largest `enum` or `examples` list in an input schema is at least 100 tokens and at least half the tool's model tokens. The saving is that of dropping it: for examples the fix, for an enum the most a shorter one can save.",
        why: "A 300-value enum of locales or models is read every turn; a model usually needs the kind of value, not all of them.",
        fix: "take a free-text value and describe its form in one line, or keep only common values; drop long example lists",
        about_results: false,
    },
    Rule {
        id: "heavy-output-schema",
        severity: "info",
        title: "A heavy outputSchema (wire cost, not model cost)",
        checks: "A tool's `outputSchema` is over 1,000 tokens.",
        why: "Clients receive it with every tools/list and validate results with it, but do not show it to the model: it costs bytes, parse time and cache space, not context. Reported as wire tokens.",
        fix: "describe the result's shape at the depth clients validate; share subtrees with `$defs`",
        about_results: false,
    },
];

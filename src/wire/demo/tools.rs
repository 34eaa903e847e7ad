//! The demo server's tool definitions, as a real server would declare them.

use serde_json::{json, Value};

/// Tools per tools/list page, so clients must follow `nextCursor`.
pub const TOOLS_PAGE_SIZE: usize = 5;

/// Every tool, in list order.
pub fn tool_definitions() -> Vec<Value> {
    vec![
        json!({
            "name": "scrape_as_markdown",
            "title": "Scrape a web page as Markdown",
            "description": "Scrape a single web page and return its full content converted to Markdown, including navigation, images and links. Use this when you need the complete text of a page. Works with JavaScript-heavy pages and bypasses most bot detection. The result is not truncated.",
            "inputSchema": {"type": "object", "properties": {
                "url": {"type": "string", "format": "uri", "description": "The URL of the page to scrape"},
                "include_images": {"type": "boolean", "default": true, "description": "Keep images (as data URIs when the page inlines them)"}
            }, "required": ["url"], "additionalProperties": false},
            "annotations": {"readOnlyHint": true, "openWorldHint": true}
        }),
        json!({
            "name": "browser_snapshot",
            "title": "Page accessibility snapshot",
            "description": "Capture an accessibility snapshot of the current page, this is better than screenshot. Returns the full ARIA tree with element references that other browser tools accept.",
            "inputSchema": {"type": "object", "properties": {
                "url": {"type": "string", "description": "Navigate here first when given"}
            }, "additionalProperties": false},
            "annotations": {"readOnlyHint": true}
        }),
        json!({
            "name": "search_code",
            "description": "Search for code across all GitHub repositories using GitHub's code search syntax (e.g. `fetchUser language:typescript org:acme`). Returns the raw search API response with full repository objects for every match.",
            "inputSchema": {"type": "object", "properties": {
                "q": {"type": "string", "description": "Search query using GitHub code search syntax"},
                "sort": {"type": "string", "enum": ["indexed"], "description": "Sort field"},
                "order": {"type": "string", "enum": ["asc", "desc"], "description": "Sort order"},
                "per_page": {"type": "integer", "minimum": 1, "maximum": 100, "default": 100, "description": "Results per page (max 100)"},
                "page": {"type": "integer", "minimum": 1, "description": "Page number"}
            }, "required": ["q"]},
            "annotations": {"readOnlyHint": true, "openWorldHint": true}
        }),
        json!({
            "name": "list_pull_requests",
            "description": "List pull requests in a GitHub repository. Returns every field of every pull request, including the full head and base repository objects.",
            "inputSchema": {"type": "object", "properties": {
                "owner": {"type": "string", "description": "Repository owner"},
                "repo": {"type": "string", "description": "Repository name"},
                "state": {"type": "string", "enum": ["open", "closed", "all"], "default": "open"},
                "head": {"type": "string", "description": "Filter by head user or head organization and branch name"},
                "base": {"type": "string", "description": "Filter by base branch name"},
                "sort": {"type": "string", "enum": ["created", "updated", "popularity", "long-running"]},
                "direction": {"type": "string", "enum": ["asc", "desc"]},
                "per_page": {"type": "integer", "minimum": 1, "maximum": 100, "default": 30},
                "page": {"type": "integer", "minimum": 1}
            }, "required": ["owner", "repo"]},
            "annotations": {"readOnlyHint": true, "openWorldHint": true}
        }),
        json!({
            "name": "read_file",
            "description": "Read the complete contents of a file from the workspace. Returns the file as an embedded resource with its MIME type.",
            "inputSchema": {"type": "object", "properties": {
                "path": {"type": "string", "description": "Path of the file, relative to the workspace root"}
            }, "required": ["path"]},
            "annotations": {"readOnlyHint": true}
        }),
        json!({
            "name": "take_screenshot",
            "description": "Take a screenshot of the current page as a PNG image.",
            "inputSchema": {"type": "object", "properties": {
                "width": {"type": "integer", "default": 1280, "minimum": 16, "maximum": 4096},
                "height": {"type": "integer", "default": 800, "minimum": 16, "maximum": 4096},
                "full_page": {"type": "boolean", "default": false}
            }},
            "annotations": {"readOnlyHint": true}
        }),
        json!({
            "name": "get_forecast",
            "title": "Hourly weather forecast",
            "description": "Get the weather forecast for a city: current conditions and 24 hourly forecasts.",
            "inputSchema": {"type": "object", "properties": {
                "city": {"type": "string", "description": "City name, e.g. Lisbon"},
                "units": {"type": "string", "enum": ["metric", "imperial"], "default": "metric"}
            }, "required": ["city"]},
            "outputSchema": {"type": "object", "properties": {
                "city": {"type": "string"}, "country": {"type": "string"}, "timezone": {"type": "string"},
                "current": {"type": "object"}, "hourly": {"type": "array", "items": {"type": "object"}}
            }, "required": ["city", "hourly"]},
            "annotations": {"readOnlyHint": true, "idempotentHint": true}
        }),
        json!({
            "name": "list_tickets",
            "description": "List support tickets, newest first. Paginated: pass `cursor` from the previous page's `next_cursor`.",
            "inputSchema": {"type": "object", "properties": {
                "cursor": {"type": "string", "description": "Opaque cursor from a previous page"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10}
            }},
            "annotations": {"readOnlyHint": true}
        }),
        json!({
            "name": "get_time",
            "description": "Current server time (a fixed demo clock) in ISO 8601.",
            "inputSchema": {"type": "object", "properties": {}},
            "annotations": {"readOnlyHint": true, "idempotentHint": true}
        }),
        json!({
            "name": "create_ticket",
            "description": "Create a support ticket.",
            "inputSchema": {"type": "object", "properties": {
                "title": {"type": "string"}, "body": {"type": "string"},
                "priority": {"type": "string", "enum": ["low", "normal", "high", "urgent"]}
            }, "required": ["title"]},
            "annotations": {"readOnlyHint": false, "destructiveHint": false}
        }),
        json!({
            "name": "download_archive",
            "description": "Download a build artifact as a binary blob (an embedded resource).",
            "inputSchema": {"type": "object", "properties": {
                "name": {"type": "string", "description": "Artifact name"}
            }, "required": ["name"]},
            "annotations": {"readOnlyHint": true}
        }),
        json!({
            "name": "list_docs",
            "description": "List documentation pages as resource links the client can read on demand.",
            "inputSchema": {"type": "object", "properties": {}},
            "annotations": {"readOnlyHint": true}
        }),
        json!({
            "name": "run_query",
            "description": "Run a read-only SQL query against the demo analytics database.",
            "inputSchema": {"type": "object", "properties": {
                "sql": {"type": "string", "description": "A SELECT statement"}
            }, "required": ["sql"]},
            "annotations": {"readOnlyHint": true}
        }),
    ]
}

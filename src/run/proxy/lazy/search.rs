//! Finding tools by what they do: BM25 over each tool's name, title, description and parameter
//! names and descriptions (fields weighted, the name most), with an inverted index so a query
//! touches only the tools that share a term with it. Names are split where a reader splits them
//! (`get_issue`, `listPullRequests`, `browser-take-screenshot`), words are lowercased and
//! lightly stemmed, and common English words are not terms.

use std::collections::HashMap;

use serde_json::Value;

/// BM25's usual constants.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// How much each field's score counts; a parameter's description counts this much of a term
/// in the parameters field.
const NAME: f64 = 2.0;
const TITLE: f64 = 1.0;
const DESCRIPTION: f64 = 1.0;
const PARAM_NAME: f64 = 0.3;
const PARAM_DESCRIPTION: f64 = 0.5;

const STOP: &[&str] = &[
    "a", "an", "the", "of", "to", "for", "in", "on", "and", "or", "with", "by", "from", "at", "is",
    "are", "be", "this", "that", "it", "its", "as", "me", "my", "i", "you", "your", "we", "can",
    "will", "do", "does", "some", "any", "all", "into", "use", "using", "used", "tool", "want",
    "need", "please", "how", "what", "which", "when", "where", "about", "if", "not",
];

/// The words of `text` as search terms.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    let flush = |word: &mut String, out: &mut Vec<String>| {
        if !word.is_empty() {
            let w = canonical(stem(&word.to_lowercase()));
            if !STOP.contains(&w.as_str()) && !w.is_empty() {
                out.push(w);
            }
            word.clear();
        }
    };
    for c in text.chars() {
        if c.is_alphanumeric() {
            // camelCase splits before an upper-case letter that follows a lower-case one
            if c.is_uppercase() && prev_lower {
                flush(&mut word, &mut out);
            }
            word.push(c);
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
        } else {
            flush(&mut word, &mut out);
            prev_lower = false;
        }
    }
    flush(&mut word, &mut out);
    out
}

/// A light suffix stemmer: plurals and the commonest verb endings, so "files" finds `file`,
/// "listing" `list`, "created" `create`.
fn stem(w: &str) -> String {
    let n = w.chars().count();
    if n <= 3 || !w.is_ascii() {
        return w.to_string();
    }
    for (suffix, keep) in [
        ("ies", "y"),
        ("sses", "ss"),
        ("ing", ""),
        ("ed", ""),
        ("es", ""),
        ("s", ""),
    ] {
        if let Some(root) = w.strip_suffix(suffix) {
            if root.len() >= 3 && !(suffix == "s" && root.ends_with('s')) {
                let root = format!("{root}{keep}");
                // "creat" + e: undo a dropped silent e the same way for the tool and the query
                return root.trim_end_matches('e').to_string();
            }
        }
    }
    w.trim_end_matches('e').to_string()
}

/// Abbreviations and their words, one spelling for both (applied to tools and queries alike):
/// `mysql_server_param_get` is found by "parameter", `get-env` by "environment".
const ABBREVIATIONS: &[(&str, &str)] = &[
    ("param", "parameter"),
    ("arg", "argument"),
    ("env", "environment"),
    ("config", "configuration"),
    ("conf", "configuration"),
    ("db", "databas"),
    ("dir", "directory"),
    ("repo", "repository"),
    ("js", "javascript"),
    ("info", "information"),
    ("msg", "messag"),
    ("img", "imag"),
    ("doc", "document"),
    ("auth", "authenticat"),
    ("org", "organization"),
    ("pr", "pull"),
];

/// A stemmed word in its one spelling ([`ABBREVIATIONS`]).
fn canonical(w: String) -> String {
    match ABBREVIATIONS.iter().find(|(short, _)| *short == w) {
        Some((_, long)) => (*long).to_string(),
        None => w,
    }
}

/// Words a query says for what tool names and descriptions say otherwise (each maps to terms
/// added to the query at a lower weight): "read a file" finds `get_file_contents`.
const SYNONYMS: &[(&str, &[&str])] = &[
    ("read", &["get", "content", "show"]),
    ("fetch", &["get", "download"]),
    ("show", &["get", "list", "view", "read"]),
    ("view", &["get", "show"]),
    ("look", &["get", "list", "view", "search"]),
    ("find", &["search", "list"]),
    ("lookup", &["search", "get"]),
    ("delet", &["remov"]),
    ("remov", &["delet"]),
    ("mak", &["creat"]),
    ("new", &["creat"]),
    ("add", &["creat"]),
    ("edit", &["updat", "modify"]),
    ("chang", &["updat", "edit", "diff"]),
    ("modify", &["updat", "edit"]),
    ("pr", &["pull", "request"]),
    ("folder", &["directory", "list"]),
    ("me", &["authenticat", "user", "profil"]),
    ("am", &["authenticat", "user", "profil"]),
    ("sum", &["add"]),
    ("picture", &["imag", "screenshot"]),
    ("photo", &["imag", "screenshot"]),
    ("captur", &["screenshot", "snapshot"]),
    ("webpag", &["page", "browser"]),
    ("websit", &["page", "browser", "url"]),
    // what a user says for what an API calls it
    ("copy", &["fork", "duplicat"]),
    ("bug", &["issue", "write"]),
    ("go", &["navigate"]),
    ("visit", &["navigate"]),
    ("know", &["search", "read", "node"]),
    ("history", &["log", "list", "commit"]),
    ("readm", &["file", "content"]),
    ("upload", &["push"]),
    ("newest", &["latest"]),
    ("function", &["code"]),
    ("defin", &["code", "search"]),
    ("people", &["user"]),
    ("person", &["user", "entity"]),
    ("approv", &["review"]),
    ("button", &["click"]),
    ("hit", &["press", "key"]),
    ("error", &["consol", "messag"]),
    ("javascript", &["evaluat", "cod", "run"]),
    ("script", &["evaluat", "cod", "run"]),
    ("pick", &["select"]),
    ("choos", &["select"]),
    ("dropdown", &["select", "option"]),
    ("popup", &["dialog"]),
    ("confirm", &["dialog"]),
    ("alert", &["dialog"]),
    ("smaller", &["resiz"]),
    ("bigger", &["resiz"]),
    ("window", &["resiz", "tab"]),
    ("shut", &["clos"]),
    ("quit", &["clos"]),
    ("mouse", &["hover"]),
    ("accessibility", &["snapshot"]),
    ("txt", &["text"]),
    ("png", &["imag", "media"]),
    ("jpg", &["imag", "media"]),
    ("open", &["read", "get"]),
    ("several", &["multipl"]),
    ("three", &["multipl"]),
    ("save", &["writ"]),
    ("replac", &["edit"]),
    ("big", &["siz"]),
    ("hierarchy", &["tree"]),
    ("renam", &["mov"]),
    ("modified", &["information", "status"]),
    ("unstag", &["reset"]),
    ("switch", &["checkout"]),
    ("compar", &["diff"]),
    ("remember", &["creat", "observation", "entity"]),
    ("record", &["creat", "relation"]),
    ("fact", &["observation"]),
    ("forget", &["delet"]),
    ("dump", &["read", "graph"]),
    ("link", &["relation"]),
    ("number", &["sum"]),
    ("repeat", &["echo"]),
    ("variabl", &["environment"]),
    ("small", &["tiny"]),
    ("compress", &["gzip", "zip"]),
    ("slow", &["long", "running"]),
];
/// The synonyms of a query term, keys and terms spelled as [`terms`] spells words (stemmed,
/// abbreviations written out), so the table can be written in plain words.
fn synonyms(term: &str) -> &'static [String] {
    static TABLE: std::sync::LazyLock<HashMap<String, Vec<String>>> =
        std::sync::LazyLock::new(|| {
            let mut t: HashMap<String, Vec<String>> = HashMap::new();
            for (k, more) in SYNONYMS {
                let spelled = |w: &str| canonical(stem(w));
                let e = t.entry(spelled(k)).or_default();
                for m in more.iter() {
                    let m = spelled(m);
                    if !e.contains(&m) {
                        e.push(m);
                    }
                }
            }
            t
        });
    TABLE.get(term).map_or(&[], Vec::as_slice)
}

/// The weight of a synonym's terms, against the query's own.
const SYNONYM_WEIGHT: f64 = 0.4;

/// The fields of a tool, in the order of [`WEIGHTS`].
const FIELDS: usize = 4;
const WEIGHTS: [f64; FIELDS] = [NAME, TITLE, DESCRIPTION, PARAM_NAME];

/// The index over a list of tool definitions: per field, BM25 with its own length
/// normalisation, the fields' scores weighted and added (BM25F's simple form).
#[derive(Debug, Default)]
pub struct ToolIndex {
    /// term -> (tool, frequency in each field)
    postings: HashMap<String, Vec<(usize, [f64; FIELDS])>>,
    lengths: Vec<[f64; FIELDS]>,
    average: [f64; FIELDS],
    count: usize,
}

impl ToolIndex {
    pub fn new(tools: &[Value]) -> ToolIndex {
        let mut postings: HashMap<String, Vec<(usize, [f64; FIELDS])>> = HashMap::new();
        let mut lengths = Vec::with_capacity(tools.len());
        for (i, tool) in tools.iter().enumerate() {
            let mut tf: HashMap<String, [f64; FIELDS]> = HashMap::new();
            let mut len = [0.0; FIELDS];
            let mut add = |text: &str, field: usize, weight: f64| {
                for t in terms(text) {
                    tf.entry(t).or_default()[field] += weight;
                    len[field] += weight;
                }
            };
            add(tool["name"].as_str().unwrap_or(""), 0, 1.0);
            add(tool["title"].as_str().unwrap_or(""), 1, 1.0);
            add(tool["annotations"]["title"].as_str().unwrap_or(""), 1, 1.0);
            add(tool["description"].as_str().unwrap_or(""), 2, 1.0);
            if let Some(props) = tool["inputSchema"]["properties"].as_object() {
                for (name, p) in props {
                    add(name, 3, 1.0);
                    add(
                        p["description"].as_str().unwrap_or(""),
                        3,
                        PARAM_DESCRIPTION,
                    );
                }
            }
            lengths.push(len);
            for (term, f) in tf {
                postings.entry(term).or_default().push((i, f));
            }
        }
        let mut average = [0.0; FIELDS];
        for l in &lengths {
            for f in 0..FIELDS {
                average[f] += l[f];
            }
        }
        for a in &mut average {
            *a = (*a / lengths.len().max(1) as f64).max(1.0);
        }
        ToolIndex {
            postings,
            count: lengths.len(),
            lengths,
            average,
        }
    }

    /// The query's terms with their weights: its own at 1, synonyms lower, each once.
    fn query(query: &str) -> Vec<(String, f64)> {
        let mut out: Vec<(String, f64)> = Vec::new();
        let add = |t: String, w: f64, out: &mut Vec<(String, f64)>| match out
            .iter_mut()
            .find(|(e, _)| *e == t)
        {
            Some(e) => e.1 = e.1.max(w),
            None => out.push((t, w)),
        };
        for t in terms(query) {
            for m in synonyms(&t) {
                add(m.clone(), SYNONYM_WEIGHT, &mut out);
            }
            add(t, 1.0, &mut out);
        }
        // a word that stop-listing removed ("me") still counts through its synonyms; every other
        // word's were added above
        for w in query.split(|c: char| !c.is_alphanumeric()) {
            let t = canonical(stem(&w.to_lowercase()));
            if STOP.contains(&t.as_str()) {
                for m in synonyms(&t) {
                    add(m.clone(), SYNONYM_WEIGHT, &mut out);
                }
            }
        }
        out
    }

    /// The best `limit` tools for `query`, best first, with their scores; ties keep list order.
    pub fn search(&self, query: &str, limit: usize) -> Vec<(usize, f64)> {
        let n = self.count as f64;
        let mut scores: HashMap<usize, f64> = HashMap::new();
        for (term, weight) in Self::query(query) {
            let Some(list) = self.postings.get(&term) else {
                continue;
            };
            let df = list.len() as f64;
            let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
            for (doc, tf) in list {
                let mut s = 0.0;
                for f in 0..FIELDS {
                    if tf[f] > 0.0 {
                        let norm = K1 * (1.0 - B + B * self.lengths[*doc][f] / self.average[f]);
                        s += WEIGHTS[f] * tf[f] * (K1 + 1.0) / (tf[f] + norm);
                    }
                }
                *scores.entry(*doc).or_default() += weight * idf * s;
            }
        }
        let mut ranked: Vec<(usize, f64)> = scores.into_iter().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.truncate(limit);
        ranked
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_split_where_a_reader_splits_them() {
        assert_eq!(terms("listPullRequests"), ["list", "pull", "request"]);
        assert_eq!(
            terms("browser_take_screenshot"),
            ["browser", "tak", "screenshot"]
        );
        assert_eq!(terms("Create a new issue"), ["creat", "new", "issu"]);
        assert_eq!(terms("created issues"), ["creat", "issu"]);
        assert_eq!(terms("files"), terms("file"));
    }

    #[test]
    fn the_tool_that_does_it_ranks_first() {
        let tools = vec![
            json!({"name": "read_file", "description": "Read the contents of a file."}),
            json!({"name": "write_file", "description": "Create or overwrite a file."}),
            json!({"name": "list_directory", "description": "List the files in a directory.",
                   "inputSchema": {"properties": {"path": {"description": "the folder"}}}}),
        ];
        let index = ToolIndex::new(&tools);
        assert_eq!(index.search("show me what is in a folder", 3)[0].0, 2);
        assert_eq!(index.search("overwrite file", 3)[0].0, 1);
        assert_eq!(index.search("read contents", 1)[0].0, 0);
        assert!(index.search("zebra", 3).is_empty());
    }

    /// Issue 30's example: "parameter" finds `param` in a name, "read" finds `get`.
    #[test]
    fn an_abbreviated_name_is_found_by_the_word_it_abbreviates() {
        let tools: Vec<_> = [
            (
                "mysql_server_list",
                "List MySQL flexible servers in a resource group.",
            ),
            (
                "mysql_server_param_get",
                "Retrieves a specific parameter of a MySQL server.",
            ),
            (
                "mysql_server_param_set",
                "Sets a specific parameter of a MySQL server to a value.",
            ),
            (
                "postgres_server_param_get",
                "Retrieves a specific parameter of a PostgreSQL server.",
            ),
            (
                "mysql_database_query",
                "Executes a SELECT query on a MySQL database.",
            ),
        ]
        .iter()
        .map(|(n, d)| json!({"name": n, "description": d}))
        .collect();
        let index = ToolIndex::new(&tools);
        assert_eq!(index.search("read one MySQL server parameter", 3)[0].0, 1);
        assert_eq!(terms("get-env"), terms("get environment"));
        assert_eq!(terms("params"), terms("parameter"));
    }
}

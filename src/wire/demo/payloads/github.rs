//! GitHub REST bodies: `search_code` plus the user and repository objects every body embeds.
//!
//! Ids, node ids and the ~45 `*_url` template fields follow GitHub's real shapes, which is
//! what makes these minified JSON payloads so expensive in tokens.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use serde_json::{json, Map, Value};

use super::rng::{fnv1a, identifier_words, iso, title_case, Rng};
use super::words::{DESCRIPTIONS, EPOCH, LOGINS, REPO_NAMES, REPO_URLS, USER_URLS};

/// GitHub's legacy base64 node ids, e.g. `MDQ6VXNlcjE=` for `04:User1`.
pub(super) fn node_id(prefix: &str, id: u64) -> String {
    B64.encode(format!("{prefix}{id}"))
}

pub(super) fn stable_id(key: &str, base: u64) -> u64 {
    base + fnv1a(key) % 90_000_000
}

/// Concatenates `head`, one `key: api + suffix` pair per `spec` item, then `tail`.
fn with_urls(head: Value, api: &str, spec: &str, tail: Value) -> Map<String, Value> {
    let mut map = into_map(head);
    for (key, suffix) in spec.split(' ').filter_map(|kv| kv.split_once('=')) {
        map.insert(key.to_string(), Value::String(format!("{api}{suffix}")));
    }
    map.extend(into_map(tail));
    map
}

pub(super) fn into_map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

pub(super) fn gh_user(login: &str) -> Value {
    let id = stable_id(login, 1_000_000);
    let kind = ["Organization", "User", "User"][(fnv1a(login) % 3) as usize];
    let api = format!("https://api.github.com/users/{login}");
    let head = json!({
        "login": login, "id": id, "node_id": node_id(&format!("04:{kind}"), id),
        "avatar_url": format!("https://avatars.githubusercontent.com/u/{id}?v=4"), "gravatar_id": "",
        "url": api, "html_url": format!("https://github.com/{login}")
    });
    let tail = json!({"type": kind, "user_view_type": "public", "site_admin": false});
    Value::Object(with_urls(head, &api, USER_URLS, tail))
}

/// The "minimal repository" object embedded in search results.
fn repo_object(owner: &str, name: &str, description: &str, fork: bool) -> Map<String, Value> {
    let full = format!("{owner}/{name}");
    let (id, api) = (
        stable_id(&full, 10_000_000),
        format!("https://api.github.com/repos/{full}"),
    );
    let head = json!({
        "id": id, "node_id": node_id("010:Repository", id), "name": name, "full_name": full,
        "private": false, "owner": gh_user(owner), "html_url": format!("https://github.com/{full}"),
        "description": description, "fork": fork, "url": api
    });
    with_urls(head, &api, REPO_URLS, Value::Null)
}

/// The full repository object used in pull request `head`/`base`.
pub(super) fn full_repo(rng: &mut Rng, owner: &str, name: &str, fork: bool) -> Value {
    let mut repo = repo_object(owner, name, rng.pick(DESCRIPTIONS), fork);
    let (stars, forks, open) = (rng.below(20_000), rng.below(3_000), rng.below(400));
    let created = EPOCH - 40_000_000 - rng.below(90_000_000) as u64;
    let topics: Vec<&str> = (0..4)
        .map(|_| rng.pick("api|rust|cli|graphql|sdk"))
        .collect();
    let gh = format!("github.com/{owner}/{name}");
    let extra = json!({
        "created_at": iso(created), "updated_at": iso(EPOCH - rng.below(86_400) as u64),
        "pushed_at": iso(EPOCH - rng.below(3_600) as u64), "git_url": format!("git://{gh}.git"),
        "ssh_url": format!("git@github.com:{owner}/{name}.git"), "clone_url": format!("https://{gh}.git"),
        "svn_url": format!("https://{gh}"), "homepage": format!("https://{name}.dev"),
        "size": rng.below(90_000), "stargazers_count": stars, "watchers_count": stars,
        "language": rng.pick("TypeScript|Rust|Go|Python|Java"), "has_issues": true, "has_projects": true,
        "has_downloads": true, "has_wiki": false, "has_pages": false, "has_discussions": true,
        "forks_count": forks, "mirror_url": null, "archived": false, "disabled": false,
        "open_issues_count": open, "license": {"key": "mit", "name": "MIT License", "spdx_id": "MIT",
            "url": "https://api.github.com/licenses/mit", "node_id": "MDc6TGljZW5zZTEz"},
        "allow_forking": true, "is_template": false, "web_commit_signoff_required": false,
        "topics": topics, "visibility": "public", "forks": forks, "open_issues": open,
        "watchers": stars, "default_branch": "main"
    });
    repo.extend(into_map(extra));
    Value::Object(repo)
}

/// GitHub REST `GET /search/code` response body: {"total_count": N (thousands), "incomplete_results": false, "items": [...]}
/// with `per_page` items (cap 100), each item with name, path, sha, url, git_url, html_url, score and a full `repository` object
/// (id, node_id, name, full_name, private, owner {login, id, node_id, avatar_url, gravatar_id, url, html_url, followers_url, ... ~18 *_url fields, type, site_admin},
/// html_url, description, fork, url and the ~45 `*_url` template fields GitHub returns). Values derive from `query`.
pub fn search_code(query: &str, per_page: usize) -> Value {
    let mut rng = Rng::seeded(query, 3);
    let total = rng.range(1_000, 49_000);
    let items: Vec<Value> = (0..per_page.min(100))
        .map(|_| code_item(&mut rng, query))
        .collect();
    json!({"total_count": total, "incomplete_results": false, "items": items})
}

/// A file name derived from the query in one of several language conventions.
fn code_file_name(rng: &mut Rng, query: &str) -> String {
    let words = identifier_words(query);
    let (snake, first) = (words.join("_"), words[0].as_str());
    let pascal: String = words.iter().map(|w| title_case(w)).collect();
    let camel = format!("{first}{}", pascal.get(first.len()..).unwrap_or_default());
    let (generic, ext) = (
        rng.pick("index|client|api|utils|handlers"),
        rng.pick("ts|js|go"),
    );
    match rng.below(6) {
        0 => format!("{camel}.ts"),
        1 => format!("{snake}.rs"),
        2 => format!("use{pascal}.tsx"),
        3 => format!("{snake}.py"),
        4 => format!("{pascal}Service.java"),
        _ => format!("{generic}.{ext}"),
    }
}

fn code_item(rng: &mut Rng, query: &str) -> Value {
    let (owner, name) = (rng.pick(LOGINS), rng.pick(REPO_NAMES));
    let repo = repo_object(owner, name, rng.pick(DESCRIPTIONS), rng.chance(10));
    let repo_id = repo["id"].as_u64().unwrap_or_default();
    let dir = rng.pick("src|src/api|lib|packages/client/src|app/services|internal/handlers");
    let path = format!("{dir}/{}", code_file_name(rng, query));
    let file = path.rsplit('/').next().unwrap_or_default();
    let (sha, commit) = (rng.hex(40), rng.hex(40));
    let api = format!("https://api.github.com/repositories/{repo_id}");
    json!({
        "name": file, "path": path, "sha": sha, "url": format!("{api}/contents/{path}?ref={commit}"),
        "git_url": format!("{api}/git/blobs/{sha}"),
        "html_url": format!("https://github.com/{owner}/{name}/blob/{commit}/{path}"),
        "repository": repo, "score": 1.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_len(v: &Value) -> usize {
        serde_json::to_string(v).map(|s| s.len()).unwrap_or(0)
    }

    #[test]
    fn search_code_is_deterministic_and_input_sensitive() {
        assert_eq!(search_code("fetchUser", 10), search_code("fetchUser", 10));
        assert_ne!(search_code("fetchUser", 10), search_code("parseConfig", 10));
        assert_eq!(node_id("04:User", 1), "MDQ6VXNlcjE=");
    }

    #[test]
    fn search_code_matches_github_shape() {
        let body = search_code("fetchUser", 100);
        assert!(
            body["total_count"].as_u64().is_some_and(|n| n >= 1_000)
                && body["incomplete_results"] == false
        );
        assert!(
            (380_000..560_000).contains(&json_len(&body)),
            "{} bytes",
            json_len(&body)
        );
        let items = body["items"].as_array().expect("items array");
        assert_eq!(items.len(), 100);
        assert_eq!(
            search_code("fetchUser", 500)["items"]
                .as_array()
                .map(Vec::len),
            Some(100)
        );
        for item in items {
            let keys = ["name", "path", "sha", "url", "git_url", "html_url", "score"];
            assert!(keys.iter().all(|k| item.get(k).is_some()));
            let repo = item["repository"].as_object().expect("repository object");
            assert!(repo.len() >= 45 && repo.keys().filter(|k| k.ends_with("_url")).count() >= 37);
            let owner = repo["owner"].as_object().expect("owner object");
            assert!(
                owner.keys().filter(|k| k.ends_with("_url")).count() >= 11
                    && owner["site_admin"] == false
            );
        }
        assert!(items
            .iter()
            .any(|i| i["name"].as_str().is_some_and(|n| n.starts_with("fetch"))));
    }
}

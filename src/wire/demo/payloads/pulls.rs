//! `list_pull_requests`: GitHub's `GET /repos/{owner}/{repo}/pulls` body.
//!
//! Each pull request carries full user objects, labels, an optional milestone, a CRLF markdown
//! body and `head`/`base` refs that embed whole repository objects, as GitHub returns them.

use serde_json::{json, Map, Value};

use super::github::{full_repo, gh_user, into_map, node_id, stable_id};
use super::rng::{iso, paragraph, slug, sw_sentence, Rng};
use super::words::{EPOCH, LABELS, LOGINS, SW_PARTS, SW_VERBS};

/// GitHub REST `GET /repos/{owner}/{repo}/pulls` body: an array of `count` pull request objects with GitHub's real field set
/// (url, id, node_id, html_url, diff_url, patch_url, issue_url, number, state, locked, title, user{...full user object},
/// body (multi-paragraph markdown), labels[...], milestone, created_at/updated_at/closed_at/merged_at (ISO timestamps, deterministic),
/// merge_commit_sha, assignee(s), requested_reviewers, head{label, ref, sha, user, repo{full repo object}}, base{...}, _links{...},
/// author_association, draft ...). `repo` is "owner/name".
pub fn list_pull_requests(repo: &str, count: usize) -> Value {
    let mut rng = Rng::seeded(repo, 4);
    let (owner, name) = repo.split_once('/').unwrap_or(("acme", repo));
    let base = full_repo(&mut rng, owner, name, false);
    let (mut number, mut created) = (400 + 3 * count as u64 + rng.below(1_500) as u64, EPOCH);
    let pulls = (0..count).map(|_| {
        number -= 1 + rng.below(3) as u64;
        created -= 1_800 + rng.below(180_000) as u64;
        pull_request(&mut rng, &base, number, created)
    });
    Value::Array(pulls.collect())
}

/// A few distinct users, e.g. assignees or requested reviewers.
fn gh_users(rng: &mut Rng) -> Vec<Value> {
    let (skip, take) = (rng.below(18), rng.below(3));
    LOGINS
        .split('|')
        .skip(skip)
        .take(take)
        .map(gh_user)
        .collect()
}

fn pull_request(rng: &mut Rng, base: &Value, number: u64, created: u64) -> Value {
    let full = base["full_name"].as_str().unwrap_or_default();
    let (api, html) = (
        format!("https://api.github.com/repos/{full}"),
        format!("https://github.com/{full}"),
    );
    let (author, id) = (rng.pick(LOGINS), 2_100_000_000 + number * 1_009);
    let updated = (created + 600 + rng.below(400_000) as u64).min(EPOCH);
    let (closed, merged) = (rng.chance(25), rng.chance(80));
    let (kind, verb, part) = (
        rng.pick("fix|feat|chore|docs"),
        rng.pick(SW_VERBS),
        rng.pick(SW_PARTS),
    );
    let title = format!("{kind}: {verb} {part}");
    let (assignees, reviewers) = (gh_users(rng), gh_users(rng));
    let (skip, take) = (rng.below(8), rng.below(4));
    let labels: Vec<Value> = LABELS
        .split('|')
        .skip(skip)
        .take(take)
        .map(|l| pr_label(l, &api))
        .collect();
    let mut pr = json!({
        "url": format!("{api}/pulls/{number}"), "id": id, "node_id": node_id("011:PullRequest", id),
        "html_url": format!("{html}/pull/{number}"), "diff_url": format!("{html}/pull/{number}.diff"),
        "patch_url": format!("{html}/pull/{number}.patch"), "issue_url": format!("{api}/issues/{number}"),
        "number": number, "state": if closed { "closed" } else { "open" }, "locked": false,
        "title": title, "user": gh_user(author), "body": pr_body(rng, number),
        "created_at": iso(created), "updated_at": iso(updated), "closed_at": closed.then(|| iso(updated)),
        "merged_at": (closed && merged).then(|| iso(updated)), "merge_commit_sha": rng.hex(40),
        "assignee": assignees.first().cloned(), "assignees": assignees, "requested_reviewers": reviewers,
        "requested_teams": [], "labels": labels, "milestone": rng.chance(40).then(|| milestone(rng, &api, &html)),
        "draft": !closed && rng.chance(15),
    });
    let branch: String = format!("{author}/{}", slug(&title))
        .chars()
        .take(48)
        .collect();
    if let Value::Object(pr) = &mut pr {
        pr.extend(pr_refs(rng, base, author, &branch, number));
    }
    pr
}

/// The second half of a pull request: URL templates, `head`, `base`, `_links` and trailers.
fn pr_refs(rng: &mut Rng, base: &Value, author: &str, branch: &str, n: u64) -> Map<String, Value> {
    let api = base["url"].as_str().unwrap_or_default();
    let html = base["html_url"].as_str().unwrap_or_default();
    let name = base["name"].as_str().unwrap_or_default();
    let head_repo = if rng.chance(35) {
        full_repo(rng, author, name, true)
    } else {
        base.clone()
    };
    let (head_sha, base_sha) = (rng.hex(40), rng.hex(40));
    let head_label = format!(
        "{}:{branch}",
        head_repo["owner"]["login"].as_str().unwrap_or_default()
    );
    let base_label = format!(
        "{}:main",
        base["owner"]["login"].as_str().unwrap_or_default()
    );
    let href = |path: String| json!({ "href": format!("{api}{path}") });
    let tail = json!({
        "commits_url": format!("{api}/pulls/{n}/commits"), "review_comments_url": format!("{api}/pulls/{n}/comments"),
        "review_comment_url": format!("{api}/pulls/comments{{/number}}"), "comments_url": format!("{api}/issues/{n}/comments"),
        "statuses_url": format!("{api}/statuses/{head_sha}"),
        "head": {"label": head_label, "ref": branch, "sha": head_sha, "user": head_repo["owner"].clone(), "repo": head_repo},
        "base": {"label": base_label, "ref": "main", "sha": base_sha, "user": base["owner"].clone(), "repo": base.clone()},
        "_links": {
            "self": href(format!("/pulls/{n}")), "html": {"href": format!("{html}/pull/{n}")},
            "issue": href(format!("/issues/{n}")), "comments": href(format!("/issues/{n}/comments")),
            "review_comments": href(format!("/pulls/{n}/comments")), "review_comment": href("/pulls/comments{/number}".into()),
            "commits": href(format!("/pulls/{n}/commits")), "statuses": href(format!("/statuses/{head_sha}"))
        },
        "author_association": rng.pick("CONTRIBUTOR|MEMBER|COLLABORATOR|FIRST_TIME_CONTRIBUTOR|OWNER"),
        "auto_merge": null, "active_lock_reason": null
    });
    into_map(tail)
}

fn pr_label(spec: &str, api: &str) -> Value {
    let mut parts = spec.split(':');
    let (name, color) = (
        parts.next().unwrap_or("bug"),
        parts.next().unwrap_or("ededed"),
    );
    let id = stable_id(spec, 1_000_000_000);
    json!({
        "id": id, "node_id": node_id("05:Label", id), "url": format!("{api}/labels/{}", name.replace(' ', "%20")),
        "name": name, "color": color, "default": name == "bug", "description": parts.next()
    })
}

fn milestone(rng: &mut Rng, api: &str, html: &str) -> Value {
    let (number, id) = (rng.range(3, 40), 9_000_000 + rng.below(900_000) as u64);
    json!({
        "url": format!("{api}/milestones/{number}"), "html_url": format!("{html}/milestone/{number}"),
        "labels_url": format!("{api}/milestones/{number}/labels"), "id": id, "node_id": node_id("09:Milestone", id),
        "number": number, "title": format!("v{}.{}", rng.range(1, 4), rng.range(0, 12)),
        "description": sw_sentence(rng), "creator": gh_user(rng.pick(LOGINS)), "open_issues": rng.below(40),
        "closed_issues": rng.below(120), "state": "open", "created_at": iso(EPOCH - 9_000_000),
        "updated_at": iso(EPOCH - 3_600), "due_on": iso(EPOCH + 2_592_000), "closed_at": null
    })
}

/// A multi-paragraph markdown body with GitHub's CRLF line endings.
fn pr_body(rng: &mut Rng, number: u64) -> String {
    let summary = paragraph(rng, 3, 4, sw_sentence);
    let detail = paragraph(rng, 2, 3, sw_sentence);
    let mut body = format!("## Summary\n\n{summary}\n\n{detail}\n\n## Changes\n\n");
    for _ in 0..rng.range(3, 6) {
        let (verb, part) = (rng.pick(SW_VERBS), rng.pick(SW_PARTS));
        let verb = verb[..1].to_uppercase() + &verb[1..];
        let words: Vec<&str> = part.split(' ').collect();
        let file = words[words.len().saturating_sub(2)..].join("_");
        body.push_str(&format!("- {verb} {part} (`src/{file}.rs`)\n"));
    }
    let (check, issue) = (
        sw_sentence(rng),
        number.saturating_sub(rng.range(1, 60) as u64),
    );
    body.push_str(&format!(
        "\n## Testing\n\n- [x] `cargo test --workspace`\n- [x] {check}\n"
    ));
    body.push_str(&format!(
        "- [ ] Manual check on staging\n\nCloses #{issue}\n"
    ));
    body.replace('\n', "\r\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_len(v: &Value) -> usize {
        serde_json::to_string(v).map(|s| s.len()).unwrap_or(0)
    }

    #[test]
    fn pulls_are_deterministic_and_input_sensitive() {
        assert_eq!(
            list_pull_requests("acme/widgets", 5),
            list_pull_requests("acme/widgets", 5)
        );
        assert_ne!(
            list_pull_requests("acme/widgets", 5),
            list_pull_requests("acme/gadgets", 5)
        );
    }

    #[test]
    fn pull_requests_match_github_shape() {
        let value = list_pull_requests("acme/widgets", 30);
        assert!(
            (450_000..700_000).contains(&json_len(&value)),
            "{} bytes",
            json_len(&value)
        );
        let pulls = value.as_array().expect("array of pulls");
        assert_eq!(pulls.len(), 30);
        let keys = "url id node_id html_url diff_url patch_url issue_url number state locked title user body \
                    created_at updated_at closed_at merged_at merge_commit_sha assignee assignees requested_reviewers \
                    labels milestone draft head base _links author_association";
        for pr in pulls {
            assert!(keys.split_whitespace().all(|k| pr.get(k).is_some()));
            let created = pr["created_at"].as_str().expect("created_at");
            assert!(
                created.len() == 20 && created.ends_with('Z') && created.as_bytes()[10] == b'T'
            );
            assert_eq!(pr["state"] == "open", pr["closed_at"].is_null());
            assert!(pr["body"]
                .as_str()
                .is_some_and(|b| b.contains("## Summary") && b.contains("\r\n\r\n")));
            assert!(
                pr["head"]["repo"]["clone_url"].is_string()
                    && pr["base"]["repo"]["full_name"] == "acme/widgets"
            );
            assert!(
                pr["_links"]["statuses"]["href"].is_string() && pr["user"]["repos_url"].is_string()
            );
        }
        let numbers: Vec<u64> = pulls.iter().filter_map(|p| p["number"].as_u64()).collect();
        assert!(numbers.windows(2).all(|w| w[0] > w[1]));
    }
}

//! Built-in projections for GitHub's heaviest tools (the field shapes of GitHub's REST API, as
//! in the octokit fixtures): keep what a model acts on, drop the dozens of `*_url` templates
//! and the full repository and user objects repeated in every item.

/// (tool name glob, JMESPath expression).
pub const PROJECTIONS: &[(&str, &str)] = &[
    (
        "search_code",
        "{total_count: total_count, incomplete_results: incomplete_results, items: items[].{name: name, path: path, sha: sha, repository: repository.full_name, html_url: html_url}}",
    ),
    (
        "search_issues",
        "{total_count: total_count, incomplete_results: incomplete_results, items: items[].{number: number, title: title, state: state, user: user.login, labels: labels[].name, comments: comments, created_at: created_at, html_url: html_url}}",
    ),
    (
        "list_pull_requests",
        "[].{number: number, title: title, state: state, draft: draft, user: user.login, head: head.ref, base: base.ref, labels: labels[].name, created_at: created_at, updated_at: updated_at, merged_at: merged_at, html_url: html_url}",
    ),
    (
        "list_issues",
        "[].{number: number, title: title, state: state, user: user.login, labels: labels[].name, assignees: assignees[].login, comments: comments, created_at: created_at, updated_at: updated_at, html_url: html_url}",
    ),
    (
        "get_commit",
        "{sha: sha, message: commit.message, author: commit.author, committer: commit.committer, stats: stats, parents: parents[].sha, files: files[].{filename: filename, status: status, additions: additions, deletions: deletions, changes: changes}, html_url: html_url}",
    ),
    (
        "list_commits",
        "[].{sha: sha, message: commit.message, author: commit.author.name, date: commit.author.date, html_url: html_url}",
    ),
];

/// Every field of the GitHub REST objects these projections were written for (issues, pull
/// requests, commits and their files, search results and their envelope): data with any other
/// field at the level a projection builds from is not GitHub's, and is not projected.
pub const KNOWN: &[&str] = &[
    // search envelopes
    "total_count",
    "incomplete_results",
    "items",
    // issues and pull requests
    "url",
    "repository_url",
    "labels_url",
    "comments_url",
    "events_url",
    "html_url",
    "id",
    "node_id",
    "number",
    "title",
    "user",
    "labels",
    "state",
    "locked",
    "assignee",
    "assignees",
    "milestone",
    "comments",
    "created_at",
    "updated_at",
    "closed_at",
    "author_association",
    "active_lock_reason",
    "body",
    "body_html",
    "body_text",
    "reactions",
    "timeline_url",
    "performed_via_github_app",
    "state_reason",
    "draft",
    "pull_request",
    "closed_by",
    "repository",
    "score",
    "text_matches",
    "sub_issues_summary",
    "issue_dependencies_summary",
    "type",
    "parent_issue_url",
    "pinned_comment",
    "diff_url",
    "patch_url",
    "issue_url",
    "commits_url",
    "review_comments_url",
    "review_comment_url",
    "statuses_url",
    "merged_at",
    "merge_commit_sha",
    "requested_reviewers",
    "requested_teams",
    "head",
    "base",
    "_links",
    "auto_merge",
    "merged",
    "mergeable",
    "rebaseable",
    "mergeable_state",
    "merged_by",
    "review_comments",
    "maintainer_can_modify",
    "commits",
    "additions",
    "deletions",
    "changed_files",
    // commits, their git data and files
    "sha",
    "commit",
    "author",
    "committer",
    "parents",
    "stats",
    "files",
    "verification",
    "message",
    "tree",
    "comment_count",
    "filename",
    "status",
    "changes",
    "blob_url",
    "raw_url",
    "contents_url",
    "patch",
    "previous_filename",
    // code search items
    "name",
    "path",
    "git_url",
    "file_size",
    "language",
    "last_modified_at",
    "line_numbers",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::shape::project::Projection;

    #[test]
    fn every_builtin_compiles() {
        for (tool, expr) in PROJECTIONS {
            assert!(Projection::compile(expr).is_ok(), "{tool}");
        }
    }
}

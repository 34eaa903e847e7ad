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

#[cfg(test)]
mod tests {
    use super::super::Projection;
    use super::*;

    #[test]
    fn every_builtin_compiles() {
        for (tool, expr) in PROJECTIONS {
            assert!(Projection::compile(expr).is_ok(), "{tool}");
        }
    }
}

//! `file_text`: a whole source file (Rust or TypeScript) or a server log, as a file-reading
//! tool returns it.
//!
//! Source files expand entity templates until [`CODE_TARGET_BYTES`]; logs are access, cache,
//! slow-query and error lines (with stack traces) until [`LOG_TARGET_BYTES`].

use super::rng::{doc_sentence, identifier_words, iso, Rng};
use super::words::{ENTITIES, EPOCH, LOG_ERRORS, STATUSES, USER_AGENTS};

/// Size at which a generated source file stops adding entities (~25k tokens).
const CODE_TARGET_BYTES: usize = 104_000;
/// Size at which a generated log stops adding lines.
const LOG_TARGET_BYTES: usize = 66_000;

const RUST_HEADER: &str =
    "//! HTTP handlers and domain types for the `$s` module.\n//!\n//! $D $D\n
use std::collections::HashMap;\nuse std::sync::Arc;\n\nuse axum::extract::{Path, Query, State};
use axum::Json;\nuse chrono::{DateTime, Utc};\nuse serde::{Deserialize, Serialize};
use tracing::{debug, info, instrument, warn};\nuse uuid::Uuid;\n\nuse crate::error::ApiError;
use crate::pagination::{Page, PageRequest};\nuse crate::state::{AppState, RequestContext};\n\n";
const RUST_ENTITY: &str = r#"/// Identifier of a [`$N`].
pub type $NId = Uuid;

/// A `$N` as stored in the primary database.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct $N {
    pub id: $NId,
    /// $D
    pub owner_id: UserId,
    pub status: $NStatus,
    /// $D
    pub labels: Vec<String>,
    pub metadata: HashMap<String, String>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum $NStatus {
    Pending,
    Active,
    Archived,
}

#[derive(Debug, thiserror::Error)]
pub enum $NError {
    #[error("$s {0} was not found")]
    NotFound($NId),
    #[error("cannot move $s from {from:?} to {to:?}")]
    InvalidTransition { from: $NStatus, to: $NStatus },
}

impl $N {
    /// $D
    pub fn activate(&mut self, now: DateTime<Utc>) -> Result<(), $NError> {
        match self.status {
            $NStatus::Pending => {
                self.status = $NStatus::Active;
                self.updated_at = now;
                Ok(())
            }
            other => Err($NError::InvalidTransition { from: other, to: $NStatus::Active }),
        }
    }
}

/// `GET /api/v1/$ss/:id`. $D
#[instrument(skip(state), fields(request_id = %ctx.request_id))]
pub async fn get_$s(
    State(state): State<Arc<AppState>>,
    ctx: RequestContext,
    Path(id): Path<$NId>,
) -> Result<Json<$N>, ApiError> {
    let cache_key = format!("$s:{id}:v$n");
    if let Some(hit) = state.cache.read().await.get(&cache_key).cloned() {
        debug!(%id, "cache hit for $s");
        return Ok(Json(serde_json::from_value(hit)?));
    }
    let value = state.$s_repo.get(id).await?.ok_or(ApiError::NotFound("$s"))?;
    info!(%id, status = ?value.status, "loaded $s");
    Ok(Json(value))
}

/// `GET /api/v1/$ss`. $D
pub async fn list_$ss(
    State(state): State<Arc<AppState>>,
    ctx: RequestContext,
    Query(page): Query<PageRequest>,
) -> Result<Json<Page<$N>>, ApiError> {
    if page.limit > $n {
        warn!(limit = page.limit, "clamping $s page size");
    }
    Ok(Json(state.$s_repo.list(ctx.user_id, page.clamped($n)).await?))
}

"#;
const TS_HEADER: &str =
    "/**\n * $D\n * $D\n */\nimport { ApiError, HttpClient, Logger } from \"../lib/http\";
import type { ListParams, Page } from \"../lib/pagination\";\n\n";
const TS_ENTITY: &str = r#"/** $D */
export interface $N {
  id: string;
  ownerId: string;
  status: "pending" | "active" | "archived";
  labels: string[];
  updatedAt?: string;
}

export class $NService {
  private readonly cache = new Map<string, { value: $N; expiresAt: number }>();

  constructor(private readonly http: HttpClient, private readonly logger: Logger) {}

  /** $D */
  async get(id: string): Promise<$N> {
    const cached = this.cache.get(id);
    if (cached && cached.expiresAt > Date.now()) {
      return cached.value;
    }
    const res = await this.http.get<$N>(`/api/v1/$ss/${encodeURIComponent(id)}`);
    if (!res.ok) {
      this.logger.warn("failed to load $s", { id, status: res.status, requestId: "$h" });
      throw new ApiError(res.status, `$s ${id} could not be loaded`);
    }
    this.cache.set(id, { value: res.data, expiresAt: Date.now() + $n_000 });
    return res.data;
  }

  /** $D */
  async list(params: ListParams = {}): Promise<Page<$N>> {
    const query = new URLSearchParams({ limit: String(params.limit ?? $n), cursor: params.cursor ?? "" });
    const res = await this.http.get<Page<$N>>(`/api/v1/$ss?${query.toString()}`);
    return { ...res.data, items: res.data.items.map((item) => ({ ...item, labels: [...new Set(item.labels)] })) };
  }
}

"#;

/// Expands a code template: `$N` type name, `$s` snake_case name, `$D` a fresh doc sentence,
/// `$n` a small number, `$h` eight hex digits. Other `$` sequences are copied verbatim.
fn fill(rng: &mut Rng, out: &mut String, template: &str, name: &str) {
    let snake = identifier_words(name).join("_");
    let mut parts = template.split('$');
    out.push_str(parts.next().unwrap_or_default());
    for part in parts {
        let mut chars = part.chars();
        match chars.next() {
            Some('N') => out.push_str(name),
            Some('s') => out.push_str(&snake),
            Some('D') => out.push_str(&doc_sentence(rng)),
            Some('n') => out.push_str(&rng.range(8, 500).to_string()),
            Some('h') => out.push_str(&rng.hex(8)),
            Some(c) => out.extend(['$', c]),
            None => out.push('$'),
        }
        out.push_str(chars.as_str());
    }
}

/// Source code built from entity templates until [`CODE_TARGET_BYTES`] is reached.
fn source_file(rng: &mut Rng, path: &str, header: &str, entity: &str) -> String {
    let mut out = String::with_capacity(CODE_TARGET_BYTES + 8_192);
    let file = path.rsplit('/').next().unwrap_or(path);
    fill(
        rng,
        &mut out,
        header,
        file.split('.').next().unwrap_or("module"),
    );
    let prefixes = [
        "",
        "Pending",
        "Archived",
        "Batch",
        "Scheduled",
        "Remote",
        "Legacy",
        "Shadow",
    ];
    let entities = || ENTITIES.split('|');
    let names = prefixes
        .iter()
        .flat_map(|p| entities().map(move |e| format!("{p}{e}")));
    for name in names {
        if out.len() >= CODE_TARGET_BYTES {
            break;
        }
        fill(rng, &mut out, entity, &name);
    }
    out
}

/// One log event (possibly with a two-frame stack trace) at `millis` since the epoch.
fn log_line(rng: &mut Rng, millis: u64) -> String {
    let ts = format!("{}.{:03}Z", &iso(millis / 1_000)[..19], millis % 1_000);
    let (rid, ms, n) = (rng.hex(16), rng.range(2, 4_000), rng.range(1, 40_000));
    let resource = rng.pick("order|user|invoice|session|webhook|product");
    let path = format!("/api/v1/{resource}s/{}", rng.range(1_000, 99_999));
    let (method, status) = (rng.pick("GET|GET|GET|POST|PUT|DELETE"), rng.pick(STATUSES));
    let (peer, agent) = (
        format!("10.0.{}.{}", n % 8, ms % 250),
        rng.pick(USER_AGENTS),
    );
    let (job, error, cache) = (rng.hex(12), rng.pick(LOG_ERRORS), rng.pick("hit|miss"));
    match rng.below(20) {
        0 => format!(
            "{ts} ERROR worker::sync{{job_id={job} request_id={rid}}}: sync batch failed \
             error=\"{error}\" attempt={}\n    at sync_worker::run_batch (src/worker/sync.rs:214:17)\n    \
             at sync_worker::client::post (src/worker/client.rs:88:9)\n",
            n % 5 + 1
        ),
        1 | 2 => format!(
            "{ts}  WARN db::pool{{request_id={rid}}}: slow query elapsed_ms={ms} statement=\"SELECT * \
             FROM {resource}s WHERE owner_id = $1 ORDER BY updated_at DESC LIMIT 50\"\n"
        ),
        3 | 4 => format!("{ts} DEBUG cache{{request_id={rid}}}: cache {cache} key={path} ttl_s=300\n"),
        _ => format!(
            "{ts}  INFO http::access{{request_id={rid} method={method} path={path}}}: request completed \
             status={status} latency_ms={} bytes={n} peer={peer}:{} user_agent=\"{agent}\"\n",
            ms % 900,
            n + 20_000
        ),
    }
}

/// A text file's content (a realistic Rust or TypeScript source file, or a server log), ~20k-30k cl100k tokens, deterministic from `path`.
/// Use the path's extension to choose: `.rs` Rust, `.ts` TypeScript, `.log` log lines with timestamps/levels/request ids.
/// Any other extension also yields log lines.
pub fn file_text(path: &str) -> String {
    let mut rng = Rng::seeded(path, 5);
    match path.rsplit('.').next() {
        Some("rs") => source_file(&mut rng, path, RUST_HEADER, RUST_ENTITY),
        Some("ts" | "tsx") => source_file(&mut rng, path, TS_HEADER, TS_ENTITY),
        _ => {
            let (mut out, mut millis) = (
                String::with_capacity(LOG_TARGET_BYTES + 1_024),
                EPOCH * 1_000,
            );
            while out.len() < LOG_TARGET_BYTES {
                millis += rng.range(1, 900) as u64;
                out.push_str(&log_line(&mut rng, millis));
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_text_is_deterministic_and_input_sensitive() {
        for path in ["src/server.rs", "app/main.ts", "logs/app.log"] {
            assert_eq!(file_text(path), file_text(path));
            assert_ne!(file_text(path), file_text(&format!("other/{path}")));
        }
    }

    #[test]
    fn file_text_follows_the_extension() {
        let rust = file_text("src/server.rs");
        assert!((104_000..110_000).contains(&rust.len()) && rust.contains("pub async fn get_"));
        let ts = file_text("app/main.ts");
        assert!((104_000..110_000).contains(&ts.len()) && ts.contains("${encodeURIComponent(id)}"));
        let log = file_text("logs/app.log");
        assert!((66_000..67_000).contains(&log.len()));
        let entries = log.lines().filter(|l| !l.starts_with("    at "));
        assert!(entries
            .clone()
            .all(|l| l.starts_with("2025-04-30T") && l.contains("request_id=")));
        assert!(["ERROR", " WARN", " INFO", "DEBUG"]
            .iter()
            .all(|lvl| log.contains(&format!("Z {lvl}"))));
    }

    #[test]
    fn fill_expands_known_placeholders_only() {
        let mut out = String::new();
        fill(&mut Rng(1), &mut out, "$N/$s $x $", "FetchUser");
        assert_eq!(out, "FetchUser/fetch_user $x $");
    }
}

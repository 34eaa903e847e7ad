//! TEMPORARY STUB (to be replaced by the real generators)
use serde_json::{json, Value};
pub fn scrape_markdown(url: &str) -> String {
    format!("# {url}\n").repeat(20000)
}
pub fn accessibility_snapshot(url: &str) -> String {
    format!("- link \"{url}\" [ref=e1]\n").repeat(5000)
}
pub fn search_code(query: &str, per_page: usize) -> Value {
    json!({"total_count": 1000, "items": vec![json!({"name": query}); per_page]})
}
pub fn list_pull_requests(repo: &str, count: usize) -> Value {
    json!(vec![json!({"repo": repo}); count])
}
pub fn file_text(path: &str) -> String {
    format!("// {path}\nfn main() {{}}\n").repeat(2000)
}
pub fn png_image(width: u32, height: u32, _seed: u64) -> Vec<u8> {
    let mut v = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    v.extend_from_slice(&width.to_be_bytes());
    v.extend_from_slice(&height.to_be_bytes());
    v
}
pub fn list_page(offset: usize, limit: usize, total: usize) -> (Vec<Value>, Option<usize>) {
    let end = (offset + limit).min(total);
    (
        (offset..end).map(|i| json!({"id": i})).collect(),
        (end < total).then_some(end),
    )
}
pub fn forecast(city: &str) -> Value {
    json!({"city": city, "hourly": [1,2,3]})
}

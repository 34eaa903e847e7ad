//! Small, well-behaved payloads to compare the costly ones against: a paginated ticket list
//! and a weather forecast (the tool that duplicates structuredContent in a text block).

use serde_json::{json, Value};

use super::rng::{iso, Rng};
use super::words::{CONDITIONS, EPOCH, LOGINS, SW_PARTS};

/// A page of a small, well-behaved paginated list of tickets: items with id, title, status,
/// assignee, updated_at; `total` items overall. Returns the items from `offset` (at most
/// `limit`; a `limit` of 0 counts as 1) and `Some(next_offset)` when more remain.
pub fn list_page(offset: usize, limit: usize, total: usize) -> (Vec<Value>, Option<usize>) {
    let end = offset.saturating_add(limit.max(1)).min(total);
    let items = (offset.min(end)..end).map(ticket).collect();
    (items, (end < total).then_some(end))
}

fn ticket(index: usize) -> Value {
    let mut rng = Rng::seeded(&format!("ticket-{index}"), 6);
    let verb = rng.pick("Fix|Investigate|Document|Refactor|Add metrics to|Speed up|Harden");
    let (part, status) = (
        rng.pick(SW_PARTS),
        rng.pick("open|in_progress|in_review|done"),
    );
    let updated = EPOCH - index as u64 * 3_917 - rng.below(3_600) as u64;
    json!({
        "id": format!("TCK-{}", 1_001 + index), "title": format!("{verb} {part}"), "status": status,
        "assignee": rng.pick(LOGINS), "updated_at": iso(updated)
    })
}

/// `lo` plus a random number of tenths below `span`, e.g. `21.4`.
fn tenths(rng: &mut Rng, lo: f64, span: usize) -> f64 {
    ((lo * 10.0).round() + rng.below(span) as f64) / 10.0
}

/// Weather-like small structured record (for a tool that returns structuredContent duplicated in a text block):
/// an object with ~15 fields incl. a nested array of 24 hourly forecasts. Deterministic from `city`.
pub fn forecast(city: &str) -> Value {
    let mut rng = Rng::seeded(city, 7);
    let (base, day) = (tenths(&mut rng, 6.0, 220), &iso(EPOCH)[..10]);
    let mut hour = |h: u32| {
        let swing = 5.0 * ((f64::from(h) - 15.0) / 24.0 * std::f64::consts::TAU).cos();
        json!({
            "time": format!("{day}T{h:02}:00"), "temperature_c": tenths(&mut rng, base + swing, 10),
            "precipitation_probability_pct": rng.below(60), "wind_kph": tenths(&mut rng, 5.0, 250),
            "conditions": rng.pick(CONDITIONS)
        })
    };
    let hourly: Vec<Value> = (0..24).map(&mut hour).collect();
    let now = hourly[8]["temperature_c"].as_f64().unwrap_or(base);
    json!({
        "city": city, "station_id": format!("WX-{}", rng.hex(6).to_uppercase()),
        "latitude": tenths(&mut rng, -70.0, 1_400), "longitude": tenths(&mut rng, -180.0, 3_600),
        "observed_at": iso(EPOCH), "units": "metric", "conditions": rng.pick(CONDITIONS), "temperature_c": now,
        "feels_like_c": tenths(&mut rng, now - 3.0, 30), "humidity_pct": rng.range(35, 95),
        "wind_kph": tenths(&mut rng, 0.0, 400), "wind_direction": rng.pick("N|NE|E|SE|S|SW|W|NW"),
        "pressure_hpa": rng.range(995, 1_030), "uv_index": rng.below(11), "visibility_km": rng.range(4, 20),
        "sunrise": format!("06:{:02}", rng.below(60)), "sunset": format!("20:{:02}", rng.below(60)), "hourly": hourly
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_len(v: &Value) -> usize {
        serde_json::to_string(v).map(|s| s.len()).unwrap_or(0)
    }

    #[test]
    fn lists_are_deterministic_and_input_sensitive() {
        assert_eq!(forecast("Lisbon"), forecast("Lisbon"));
        assert_ne!(forecast("Lisbon"), forecast("Oslo"));
        assert_eq!(list_page(3, 4, 20), list_page(3, 4, 20));
    }

    #[test]
    fn list_page_walks_every_item_once() {
        let (mut offset, mut ids) = (Some(0), Vec::new());
        while let Some(at) = offset {
            let (items, next) = list_page(at, 7, 40);
            assert!(
                items.len() <= 7
                    && items
                        .iter()
                        .all(|i| i["title"].is_string() && i["assignee"].is_string())
            );
            ids.extend(
                items
                    .iter()
                    .filter_map(|i| i["id"].as_str().map(String::from)),
            );
            offset = next;
        }
        ids.dedup();
        assert_eq!(ids.len(), 40);
        assert_eq!(list_page(35, 10, 40).1, None);
        assert_eq!(list_page(50, 10, 40), (Vec::new(), None));
        assert_eq!(list_page(0, 0, 40).1, Some(1));
    }

    #[test]
    fn forecast_is_small_and_structured() {
        let f = forecast("Lisbon");
        assert!(f.as_object().is_some_and(|o| o.len() >= 15) && f["city"] == "Lisbon");
        let hourly = f["hourly"].as_array().expect("hourly array");
        assert_eq!(hourly.len(), 24);
        assert!(hourly
            .iter()
            .all(|h| h["temperature_c"].is_f64() && h["time"].is_string()));
        assert!((2_000..5_000).contains(&json_len(&f)));
    }
}

//! The synthetic results of the lab's own server, one per shape a client may treat differently:
//! many lines, one long line, wide (CJK) characters, a JSON array, a JSON object, text with
//! `structuredContent`, an image. Each is `chars` characters long (the image: about that many
//! base64 characters), deterministic, and made of numbered parts so that a kept head or tail is
//! found where it came from.

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// A shape of tool result.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    PartialOrd,
    Ord,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    Lines,
    OneLine,
    Wide,
    JsonArray,
    JsonObject,
    Structured,
    Image,
}

impl Shape {
    pub const ALL: [Shape; 7] = [
        Shape::Lines,
        Shape::OneLine,
        Shape::Wide,
        Shape::JsonArray,
        Shape::JsonObject,
        Shape::Structured,
        Shape::Image,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Shape::Lines => "lines",
            Shape::OneLine => "one_line",
            Shape::Wide => "wide",
            Shape::JsonArray => "json_array",
            Shape::JsonObject => "json_object",
            Shape::Structured => "structured",
            Shape::Image => "image",
        }
    }

    pub fn parse(name: &str) -> Option<Shape> {
        Shape::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// Words the texts are made of (a mix of short and long, as prose and logs have).
const WORDS: [&str; 16] = [
    "alpha", "budget", "context", "delta", "engine", "forecast", "gateway", "harbor", "index",
    "journal", "kernel", "ledger", "metric", "network", "orbit", "payload",
];

/// The result of shape `shape` at `chars` characters.
pub fn result(shape: Shape, chars: usize) -> Value {
    match shape {
        Shape::Lines => text(&lines(chars, 0)),
        Shape::OneLine => text(&lines(chars, 0).replace('\n', " ")),
        Shape::Wide => text(&wide(chars)),
        Shape::JsonArray => text(&json_items(chars, false)),
        Shape::JsonObject => text(&json_items(chars, true)),
        Shape::Structured => {
            let body = lines(chars, 7);
            let rows: Vec<&str> = body.lines().collect();
            json!({"content": [{"type": "text", "text": lines(chars, 0)}],
                   "structuredContent": {"rows": rows}})
        }
        Shape::Image => image(chars),
    }
}

fn text(t: &str) -> Value {
    json!({"content": [{"type": "text", "text": t}]})
}

/// Numbered lines of words, exactly `chars` characters (the last line cut to fit).
fn lines(chars: usize, seed: usize) -> String {
    let mut out = String::with_capacity(chars + 64);
    let mut n = 0usize;
    while out.len() < chars {
        out += &format!("{:06} ", n + 1);
        for w in 0..7 {
            out += WORDS[(n * 7 + w * 3 + seed) % WORDS.len()];
            out.push(if w == 6 { '\n' } else { ' ' });
        }
        n += 1;
    }
    out.truncate(chars);
    out
}

/// Numbered lines of CJK characters (3 bytes each in UTF-8), exactly `chars` characters.
fn wide(chars: usize) -> String {
    let han: Vec<char> =
        "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可也你"
            .chars()
            .collect();
    let mut out = String::new();
    let mut count = 0;
    let mut n = 0usize;
    while count < chars {
        let line: String = format!("{:06}", n + 1)
            .chars()
            .chain((0..33).map(|i| han[(n * 5 + i) % han.len()]))
            .chain(['\n'])
            .collect();
        for c in line.chars() {
            if count == chars {
                break;
            }
            out.push(c);
            count += 1;
        }
        n += 1;
    }
    out
}

/// A compact JSON array of numbered items (or an object holding it), whole items only, as
/// close to `chars` as whole items allow.
fn json_items(chars: usize, object: bool) -> String {
    let mut items = Vec::new();
    let mut len = if object { 12 } else { 2 };
    let mut n = 0usize;
    loop {
        let item = json!({"id": n + 1, "name": format!("item-{:06}", n + 1),
                          "tags": [WORDS[n % 16], WORDS[(n * 5 + 3) % 16]], "score": (n * 37) % 1000});
        let item_len = item.to_string().len() + 1;
        if len + item_len > chars && !items.is_empty() {
            break;
        }
        len += item_len;
        items.push(item);
        n += 1;
    }
    let body = if object {
        json!({"items": items})
    } else {
        Value::Array(items)
    };
    body.to_string()
}

/// A PNG of noise whose base64 is about `chars` long, as an MCP image block.
fn image(chars: usize) -> Value {
    let side = (((chars * 3 / 4) / 3) as f64).sqrt().max(1.0) as u32;
    let mut pixels = Vec::with_capacity((side * side * 3) as usize);
    let mut x: u32 = 2463534242;
    for _ in 0..side * side * 3 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        pixels.push((x & 0xff) as u8);
    }
    let mut png = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut png, side, side);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header().expect("writing a PNG into memory");
        w.write_image_data(&pixels)
            .expect("writing a PNG into memory");
    }
    let data = base64::engine::general_purpose::STANDARD.encode(&png);
    json!({"content": [{"type": "image", "data": data, "mimeType": "image/png"}]})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(v: &Value) -> &str {
        v["content"][0]["text"].as_str().unwrap()
    }

    #[test]
    fn each_text_shape_has_the_size_asked_for() {
        for chars in [1, 100, 40_000, 123_457] {
            assert_eq!(text_of(&result(Shape::Lines, chars)).len(), chars);
            let one = result(Shape::OneLine, chars);
            assert_eq!(text_of(&one).len(), chars);
            assert!(!text_of(&one).contains('\n'));
            let wide = result(Shape::Wide, chars);
            assert_eq!(text_of(&wide).chars().count(), chars);
        }
        let wide = result(Shape::Wide, 10_000);
        assert!(text_of(&wide).len() > 25_000, "mostly 3-byte characters");
    }

    #[test]
    fn json_shapes_parse_and_stay_within_the_size() {
        for (shape, open) in [(Shape::JsonArray, '['), (Shape::JsonObject, '{')] {
            let t = result(shape, 20_000);
            let t = text_of(&t);
            assert!(t.len() <= 20_000 && t.len() > 19_800, "{}", t.len());
            assert!(t.starts_with(open));
            serde_json::from_str::<Value>(t).unwrap();
        }
    }

    #[test]
    fn structured_content_differs_from_the_text_and_lines_are_unique() {
        let r = result(Shape::Structured, 5_000);
        let text = text_of(&r);
        let rows = r["structuredContent"]["rows"].as_array().unwrap();
        assert!(!text.contains(rows[0].as_str().unwrap()));
        let lines: Vec<&str> = text.lines().collect();
        let unique: std::collections::HashSet<&&str> = lines.iter().collect();
        assert_eq!(unique.len(), lines.len());
    }

    #[test]
    fn an_image_is_a_png_of_about_the_size_asked_for() {
        let r = result(Shape::Image, 40_000);
        let data = r["content"][0]["data"].as_str().unwrap();
        assert!((30_000..50_000).contains(&data.len()), "{}", data.len());
        let png = base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap();
        assert_eq!(&png[1..4], b"PNG");
    }
}

//! The synthetic results of the lab's own server, one per shape a client may treat differently:
//! many lines, many short lines (a line cap under a byte cap), one long line, wide (CJK)
//! characters, compact and pretty JSON arrays and objects, text with `structuredContent`, an
//! image, an embedded text resource, a blob resource, a resource link, and an `isError` result.
//! Each is `chars` characters long (the image and the blob: about that many base64 characters),
//! deterministic, and made of numbered parts so that a kept head or tail is found where it came
//! from.

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// A shape of tool result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    Lines,
    OneLine,
    Wide,
    JsonArray,
    JsonObject,
    Structured,
    Image,
    ShortLines,
    PrettyArray,
    PrettyObject,
    Resource,
    Blob,
    ResourceLink,
    Error,
}

impl Shape {
    pub const ALL: [Shape; 14] = [
        Shape::Lines,
        Shape::OneLine,
        Shape::Wide,
        Shape::JsonArray,
        Shape::JsonObject,
        Shape::Structured,
        Shape::Image,
        Shape::ShortLines,
        Shape::PrettyArray,
        Shape::PrettyObject,
        Shape::Resource,
        Shape::Blob,
        Shape::ResourceLink,
        Shape::Error,
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
            Shape::ShortLines => "short_lines",
            Shape::PrettyArray => "pretty_array",
            Shape::PrettyObject => "pretty_object",
            Shape::Resource => "resource",
            Shape::Blob => "blob",
            Shape::ResourceLink => "resource_link",
            Shape::Error => "error",
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
        Shape::JsonArray => text(&json_items(chars, false, false)),
        Shape::JsonObject => text(&json_items(chars, true, false)),
        Shape::PrettyArray => text(&json_items(chars, false, true)),
        Shape::PrettyObject => text(&json_items(chars, true, true)),
        Shape::ShortLines => text(&short_lines(chars)),
        Shape::Resource => json!({"content": [{"type": "resource", "resource": {
            "uri": "lab://result/lines.txt", "mimeType": "text/plain", "text": lines(chars, 0)}}]}),
        Shape::Blob => json!({"content": [{"type": "resource", "resource": {
            "uri": "lab://result/data.bin", "mimeType": "application/octet-stream",
            "blob": blob(chars)}}]}),
        Shape::ResourceLink => json!({"content": [
            {"type": "text", "text": lines(chars, 0)},
            {"type": "resource_link", "uri": "lab://result/full.txt", "name": "full.txt",
             "mimeType": "text/plain", "description": "The whole result"}]}),
        Shape::Error => {
            json!({"content": [{"type": "text", "text": lines(chars, 0)}], "isError": true})
        }
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

/// Short numbered lines (13 characters each: `000001 alpha` and a line end), so that 2,000
/// lines are 26,000 characters: a line cap acts well under a byte cap. Exactly `chars`
/// characters.
fn short_lines(chars: usize) -> String {
    let mut out = String::with_capacity(chars + 16);
    let mut n = 0usize;
    while out.len() < chars {
        out += &format!("{:06} {:.5}\n", n + 1, WORDS[n % WORDS.len()]);
        n += 1;
    }
    out.truncate(chars);
    out
}

/// The base64 of deterministic bytes, `chars` long rounded down to whole 4-character groups
/// (at least one group).
fn blob(chars: usize) -> String {
    let n = (chars / 4).max(1) * 3;
    let mut x: u32 = 88172645;
    let bytes: Vec<u8> = (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x & 0xff) as u8
        })
        .collect();
    base64::engine::general_purpose::STANDARD.encode(bytes)
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

/// A JSON array of numbered items (or an object holding it), compact or pretty-printed (two
/// spaces, as `JSON.stringify(v, null, 2)` and serde write it), whole items only, as close to
/// `chars` as whole items allow.
fn json_items(chars: usize, object: bool, pretty: bool) -> String {
    let mut items = Vec::new();
    let mut len = match (object, pretty) {
        (false, false) => 2,
        (true, false) => 12,
        (false, true) => 4,
        (true, true) => 21,
    };
    let mut n = 0usize;
    // a pretty item is indented once more inside the object
    let indent = if object { 4 } else { 2 };
    loop {
        let item = json!({"id": n + 1, "name": format!("item-{:06}", n + 1),
                          "tags": [WORDS[n % 16], WORDS[(n * 5 + 3) % 16]], "score": (n * 37) % 1000});
        let item_len = match pretty {
            false => item.to_string().len() + 1,
            true => {
                let p = serde_json::to_string_pretty(&item).expect("a JSON value prints");
                p.len() + (p.lines().count() * indent) + 2
            }
        };
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
    match pretty {
        false => body.to_string(),
        true => serde_json::to_string_pretty(&body).expect("a JSON value prints"),
    }
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
    fn short_lines_pass_2000_lines_under_a_50_kib_byte_cap() {
        let t = result(Shape::ShortLines, 30_000);
        let t = text_of(&t);
        assert_eq!(t.len(), 30_000);
        assert!(t.lines().count() > 2_000, "{}", t.lines().count());
        assert!(t.lines().all(|l| l.len() <= 12));
        assert!(t.starts_with("000001 alpha\n000002 budge\n"));
    }

    #[test]
    fn pretty_json_shapes_are_indented_whole_and_within_the_size() {
        for (shape, open) in [
            (Shape::PrettyArray, "[\n  {"),
            (Shape::PrettyObject, "{\n  \"items\": [\n    {"),
        ] {
            let v = result(shape, 20_000);
            let t = text_of(&v);
            assert!(
                t.len() <= 20_000 && t.len() > 19_500,
                "{shape:?} {}",
                t.len()
            );
            assert!(t.starts_with(open), "{t:.40}");
            let parsed: Value = serde_json::from_str(t).unwrap();
            // the same items as the compact shape of the size the pretty one came to
            assert_eq!(serde_json::to_string_pretty(&parsed).unwrap(), t);
        }
    }

    #[test]
    fn resource_shapes_carry_their_text_or_blob_and_error_is_flagged() {
        let r = result(Shape::Resource, 5_000);
        assert_eq!(r["content"][0]["type"], "resource");
        assert_eq!(
            r["content"][0]["resource"]["text"].as_str().unwrap().len(),
            5_000
        );
        let b = result(Shape::Blob, 5_000);
        let blob = b["content"][0]["resource"]["blob"].as_str().unwrap();
        assert_eq!(blob.len(), 5_000);
        assert!(base64::engine::general_purpose::STANDARD
            .decode(blob)
            .is_ok());
        assert!(b["content"][0]["resource"].get("text").is_none());
        let l = result(Shape::ResourceLink, 2_000);
        assert_eq!(l["content"][1]["type"], "resource_link");
        assert_eq!(text_of(&l).len(), 2_000);
        let e = result(Shape::Error, 2_000);
        assert_eq!(e["isError"], true);
        assert_eq!(text_of(&e).len(), 2_000);
        // every shape has a name that parses back, and results the SDK's types read
        for shape in Shape::ALL {
            assert_eq!(Shape::parse(shape.name()), Some(shape));
            let v = result(shape, 3_000);
            serde_json::from_value::<rmcp::model::CallToolResult>(v).unwrap();
        }
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

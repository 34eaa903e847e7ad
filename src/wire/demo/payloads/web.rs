//! `scrape_markdown`: a shop search page scraped to markdown, the costliest demo payload.
//!
//! Besides the prose it carries what makes real scrapes expensive: nav and footer link farms,
//! inline data-URI thumbnails, signed CDN image URLs, tracking parameters and blank-line runs.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;

use super::png::thumbnail_png;
use super::rng::{paragraph, shop_sentence, signed_cdn_url, slug, title_case, tracked_url, Rng};
use super::words::{BRANDS, COLORS, FEATURES, FOOTER, MODELS, NAV, REVIEWERS, SHOP};

/// A real 1x1 transparent GIF, the classic tracking pixel.
const PIXEL_GIF: &str = "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7";
const SCRAPE_PRODUCTS: usize = 84;
/// The first this-many product listings inline their image as a data URI.
const DATA_URI_IMAGES: usize = 44;

fn url_decode(s: &str) -> String {
    let (bytes, mut out, mut i) = (s.as_bytes(), Vec::new(), 0);
    while i < bytes.len() {
        let hex = s
            .get(i + 1..i + 3)
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 2;
            }
            (b'+', _) => out.push(b' '),
            (b, _) => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The `q=` parameter of `url`, else its last path segment, else "featured deals".
fn query_from_url(url: &str) -> String {
    let mut params = url.split(['?', '&']).skip(1);
    let from_param = params.find_map(|p| p.strip_prefix("q="));
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let from_path = path.rsplit('/').find(|s| !s.is_empty() && !s.contains(':'));
    let raw = from_param.or(from_path).unwrap_or_default();
    let query = url_decode(&raw.replace(['-', '_'], " ")).trim().to_string();
    if query.is_empty() {
        return "featured deals".into();
    }
    query
}

fn link_farm(rng: &mut Rng, out: &mut String, labels: &'static str, prefix: &str) {
    for label in labels.split('|') {
        let url = tracked_url(rng, &format!("{prefix}{}", slug(label)));
        out.push_str(&format!("* [{label}]({url})\n"));
    }
}

/// A web page scraped to markdown, as a scraping MCP server returns it: ~220k-260k cl100k tokens.
/// Headings, paragraphs, product listings with prices and ratings, nav/footer link farms,
/// at least 20 inline data-URI images (`![alt](data:image/png;base64,....)` with 2-8 KB of base64 each)
/// and a few `<img src="data:image/gif;base64,...">` HTML tags, at least 40 links whose URLs are longer than 200 chars
/// (signed CDN image URLs with `&signature=`/`&image_uri=`), at least 30 links carrying tracking params
/// (utm_source, utm_medium, utm_campaign, fbclid, gclid, mc_eid, msclkid), and runs of 3+ blank lines.
/// Content derives from `url` (e.g. a shop search for the query in the URL).
pub fn scrape_markdown(url: &str) -> String {
    let (mut rng, query) = (Rng::seeded(url, 1), query_from_url(url));
    let mut out = String::with_capacity(600_000);
    let title = title_case(&query);
    out.push_str(&format!(
        "# {title} | ShopNorth\n\n[Skip to main content](#main)\n\n"
    ));
    link_farm(&mut rng, &mut out, NAV, "/b/");
    let (results, intro) = (rng.range(1_000, 9_999), shop_sentence(&mut rng));
    out.push_str(&format!(
        "\n\n\n\n[Home]({SHOP}/) › [All Departments]({SHOP}/departments)\n\n"
    ));
    out.push_str(&format!(
        "## Results for \"{query}\"\n\n1-{SCRAPE_PRODUCTS} of {results}. "
    ));
    out.push_str(&format!("{intro}\n\n\n\n"));
    for index in 0..SCRAPE_PRODUCTS {
        product_listing(&mut rng, &mut out, &query, index);
    }
    out.push_str("## Customers who viewed items in your search also viewed\n\n");
    for _ in 0..24 {
        let name = product_name(&mut rng, &query);
        let image = signed_cdn_url(&mut rng, &slug(&name));
        let path = format!("/{}/dp/{}", slug(&name), rng.token(10).to_uppercase());
        let (link, price) = (tracked_url(&mut rng, &path), rng.range(19, 299));
        out.push_str(&format!(
            "* [![{name}]({image})]({link}) {name} · ${price}.99\n"
        ));
    }
    out.push_str("\n\n\n\n## Get to Know Us\n\n");
    link_farm(&mut rng, &mut out, FOOTER, "/help/");
    out.push_str(&format!(
        "\n<img src=\"data:image/gif;base64,{PIXEL_GIF}\" width=\"1\">\n"
    ));
    out.push_str("\n© 1996-2025, ShopNorth.example, Inc. or its affiliates\n");
    out
}

fn product_name(rng: &mut Rng, query: &str) -> String {
    let (brand, model) = (rng.pick(BRANDS), rng.pick(MODELS));
    format!("{brand} {model} {}", title_case(query))
}

fn product_listing(rng: &mut Rng, out: &mut String, query: &str, index: usize) {
    let name = product_name(rng, query);
    let (color, feature) = (rng.pick(COLORS), rng.pick(FEATURES));
    let (slug, asin) = (slug(&name), rng.token(10).to_uppercase());
    let link = tracked_url(rng, &format!("/{slug}/dp/{asin}"));
    out.push_str(&format!("### [{name}, {feature}, {color}]({link})\n\n"));
    let image = if index < DATA_URI_IMAGES {
        let (w, h) = (rng.range(24, 44) as u32, rng.range(24, 44) as u32);
        let png = thumbnail_png(w, h, rng.next_u64());
        format!("data:image/png;base64,{}", B64.encode(png))
    } else {
        signed_cdn_url(rng, &slug)
    };
    out.push_str(&format!("![{name} in {color}]({image})\n\n"));
    let (price, cents, save) = (rng.range(19, 349), rng.below(100), rng.range(5, 40));
    let (list, stars, ratings) = (price + 20, rng.range(30, 49), rng.range(12, 48_000));
    out.push_str(&format!(
        "**${price}.{cents:02}** ~~${list}.99~~ · Save {save}%\n"
    ));
    let (whole, tenth) = (stars / 10, stars % 10);
    out.push_str(&format!(
        "⭐ {whole}.{tenth} out of 5 stars ({ratings} ratings)\n\n"
    ));
    let large = signed_cdn_url(rng, &slug);
    let colors = tracked_url(rng, &format!("/{slug}/colors"));
    out.push_str(&format!(
        "[View larger image]({large}) · [See all colors]({colors})\n\n"
    ));
    product_copy(rng, out);
    if index % 15 == 7 {
        out.push_str(&format!(
            "<img src=\"data:image/gif;base64,{PIXEL_GIF}\" alt=\"\">\n\n"
        ));
    }
    out.push_str("Sponsored · FREE delivery Tue, May 6 · Ships from ShopNorth\n\n\n\n\n");
}

/// Feature bullets, descriptive paragraphs and a quoted review.
fn product_copy(rng: &mut Rng, out: &mut String) {
    for _ in 0..rng.range(3, 5) {
        out.push_str(&format!("- {}\n", rng.pick(FEATURES)));
    }
    for _ in 0..rng.range(2, 3) {
        out.push_str(&format!("\n{}\n", paragraph(rng, 4, 7, shop_sentence)));
    }
    let (quote, reviewer) = (shop_sentence(rng), rng.pick(REVIEWERS));
    out.push_str(&format!(
        "\n> \"{quote}\" — {reviewer}, Verified Purchase\n\n"
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrape_is_deterministic_and_input_sensitive() {
        let (shop, other) = (
            "demo://shop/search?q=wireless+earbuds",
            "demo://shop/search?q=usb+hub",
        );
        assert_eq!(scrape_markdown(shop), scrape_markdown(shop));
        assert_ne!(scrape_markdown(shop), scrape_markdown(other));
    }

    #[test]
    fn scrape_markdown_has_the_costly_shapes() {
        let md = scrape_markdown("demo://shop/search?q=wireless+earbuds");
        assert!((420_000..560_000).contains(&md.len()), "{} bytes", md.len());
        assert!(md.contains("## Results for \"wireless earbuds\""));
        let images: Vec<&str> = md
            .split("(data:image/png;base64,")
            .skip(1)
            .filter_map(|s| s.split(')').next())
            .collect();
        assert!(images.len() >= 20);
        for b64 in images {
            assert!(
                (2_048..=8_192).contains(&b64.len()),
                "{} base64 bytes",
                b64.len()
            );
            assert!(B64
                .decode(b64)
                .expect("valid base64")
                .starts_with(b"\x89PNG\r\n\x1a\n"));
        }
        assert!(md.matches("<img src=\"data:image/gif;base64,").count() >= 3);
        let targets: Vec<&str> = md
            .split("](")
            .skip(1)
            .filter_map(|s| s.split(')').next())
            .collect();
        let signed =
            |u: &&&str| u.len() > 200 && u.contains("&signature=") && u.contains("&image_uri=");
        assert!(targets.iter().filter(signed).count() >= 40);
        let tracked = |u: &&&str| u.contains("utm_source=") && u.contains("utm_campaign=");
        assert!(targets.iter().filter(tracked).count() >= 30);
        for param in [
            "utm_medium=",
            "fbclid=",
            "gclid=",
            "mc_eid=",
            "msclkid=",
            "\n\n\n\n",
        ] {
            assert!(md.contains(param), "missing {param}");
        }
    }

    #[test]
    fn query_comes_from_the_url() {
        assert_eq!(
            query_from_url("demo://shop/search?q=wireless+earbuds&page=2"),
            "wireless earbuds"
        );
        assert_eq!(
            query_from_url("https://x.example/s?k=1&q=usb%20hub"),
            "usb hub"
        );
        assert_eq!(query_from_url("demo://shop"), "shop");
        assert_eq!(query_from_url("demo://shop/"), "shop");
        assert_eq!(url_decode("a%2Fb+c%zz"), "a/b c%zz");
    }
}

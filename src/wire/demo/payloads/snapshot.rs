//! `accessibility_snapshot`: a product page as Playwright MCP's `browser_snapshot` YAML.
//!
//! Deeply nested (a mega menu ten levels down, review replies at depth twelve) with a
//! `[ref=eN]` on every node, like the real tool's output.

use super::rng::{paragraph, shop_sentence, slug, title_case, tracked_url, Rng};
use super::words::{
    BRANDS, COLORS, FEATURES, FOOTER, KINDS, MODELS, NAV, OBJECTS, REVIEWERS, SHOP, SPECS, SUBCATS,
};

/// Writes Playwright-MCP-style YAML lines with increasing `[ref=eN]` ids.
struct Snap {
    out: String,
    refs: u32,
}

impl Snap {
    /// `spec` is a role plus optional attributes (`heading [level=2]`); a trailing `:` means
    /// children follow. Links, buttons and radios get `[cursor=pointer]` like Playwright's.
    fn el(&mut self, depth: usize, spec: &str, name: &str) {
        self.refs += 1;
        let (spec, colon) = spec.strip_suffix(':').map_or((spec, ""), |s| (s, ":"));
        let (role, attrs) = spec.split_once(' ').unwrap_or((spec, ""));
        let mut line = format!("{:indent$}- {role}", "", indent = depth * 2);
        if !name.is_empty() {
            line.push_str(&format!(" \"{}\"", name.replace('"', "'")));
        }
        if !attrs.is_empty() {
            line.push_str(&format!(" {attrs}"));
        }
        line.push_str(&format!(" [ref=e{}]", self.refs));
        if matches!(role, "link" | "button" | "radio") {
            line.push_str(" [cursor=pointer]");
        }
        self.out.push_str(&format!("{line}{colon}\n"));
    }

    /// A node with inline text content, quoted when YAML would need it.
    fn text(&mut self, depth: usize, role: &str, text: &str) {
        self.refs += 1;
        let (indent, id) = (depth * 2, self.refs);
        let text = match text.contains(": ") {
            true => format!("{text:?}"),
            false => text.to_string(),
        };
        self.out
            .push_str(&format!("{:indent$}- {role} [ref=e{id}]: {text}\n", ""));
    }

    fn link(&mut self, depth: usize, text: &str, url: &str, img: Option<&str>) {
        self.el(depth, "link:", text);
        if let Some(alt) = img {
            self.el(depth + 1, "img", alt);
        }
        let indent = depth * 2 + 2;
        self.out.push_str(&format!("{:indent$}- /url: {url}\n", ""));
    }
}

/// A browser accessibility snapshot in Playwright MCP's YAML form (`- generic [ref=e12]:`, `- link "Text" [ref=e40] [cursor=pointer]:`,
/// `  - /url: https://...`, `- img "alt"`, `- heading "..." [level=2] [ref=..]`, `- button`, `- textbox`, lists, rows),
/// deeply nested (depth up to ~12), ~50k-70k cl100k tokens, beginning with a "### Page" header block listing Page URL and title,
/// then "### Snapshot" and a ```yaml fenced block like Playwright MCP's browser_snapshot output.
pub fn accessibility_snapshot(url: &str) -> String {
    let rng = &mut Rng::seeded(url, 2);
    let mut s = Snap {
        out: String::with_capacity(256 * 1024),
        refs: 0,
    };
    let kind = title_case(rng.pick(KINDS));
    let title = format!("{} {} {kind}", rng.pick(BRANDS), rng.pick(MODELS));
    s.out.push_str(&format!(
        "### Page\n- Page URL: {url}\n- Page Title: {title} | ShopNorth\n"
    ));
    s.out.push_str("\n### Snapshot\n```yaml\n");
    s.el(0, "generic [active]:", "");
    snap_header(&mut s, rng);
    s.el(1, "main:", "");
    snap_product(&mut s, rng, &title, &kind);
    snap_details(&mut s, rng, &title);
    snap_reviews(&mut s, rng);
    for heading in [
        "Customers also viewed",
        "Frequently bought together",
        "Related to this item",
    ] {
        snap_carousel(&mut s, rng, heading, &kind);
    }
    s.el(1, "contentinfo:", "");
    s.el(2, "list:", "");
    for label in FOOTER.split('|') {
        let url = format!("{SHOP}/help/{}?ref_=footer_{}", slug(label), rng.hex(6));
        s.el(3, "listitem:", "");
        s.link(4, label, &url, None);
    }
    s.out.push_str("```\n");
    s.out
}

/// Banner with a search box and a mega menu whose links nest ten levels deep.
fn snap_header(s: &mut Snap, rng: &mut Rng) {
    s.el(1, "banner:", "");
    s.link(
        2,
        "ShopNorth home",
        &format!("{SHOP}/ref=nav_logo"),
        Some("ShopNorth"),
    );
    s.el(2, "search:", "");
    s.el(3, "textbox", "Search ShopNorth");
    s.el(3, "button", "Go");
    s.el(2, "navigation:", "Primary");
    s.el(3, "list:", "");
    for dept in NAV.split('|').take(16) {
        s.el(4, "listitem:", "");
        s.el(5, "button [expanded]", dept);
        s.el(5, "generic:", "");
        s.el(6, "generic:", "");
        for _ in 0..3 {
            let column = rng.pick(SUBCATS);
            s.el(7, "heading [level=3]", column);
            s.el(7, "list:", "");
            for _ in 0..4 {
                let label = format!("{} {}", rng.pick(BRANDS), rng.pick(SUBCATS));
                let (node, pos) = (rng.range(1_000, 99_999), rng.range(2, 19));
                let nav_ref = format!("nav_em_{}_0_2_{pos}", slug(dept));
                let url = format!("{SHOP}/s?k={}&rh=n%3A{node}&ref={nav_ref}", slug(&label));
                s.el(8, "listitem:", "");
                s.link(9, &label, &url, rng.chance(30).then_some(column));
            }
        }
    }
}

fn snap_product(s: &mut Snap, rng: &mut Rng, title: &str, kind: &str) {
    s.el(2, "navigation:", "Breadcrumb");
    s.el(3, "list:", "");
    for crumb in ["Electronics", "Shop by Category", kind] {
        let url = format!(
            "{SHOP}/b/{}?node={}",
            slug(crumb),
            rng.range(10_000, 99_999)
        );
        s.el(4, "listitem:", "");
        s.link(5, crumb, &url, None);
    }
    s.el(2, "generic:", "");
    s.el(3, "list:", "Image gallery");
    for i in 1..=8 {
        s.el(4, "listitem:", "");
        s.el(5, "button:", &format!("Image {i} of 8"));
        s.el(6, "img", &format!("{title}, view {i}"));
    }
    s.el(3, "generic:", "");
    s.el(4, "heading [level=1]", title);
    let store = title.split(' ').next().unwrap_or("Brand");
    let store_url = format!("{SHOP}/stores/{store}/{}", rng.hex(8));
    s.link(4, &format!("Visit the {store} Store"), &store_url, None);
    s.el(4, "img", "4.4 out of 5 stars");
    s.text(4, "generic", &format!("${}.99", rng.range(19, 299)));
    s.el(4, "radiogroup:", "Color");
    for color in COLORS.split('|') {
        s.el(5, "radio", color);
    }
    s.el(4, "spinbutton", "Quantity");
    s.el(4, "button", "Add to Cart");
    s.el(4, "button", "Buy Now");
}

/// The "About this item" list and the product information table.
fn snap_details(s: &mut Snap, rng: &mut Rng, title: &str) {
    s.el(2, "list:", "About this item");
    for feature in FEATURES.split('|') {
        s.text(3, "listitem", &format!("{feature}. {}", shop_sentence(rng)));
    }
    s.el(2, "table:", "Product information");
    s.el(3, "rowgroup:", "");
    let (asin, model) = (format!("ASIN={}", rng.token(10)), format!("Model={title}"));
    for row in SPECS.split('|').chain([asin.as_str(), model.as_str()]) {
        let (key, value) = row.split_once('=').unwrap_or((row, ""));
        s.el(4, "row:", "");
        s.text(5, "rowheader", key);
        s.text(5, "cell", value);
    }
}

/// Review list; seller replies nest to depth 12.
fn snap_reviews(s: &mut Snap, rng: &mut Rng) {
    s.el(2, "region:", "Customer reviews");
    s.el(3, "heading [level=2]", "Top reviews from the United States");
    s.el(3, "list:", "");
    for _ in 0..76 {
        let reviewer = rng.pick(REVIEWERS);
        let profile = format!("{SHOP}/gp/profile/amzn1.account.{}", rng.token(28));
        let report = format!("{SHOP}/hz/reviews-render/report/{}", rng.token(14));
        let (stars, day) = (rng.range(1, 5), rng.range(1, 30));
        s.el(4, "listitem:", "");
        s.el(5, "article:", "");
        s.el(6, "generic:", "");
        s.link(7, reviewer, &profile, Some(reviewer));
        s.el(7, "img", &format!("{stars}.0 out of 5 stars"));
        s.el(7, "heading [level=3]", &title_case(rng.pick(OBJECTS)));
        s.text(
            7,
            "generic",
            &format!("Reviewed in the United States on April {day}, 2025"),
        );
        s.text(7, "paragraph", &paragraph(rng, 2, 5, shop_sentence));
        s.el(7, "group:", "");
        s.el(8, "button", "Helpful");
        s.link(8, "Report", &report, None);
        if rng.chance(40) {
            s.el(7, "list:", "Replies");
            s.el(8, "listitem:", "");
            s.el(9, "article:", "");
            s.el(10, "generic:", "");
            s.text(11, "paragraph", &shop_sentence(rng));
            s.link(
                11,
                "Seller response",
                &format!("{SHOP}/seller/{}", rng.hex(10)),
                None,
            );
        }
    }
}

fn snap_carousel(s: &mut Snap, rng: &mut Rng, heading: &str, kind: &str) {
    s.el(2, "region:", heading);
    s.el(3, "heading [level=2]", heading);
    s.el(3, "list:", "");
    for _ in 0..24 {
        let name = format!("{} {} {kind}", rng.pick(BRANDS), rng.pick(MODELS));
        let path = format!("/{}/dp/{}", slug(&name), rng.token(10).to_uppercase());
        let (url, stars, price) = (
            tracked_url(rng, &path),
            rng.range(30, 49),
            rng.range(15, 399),
        );
        s.el(4, "listitem:", "");
        s.el(5, "generic:", "");
        s.link(6, &name, &url, Some(&name));
        s.el(
            6,
            "img",
            &format!("{}.{} out of 5 stars", stars / 10, stars % 10),
        );
        s.text(6, "generic", &format!("${price}.99"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_is_deterministic_and_input_sensitive() {
        let snap = accessibility_snapshot("demo://shop/product/42");
        assert_eq!(snap, accessibility_snapshot("demo://shop/product/42"));
        assert_ne!(snap, accessibility_snapshot("demo://shop/product/43"));
    }

    #[test]
    fn accessibility_snapshot_looks_like_playwright() {
        let snap = accessibility_snapshot("demo://shop/product/42");
        assert!(
            (170_000..240_000).contains(&snap.len()),
            "{} bytes",
            snap.len()
        );
        assert!(snap.starts_with("### Page\n- Page URL: demo://shop/product/42\n- Page Title: "));
        assert!(
            snap.contains("\n### Snapshot\n```yaml\n- generic [active] [ref=e1]:\n")
                && snap.ends_with("```\n")
        );
        let needles = [
            "[cursor=pointer]:",
            "- /url: https://",
            "- img \"",
            "[level=2]",
            "- button \"",
            "- textbox \"",
            "- row [ref=",
        ];
        assert!(needles.iter().all(|n| snap.contains(n)));
        let yaml = snap
            .lines()
            .skip_while(|l| *l != "```yaml")
            .skip(1)
            .take_while(|l| *l != "```");
        let depth = yaml
            .map(|l| (l.len() - l.trim_start().len()) / 2)
            .max()
            .unwrap_or(0);
        assert!((10..=13).contains(&depth), "max depth {depth}");
    }
}

//! Deterministic payload generators for the embedded demo MCP server.
//!
//! The demo server lets `mcp-budget` show, offline, what real MCP tools cost in context
//! tokens. Every function here is pure: the same input yields the same bytes on every machine
//! (a splitmix64 PRNG seeded from an FNV-1a hash of the input; no OS randomness, no clock).
//! The payloads mimic the shapes that hurt in practice: scraped pages full of data-URI images,
//! signed CDN URLs and tracking links; deep accessibility snapshots; verbose GitHub REST
//! bodies; whole source files and logs; raw PNG bytes; and small, well-behaved results to
//! compare them against.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use serde_json::{json, Map, Value};

/// 2025-04-30T08:00:00Z: the fixed "now" every timestamp is derived from.
const EPOCH: u64 = 1_746_000_000;
const SHOP: &str = "https://www.shopnorth.example";
/// A real 1x1 transparent GIF, the classic tracking pixel.
const PIXEL_GIF: &str = "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7";
const SCRAPE_PRODUCTS: usize = 84;
const DATA_URI_IMAGES: usize = 44;
const CODE_TARGET_BYTES: usize = 104_000;
const LOG_TARGET_BYTES: usize = 66_000;

// Word lists are `|`-separated so phrases fit on one line; empty items are allowed.
const BRANDS: &str =
    "Auralis|Northwind|Kestrel|Veloa|Lumen|Orbitek|Halcyon|Brightwave|Tidal|Nomad|Corvid|Pixelane";
const MODELS: &str =
    "Pro 3|Air Lite|Max|S20|Studio|Go 2|Flex|Sport+|Mini|Ultra|X1|Neo|Pulse|Edge 5|Core";
const COLORS: &str =
    "Midnight Black|Arctic White|Sage Green|Coral|Slate Blue|Graphite|Sandstone|Rose Gold";
const KINDS: &str = "wireless earbuds|noise cancelling headphones|smart speaker|fitness tracker|portable charger|mechanical keyboard|4K webcam";
const FEATURES: &str = "Active noise cancelling with three modes|Up to 36 hours of total battery life|IPX5 sweat and water resistance|Bluetooth 5.3 multipoint pairing|USB-C and Qi wireless charging|Six microphones with call noise reduction|Customizable EQ in the companion app|Low-latency gaming mode|Fast charge: 10 minutes for 2 hours of use|Recycled aluminium housing|Two-year limited warranty";
const SPECS: &str = "Connectivity=Bluetooth 5.3|Battery life=36 hours|Weight=52 g|Warranty=2 years|Charging=USB-C, Qi|Water resistance=IPX5|Date first available=March 4, 2025";
const OPENERS: &str = "In practice|For most people|Compared with last year's model|On longer trips|Out of the box|After a week of daily use|According to the manufacturer|In our testing|For the price|Day to day";
const ADJS: &str = "compact|lightweight|durable|premium|sleek|adjustable|ergonomic|water-resistant|portable|reliable|responsive|quiet|well-balanced";
const NOUNS: &str = "battery|charging case|fit|companion app|noise cancellation|microphone array|firmware|build quality|sound profile|Bluetooth connection|touch control|warranty|setup process";
const VERBS: &str = "delivers|holds up with|offers|keeps pace with|improves on|pairs well with|stands out for|makes up for|balances|simplifies";
const OBJECTS: &str = "clear highs and a warm low end|all-day comfort|a stable connection across the room|noticeably longer runtime|calls in noisy places|quick pairing with phones and laptops|a pocket-friendly footprint|consistent results|the usual trade-offs|most of what commuters need";
const TAILS: &str = ", although the finish scratches easily|, which matters more than it sounds| without feeling bulky| at this price point|, especially on busy trains| for everyday use|, and updates arrive regularly|||";
const REVIEWERS: &str = "Maria G.|Tom K.|Priya S.|Daniel R.|Aiko T.|Jonas W.|Fatima B.|Chris P.|Lena M.|Omar H.|Grace L.";
const NAV: &str = "Today's Deals|Customer Service|Registry|Gift Cards|Electronics|Home & Kitchen|Books|Fashion|Toys & Games|Sports & Outdoors|Beauty|Automotive|Pet Supplies|Grocery|Health & Household|Tools & Home Improvement|Baby|Garden|Office Products|Video Games|Music|Movies & TV|Handmade|New Releases|Best Sellers|Coupons|Renewed|Outlet";
const FOOTER: &str = "About Us|Careers|Press Releases|Investor Relations|Sustainability|Accessibility|Privacy Notice|Conditions of Use|Your Ads Privacy Choices|Interest-Based Ads|Help|Returns & Replacements|Shipping Rates|Track Package|Gift Card Balance|Affiliate Program|Advertise Your Products|Sell on ShopNorth|Become a Delivery Driver|Store Locator";
const SUBCATS: &str = "Headphones|Laptops|Smart Home|Cameras|Monitors|Printers|Wearables|Networking|Storage|Tablets|Accessories|Cookware|Bedding|Lighting|Vacuums";
const SW_VERBS: &str = "reworks|fixes|simplifies|adds retries to|removes dead code from|documents|hardens|speeds up|adds tests for|splits up";
const SW_PARTS: &str = "the session cache|the webhook dispatcher|pagination in the list endpoints|the config loader|error handling in the sync worker|the rate limiter|the CLI argument parser|the metrics exporter|the migration runner|the auth middleware|the retry policy|the connection pool";
const SW_OUTCOMES: &str = "requests no longer time out under load|we stop leaking file handles on shutdown|retries respect the backoff budget|behaviour matches the documented contract|the flaky integration test passes reliably|startup is roughly 30% faster|errors carry enough context to debug|the public API stays backwards compatible|memory stays flat during long imports";
const DOC_VERBS: &str =
    "Returns|Updates|Validates|Loads|Persists|Refreshes|Clears|Resolves|Normalizes|Records";
const DOC_SUBJECTS: &str = "the cached value|the owning account|the current page|the retry budget|the last sync cursor|the normalized labels|the audit trail|the request context|the pending changes|the expiry timestamp";
const DOC_NOTES: &str = "callers must hold the write lock|this never touches the database|errors are logged and then swallowed|the result is cached for five minutes|timestamps are always UTC|this is safe to call concurrently|see the module docs for the state machine|invalid input is rejected before any I/O";
const LOGINS: &str = "octocat|mona-lisa|hubot|rgarcia|lchen-dev|tkowalski|amara-o|jpetersen|sofia-m|kenji-t|nordic-labs|lumen-io|tidewater|kestrel-hq|ayoung|bpatel|mvasquez|dkim-oss";
const REPO_NAMES: &str = "api-gateway|web-client|user-service|sdk-js|platform|dashboard|mobile-app|infra-tools|shared-utils|auth-server|data-pipeline|design-system";
const DESCRIPTIONS: &str = "Typed HTTP client for the Acme platform API|Self-hosted dashboard for team metrics|GraphQL gateway with caching and rate limiting|Shared React hooks and utilities|Background job runner with retries and tracing|Command-line tools for managing deployments";
const LABELS: &str = "bug:d73a4a:Something isn't working|enhancement:a2eeef:New feature or request|documentation:0075ca:Improvements or additions to documentation|good first issue:7057ff:Good for newcomers|dependencies:0366d6:Pull requests that update a dependency file|performance:fbca04:Makes things faster|breaking-change:b60205:Changes the public API|needs-review:ededed:Waiting on a maintainer";
const ENTITIES: &str = "User|Session|Order|Invoice|Payment|Shipment|Customer|Product|Webhook|Subscription|Coupon|Warehouse|Refund|AuditEvent|ApiKey";
const LOG_ERRORS: &str = "connection reset by peer (os error 104)|deadline has elapsed|pool timed out while waiting for an open connection|upstream returned 503 Service Unavailable|invalid JSON at line 1 column 4097";
const USER_AGENTS: &str = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15|okhttp/4.12.0|python-requests/2.32.3|acme-sdk-js/3.4.1 node/22.3.0|curl/8.7.1";
const STATUSES: &str = "200|200|200|201|204|304|400|404|429|500";
const CONDITIONS: &str =
    "Clear|Mostly sunny|Partly cloudy|Overcast|Light rain|Showers|Drizzle|Fog|Windy";
const USER_URLS: &str = "followers_url=/followers following_url=/following{/other_user} gists_url=/gists{/gist_id} starred_url=/starred{/owner}{/repo} subscriptions_url=/subscriptions organizations_url=/orgs repos_url=/repos events_url=/events{/privacy} received_events_url=/received_events";
const REPO_URLS: &str = "forks_url=/forks keys_url=/keys{/key_id} collaborators_url=/collaborators{/collaborator} teams_url=/teams hooks_url=/hooks issue_events_url=/issues/events{/number} events_url=/events assignees_url=/assignees{/user} branches_url=/branches{/branch} tags_url=/tags blobs_url=/git/blobs{/sha} git_tags_url=/git/tags{/sha} git_refs_url=/git/refs{/sha} trees_url=/git/trees{/sha} statuses_url=/statuses/{sha} languages_url=/languages stargazers_url=/stargazers contributors_url=/contributors subscribers_url=/subscribers subscription_url=/subscription commits_url=/commits{/sha} git_commits_url=/git/commits{/sha} comments_url=/comments{/number} issue_comment_url=/issues/comments{/number} contents_url=/contents/{+path} compare_url=/compare/{base}...{head} merges_url=/merges archive_url=/{archive_format}{/ref} downloads_url=/downloads issues_url=/issues{/number} pulls_url=/pulls{/number} milestones_url=/milestones{/number} notifications_url=/notifications{?since,all,participating} labels_url=/labels{/name} releases_url=/releases{/id} deployments_url=/deployments";

/// A splitmix64 generator: tiny, fast and identical on every platform.
struct Rng(u64);

impl Rng {
    /// Seeds from an FNV-1a hash of `input`, mixed with a per-generator `salt`.
    fn seeded(input: &str, salt: u64) -> Self {
        Rng(fnv1a(input) ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    fn pick(&mut self, list: &'static str) -> &'static str {
        let n = list.split('|').count();
        list.split('|')
            .nth(self.below(n))
            .expect("index is below the item count")
    }

    /// `len` characters drawn from `alphabet` (ASCII only).
    fn chars(&mut self, len: usize, alphabet: &[u8]) -> String {
        (0..len)
            .map(|_| char::from(alphabet[self.below(alphabet.len())]))
            .collect()
    }

    fn hex(&mut self, len: usize) -> String {
        self.chars(len, b"0123456789abcdef")
    }

    /// URL-safe base64 alphabet, as used by signed URLs and click ids.
    fn token(&mut self, len: usize) -> String {
        self.chars(
            len,
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
        )
    }
}

fn fnv1a(s: &str) -> u64 {
    let step = |h: u64, b: &u8| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    s.as_bytes().iter().fold(0xcbf2_9ce4_8422_2325, step)
}

/// Formats seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (Hinnant's civil-from-days).
fn iso(secs: u64) -> String {
    let z = (secs / 86_400) as i64 + 719_468;
    let (era, doe) = (z.div_euclid(146_097), z.rem_euclid(146_097));
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s) = (secs % 86_400 / 3_600, secs % 3_600 / 60, secs % 60);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}Z")
}

fn shop_sentence(rng: &mut Rng) -> String {
    let (adj, noun, verb) = (rng.pick(ADJS), rng.pick(NOUNS), rng.pick(VERBS));
    let (object, tail) = (rng.pick(OBJECTS), rng.pick(TAILS));
    let opener = rng.pick(OPENERS);
    match rng.below(3) {
        0 => format!("{opener}, the {adj} {noun} {verb} {object}{tail}."),
        1 => format!("Reviewers say the {noun} {verb} {object}{tail}."),
        _ => format!("The {noun} feels {adj} and {verb} {object}{tail}."),
    }
}

fn sw_sentence(rng: &mut Rng) -> String {
    let (verb, part) = (rng.pick(SW_VERBS), rng.pick(SW_PARTS));
    let (outcome, kind) = (rng.pick(SW_OUTCOMES), rng.pick("change|PR|patch"));
    match rng.below(3) {
        0 => format!("This {kind} {verb} {part} so that {outcome}."),
        1 => format!("Previously {part} could fail silently; now {outcome}."),
        _ => format!("It also {verb} {part}, which means {outcome}."),
    }
}

/// A doc-comment style sentence for generated source code.
fn doc_sentence(rng: &mut Rng) -> String {
    let (verb, subject, note) = (
        rng.pick(DOC_VERBS),
        rng.pick(DOC_SUBJECTS),
        rng.pick(DOC_NOTES),
    );
    match rng.below(3) {
        0 => format!("{verb} {subject}; {note}."),
        1 => format!("{verb} {subject} for the given id. Note that {note}."),
        _ => format!("{verb} {subject} in one round trip."),
    }
}

/// Between `min` and `max` sentences joined into one paragraph.
fn paragraph(rng: &mut Rng, min: usize, max: usize, sentence: fn(&mut Rng) -> String) -> String {
    let sentences: Vec<String> = (0..rng.range(min, max)).map(|_| sentence(rng)).collect();
    sentences.join(" ")
}

fn title_case(s: &str) -> String {
    let word = |w: &str| {
        let mut chars = w.chars();
        let first = chars.next().map(|c| c.to_uppercase().collect::<String>());
        first.unwrap_or_default() + chars.as_str()
    };
    s.split_whitespace().map(word).collect::<Vec<_>>().join(" ")
}

fn slug(s: &str) -> String {
    let lower = s.to_ascii_lowercase();
    let words = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty());
    words.collect::<Vec<_>>().join("-")
}

/// Splits `fetchUser`, `fetch_user` or `fetch user` into lowercase words.
fn identifier_words(s: &str) -> Vec<String> {
    let (mut words, mut prev_lower) = (vec![String::new()], false);
    for c in s.chars() {
        if !c.is_alphanumeric() || c.is_uppercase() && prev_lower {
            words.push(String::new());
        }
        if let (true, Some(last)) = (c.is_alphanumeric(), words.last_mut()) {
            last.extend(c.to_lowercase());
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
    }
    words.retain(|w| !w.is_empty());
    if words.is_empty() {
        words.push("query".into());
    }
    words
}

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

/// A shop link carrying the usual pile of campaign and click-id parameters.
fn tracked_url(rng: &mut Rng, path: &str) -> String {
    let source = rng.pick("newsletter|facebook|google|bing|instagram|tiktok|partner_feed");
    let medium = rng.pick("email|cpc|social|display|affiliate");
    let campaign = rng.pick("spring_sale_2025|back_to_school|prime_day_early|clearance_q2");
    let click = match rng.below(4) {
        0 => format!("fbclid=IwAR{}", rng.token(58)),
        1 => format!("gclid=Cj0KCQjw{}", rng.token(70)),
        2 => format!("mc_eid={}", rng.hex(10)),
        _ => format!("msclkid={}", rng.hex(32)),
    };
    let utm = format!("utm_source={source}&utm_medium={medium}&utm_campaign={campaign}");
    format!("{SHOP}{path}?{utm}&{click}")
}

/// A signed image CDN URL: always well over 200 characters.
fn signed_cdn_url(rng: &mut Rng, slug: &str) -> String {
    let (id, origin, key) = (rng.token(11), rng.hex(32), rng.token(14));
    let (expires, signature) = (1_767_225_600 + rng.below(86_400), rng.token(172));
    let host = "https://images-cdn.shopnorth.example/images/I";
    let image_uri = format!("https%3A%2F%2Forigin.shopnorth.example%2F{origin}%2F{slug}.jpg");
    let query = format!("expires={expires}&image_uri={image_uri}&key_pair_id=APKA{key}");
    format!("{host}/{id}._AC_SL1500_.jpg?w=1500&q=85&{query}&signature={signature}")
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
        let png = png_image(w, h, rng.next_u64());
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

/// GitHub's legacy base64 node ids, e.g. `MDQ6VXNlcjE=` for `04:User1`.
fn node_id(prefix: &str, id: u64) -> String {
    B64.encode(format!("{prefix}{id}"))
}

fn stable_id(key: &str, base: u64) -> u64 {
    base + fnv1a(key) % 90_000_000
}

/// Concatenates `head`, one `key: api + suffix` pair per `spec` item, then `tail`.
fn with_urls(head: Value, api: &str, spec: &str, tail: Value) -> Map<String, Value> {
    let mut map = into_map(head);
    for (key, suffix) in spec.split(' ').filter_map(|kv| kv.split_once('=')) {
        map.insert(key.to_string(), Value::String(format!("{api}{suffix}")));
    }
    map.extend(into_map(tail));
    map
}

fn into_map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn gh_user(login: &str) -> Value {
    let id = stable_id(login, 1_000_000);
    let kind = ["Organization", "User", "User"][(fnv1a(login) % 3) as usize];
    let api = format!("https://api.github.com/users/{login}");
    let head = json!({
        "login": login, "id": id, "node_id": node_id(&format!("04:{kind}"), id),
        "avatar_url": format!("https://avatars.githubusercontent.com/u/{id}?v=4"), "gravatar_id": "",
        "url": api, "html_url": format!("https://github.com/{login}")
    });
    let tail = json!({"type": kind, "user_view_type": "public", "site_admin": false});
    Value::Object(with_urls(head, &api, USER_URLS, tail))
}

/// The "minimal repository" object embedded in search results.
fn repo_object(owner: &str, name: &str, description: &str, fork: bool) -> Map<String, Value> {
    let full = format!("{owner}/{name}");
    let (id, api) = (
        stable_id(&full, 10_000_000),
        format!("https://api.github.com/repos/{full}"),
    );
    let head = json!({
        "id": id, "node_id": node_id("010:Repository", id), "name": name, "full_name": full,
        "private": false, "owner": gh_user(owner), "html_url": format!("https://github.com/{full}"),
        "description": description, "fork": fork, "url": api
    });
    with_urls(head, &api, REPO_URLS, Value::Null)
}

/// The full repository object used in pull request `head`/`base`.
fn full_repo(rng: &mut Rng, owner: &str, name: &str, fork: bool) -> Value {
    let mut repo = repo_object(owner, name, rng.pick(DESCRIPTIONS), fork);
    let (stars, forks, open) = (rng.below(20_000), rng.below(3_000), rng.below(400));
    let created = EPOCH - 40_000_000 - rng.below(90_000_000) as u64;
    let topics: Vec<&str> = (0..4)
        .map(|_| rng.pick("api|rust|cli|graphql|sdk"))
        .collect();
    let gh = format!("github.com/{owner}/{name}");
    let extra = json!({
        "created_at": iso(created), "updated_at": iso(EPOCH - rng.below(86_400) as u64),
        "pushed_at": iso(EPOCH - rng.below(3_600) as u64), "git_url": format!("git://{gh}.git"),
        "ssh_url": format!("git@github.com:{owner}/{name}.git"), "clone_url": format!("https://{gh}.git"),
        "svn_url": format!("https://{gh}"), "homepage": format!("https://{name}.dev"),
        "size": rng.below(90_000), "stargazers_count": stars, "watchers_count": stars,
        "language": rng.pick("TypeScript|Rust|Go|Python|Java"), "has_issues": true, "has_projects": true,
        "has_downloads": true, "has_wiki": false, "has_pages": false, "has_discussions": true,
        "forks_count": forks, "mirror_url": null, "archived": false, "disabled": false,
        "open_issues_count": open, "license": {"key": "mit", "name": "MIT License", "spdx_id": "MIT",
            "url": "https://api.github.com/licenses/mit", "node_id": "MDc6TGljZW5zZTEz"},
        "allow_forking": true, "is_template": false, "web_commit_signoff_required": false,
        "topics": topics, "visibility": "public", "forks": forks, "open_issues": open,
        "watchers": stars, "default_branch": "main"
    });
    repo.extend(into_map(extra));
    Value::Object(repo)
}

/// GitHub REST `GET /search/code` response body: {"total_count": N (thousands), "incomplete_results": false, "items": [...]}
/// with `per_page` items (cap 100), each item with name, path, sha, url, git_url, html_url, score and a full `repository` object
/// (id, node_id, name, full_name, private, owner {login, id, node_id, avatar_url, gravatar_id, url, html_url, followers_url, ... ~18 *_url fields, type, site_admin},
/// html_url, description, fork, url and the ~45 `*_url` template fields GitHub returns). Values derive from `query`.
pub fn search_code(query: &str, per_page: usize) -> Value {
    let mut rng = Rng::seeded(query, 3);
    let total = rng.range(1_000, 49_000);
    let items: Vec<Value> = (0..per_page.min(100))
        .map(|_| code_item(&mut rng, query))
        .collect();
    json!({"total_count": total, "incomplete_results": false, "items": items})
}

/// A file name derived from the query in one of several language conventions.
fn code_file_name(rng: &mut Rng, query: &str) -> String {
    let words = identifier_words(query);
    let (snake, first) = (words.join("_"), words[0].as_str());
    let pascal: String = words.iter().map(|w| title_case(w)).collect();
    let camel = format!("{first}{}", pascal.get(first.len()..).unwrap_or_default());
    let (generic, ext) = (
        rng.pick("index|client|api|utils|handlers"),
        rng.pick("ts|js|go"),
    );
    match rng.below(6) {
        0 => format!("{camel}.ts"),
        1 => format!("{snake}.rs"),
        2 => format!("use{pascal}.tsx"),
        3 => format!("{snake}.py"),
        4 => format!("{pascal}Service.java"),
        _ => format!("{generic}.{ext}"),
    }
}

fn code_item(rng: &mut Rng, query: &str) -> Value {
    let (owner, name) = (rng.pick(LOGINS), rng.pick(REPO_NAMES));
    let repo = repo_object(owner, name, rng.pick(DESCRIPTIONS), rng.chance(10));
    let repo_id = repo["id"].as_u64().unwrap_or_default();
    let dir = rng.pick("src|src/api|lib|packages/client/src|app/services|internal/handlers");
    let path = format!("{dir}/{}", code_file_name(rng, query));
    let file = path.rsplit('/').next().unwrap_or_default();
    let (sha, commit) = (rng.hex(40), rng.hex(40));
    let api = format!("https://api.github.com/repositories/{repo_id}");
    json!({
        "name": file, "path": path, "sha": sha, "url": format!("{api}/contents/{path}?ref={commit}"),
        "git_url": format!("{api}/git/blobs/{sha}"),
        "html_url": format!("https://github.com/{owner}/{name}/blob/{commit}/{path}"),
        "repository": repo, "score": 1.0
    })
}

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

const CRC_TABLE: [u32; 256] = {
    let (mut table, mut n) = ([0u32; 256], 0);
    while n < 256 {
        let (mut c, mut k) = (n as u32, 0);
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[n] = c;
        n += 1;
    }
    table
};

fn crc32(bytes: &[u8]) -> u32 {
    let step = |c: u32, b: &u8| CRC_TABLE[((c ^ u32::from(*b)) & 0xff) as usize] ^ (c >> 8);
    !bytes.iter().fold(!0u32, step)
}

fn adler32(bytes: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in bytes.chunks(5_552) {
        for &x in chunk {
            a += u32::from(x);
            b += a;
        }
        (a, b) = (a % 65_521, b % 65_521);
    }
    (b << 16) | a
}

fn png_chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    let len = u32::try_from(data.len()).expect("PNG chunks built here are far below 4 GiB");
    out.extend_from_slice(&len.to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// A zlib stream (no preset dictionary) of stored deflate blocks of at most 65,535 bytes each.
fn zlib_stored(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + data.len() / 65_535 * 5 + 16);
    out.extend_from_slice(&[0x78, 0x01]);
    let mut blocks = data.chunks(65_535).peekable();
    while let Some(block) = blocks.next() {
        let len = u16::try_from(block.len()).expect("blocks are at most 65535 bytes");
        out.push(u8::from(blocks.peek().is_none()));
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    out.extend_from_slice(&adler32(data).to_be_bytes());
    out
}

/// Filter-0 scanlines: gradients and a checkerboard tinted by `seed`, plus noise.
fn png_scanlines(width: usize, height: usize, seed: u64) -> Vec<u8> {
    let (mut rng, tint) = (Rng(seed), seed.to_le_bytes());
    let mut raw = Vec::with_capacity(height * (3 * width + 1));
    for y in 0..height {
        raw.push(0);
        for x in 0..width {
            let noise = (rng.next_u64() & 0x1f) as u8;
            let checker = [0u8, 96][(x / 8 + y / 8) % 2];
            raw.push(((x * 255 / width) as u8).wrapping_add(tint[0]) ^ noise);
            raw.push(((y * 255 / height) as u8).wrapping_add(tint[1]) ^ noise);
            raw.push(checker.wrapping_add(tint[2]) ^ noise);
        }
    }
    raw
}

/// A valid PNG (8-bit RGB, no interlace) of the given size whose pixels are a deterministic pattern from `seed`.
/// Encoded by hand: signature, IHDR, one IDAT holding a zlib stream of stored deflate blocks, IEND.
/// A zero width or height is raised to 1, since PNG forbids empty images.
pub fn png_image(width: u32, height: u32, seed: u64) -> Vec<u8> {
    let (width, height) = (width.max(1), height.max(1));
    let raw = png_scanlines(width as usize, height as usize, seed);
    let mut ihdr = [0u8; 13];
    ihdr[..4].copy_from_slice(&width.to_be_bytes());
    ihdr[4..8].copy_from_slice(&height.to_be_bytes());
    ihdr[8..].copy_from_slice(&[8, 2, 0, 0, 0]);
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    png_chunk(&mut out, b"IHDR", &ihdr);
    png_chunk(&mut out, b"IDAT", &zlib_stored(&raw));
    png_chunk(&mut out, b"IEND", &[]);
    out
}

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
    fn generators_are_deterministic_and_input_sensitive() {
        let (shop, other) = (
            "demo://shop/search?q=wireless+earbuds",
            "demo://shop/search?q=usb+hub",
        );
        assert_eq!(scrape_markdown(shop), scrape_markdown(shop));
        assert_ne!(scrape_markdown(shop), scrape_markdown(other));
        let snap = accessibility_snapshot("demo://shop/product/42");
        assert_eq!(snap, accessibility_snapshot("demo://shop/product/42"));
        assert_ne!(snap, accessibility_snapshot("demo://shop/product/43"));
        assert_eq!(search_code("fetchUser", 10), search_code("fetchUser", 10));
        assert_ne!(search_code("fetchUser", 10), search_code("parseConfig", 10));
        assert_eq!(
            list_pull_requests("acme/widgets", 5),
            list_pull_requests("acme/widgets", 5)
        );
        assert_ne!(
            list_pull_requests("acme/widgets", 5),
            list_pull_requests("acme/gadgets", 5)
        );
        for path in ["src/server.rs", "app/main.ts", "logs/app.log"] {
            assert_eq!(file_text(path), file_text(path));
            assert_ne!(file_text(path), file_text(&format!("other/{path}")));
        }
        assert_eq!(png_image(16, 9, 3), png_image(16, 9, 3));
        assert_ne!(png_image(16, 9, 3), png_image(16, 9, 4));
        assert_eq!(forecast("Lisbon"), forecast("Lisbon"));
        assert_ne!(forecast("Lisbon"), forecast("Oslo"));
        assert_eq!(list_page(3, 4, 20), list_page(3, 4, 20));
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

    #[test]
    fn search_code_matches_github_shape() {
        let body = search_code("fetchUser", 100);
        assert!(
            body["total_count"].as_u64().is_some_and(|n| n >= 1_000)
                && body["incomplete_results"] == false
        );
        assert!(
            (380_000..560_000).contains(&json_len(&body)),
            "{} bytes",
            json_len(&body)
        );
        let items = body["items"].as_array().expect("items array");
        assert_eq!(items.len(), 100);
        assert_eq!(
            search_code("fetchUser", 500)["items"]
                .as_array()
                .map(Vec::len),
            Some(100)
        );
        for item in items {
            let keys = ["name", "path", "sha", "url", "git_url", "html_url", "score"];
            assert!(keys.iter().all(|k| item.get(k).is_some()));
            let repo = item["repository"].as_object().expect("repository object");
            assert!(repo.len() >= 45 && repo.keys().filter(|k| k.ends_with("_url")).count() >= 37);
            let owner = repo["owner"].as_object().expect("owner object");
            assert!(
                owner.keys().filter(|k| k.ends_with("_url")).count() >= 11
                    && owner["site_admin"] == false
            );
        }
        assert!(items
            .iter()
            .any(|i| i["name"].as_str().is_some_and(|n| n.starts_with("fetch"))));
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

    fn be32(bytes: &[u8]) -> u32 {
        u32::from_be_bytes(bytes[..4].try_into().expect("4 bytes"))
    }

    /// Walks a PNG: signature, per-chunk CRCs, IHDR, zlib header, stored blocks and Adler-32.
    /// Returns (width, height, inflated scanlines).
    fn decode_stored_png(png: &[u8]) -> (u32, u32, Vec<u8>) {
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let (mut pos, mut chunks, mut idat) = (8, Vec::new(), Vec::new());
        while pos < png.len() {
            let len = be32(&png[pos..]) as usize;
            let (kind, data) = (&png[pos + 4..pos + 8], &png[pos + 8..pos + 8 + len]);
            assert_eq!(
                be32(&png[pos + 8 + len..]),
                crc32(&png[pos + 4..pos + 8 + len])
            );
            if kind == b"IDAT" {
                idat.extend_from_slice(data);
            }
            chunks.push((kind, data));
            pos += 12 + len;
        }
        let kinds: Vec<&[u8]> = chunks.iter().map(|c| c.0).collect();
        assert_eq!(kinds, [&b"IHDR"[..], b"IDAT", b"IEND"]);
        let ihdr = chunks[0].1;
        assert_eq!(&ihdr[8..], &[8, 2, 0, 0, 0]);
        assert_eq!((u16::from(idat[0]) << 8 | u16::from(idat[1])) % 31, 0);
        let (mut raw, mut at, mut last) = (Vec::new(), 2, false);
        while !last {
            let len = usize::from(u16::from_le_bytes([idat[at + 1], idat[at + 2]]));
            assert_eq!(idat[at] & 0b110, 0, "stored block");
            assert_eq!(
                len ^ 0xffff,
                usize::from(u16::from_le_bytes([idat[at + 3], idat[at + 4]]))
            );
            raw.extend_from_slice(&idat[at + 5..at + 5 + len]);
            last = idat[at] & 1 == 1;
            at += 5 + len;
        }
        assert_eq!(be32(&idat[at..]), adler32(&raw));
        assert_eq!(at + 4, idat.len());
        (be32(ihdr), be32(&ihdr[4..]), raw)
    }

    #[test]
    fn png_image_is_a_valid_stored_png() {
        for (w, h) in [(1, 1), (37, 23), (200, 150)] {
            let (width, height, raw) = decode_stored_png(&png_image(w, h, 9));
            assert_eq!((width, height), (w, h));
            assert_eq!(raw.len(), (h * (3 * w + 1)) as usize);
            assert!(raw.chunks(3 * w as usize + 1).all(|row| row[0] == 0));
        }
        assert_eq!(decode_stored_png(&png_image(0, 5, 1)).0, 1);
        assert_eq!(crc32(b"IEND"), 0xAE42_6082);
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
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

    #[test]
    fn helpers_behave() {
        assert_eq!(iso(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso(951_782_400 + 3_661), "2000-02-29T01:01:01Z");
        assert_eq!(identifier_words("fetchUser"), ["fetch", "user"]);
        assert_eq!(
            query_from_url("demo://shop/search?q=wireless+earbuds&page=2"),
            "wireless earbuds"
        );
        assert_eq!(
            query_from_url("https://x.example/s?k=1&q=usb%20hub"),
            "usb hub"
        );
        assert_eq!(query_from_url("demo://shop"), "shop");
    }
}

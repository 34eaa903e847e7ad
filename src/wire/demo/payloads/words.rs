//! Word lists and shared constants for the demo payload generators.
//!
//! Lists are `|`-separated so phrases fit on one line (empty items are allowed); generators
//! draw from them with `Rng::pick`. `EPOCH` and `SHOP` anchor every timestamp and shop URL.

/// 2025-04-30T08:00:00Z: the fixed "now" every timestamp is derived from.
pub(super) const EPOCH: u64 = 1_746_000_000;
/// Origin of the fictional shop that scraped pages and snapshots link to.
pub(super) const SHOP: &str = "https://www.shopnorth.example";

// Shop product copy, navigation and reviews.
pub(super) const BRANDS: &str =
    "Auralis|Northwind|Kestrel|Veloa|Lumen|Orbitek|Halcyon|Brightwave|Tidal|Nomad|Corvid|Pixelane";
pub(super) const MODELS: &str =
    "Pro 3|Air Lite|Max|S20|Studio|Go 2|Flex|Sport+|Mini|Ultra|X1|Neo|Pulse|Edge 5|Core";
pub(super) const COLORS: &str =
    "Midnight Black|Arctic White|Sage Green|Coral|Slate Blue|Graphite|Sandstone|Rose Gold";
pub(super) const KINDS: &str = "wireless earbuds|noise cancelling headphones|smart speaker|fitness tracker|portable charger|mechanical keyboard|4K webcam";
pub(super) const FEATURES: &str = "Active noise cancelling with three modes|Up to 36 hours of total battery life|IPX5 sweat and water resistance|Bluetooth 5.3 multipoint pairing|USB-C and Qi wireless charging|Six microphones with call noise reduction|Customizable EQ in the companion app|Low-latency gaming mode|Fast charge: 10 minutes for 2 hours of use|Recycled aluminium housing|Two-year limited warranty";
pub(super) const SPECS: &str = "Connectivity=Bluetooth 5.3|Battery life=36 hours|Weight=52 g|Warranty=2 years|Charging=USB-C, Qi|Water resistance=IPX5|Date first available=March 4, 2025";
pub(super) const OPENERS: &str = "In practice|For most people|Compared with last year's model|On longer trips|Out of the box|After a week of daily use|According to the manufacturer|In our testing|For the price|Day to day";
pub(super) const ADJS: &str = "compact|lightweight|durable|premium|sleek|adjustable|ergonomic|water-resistant|portable|reliable|responsive|quiet|well-balanced";
pub(super) const NOUNS: &str = "battery|charging case|fit|companion app|noise cancellation|microphone array|firmware|build quality|sound profile|Bluetooth connection|touch control|warranty|setup process";
pub(super) const VERBS: &str = "delivers|holds up with|offers|keeps pace with|improves on|pairs well with|stands out for|makes up for|balances|simplifies";
pub(super) const OBJECTS: &str = "clear highs and a warm low end|all-day comfort|a stable connection across the room|noticeably longer runtime|calls in noisy places|quick pairing with phones and laptops|a pocket-friendly footprint|consistent results|the usual trade-offs|most of what commuters need";
pub(super) const TAILS: &str = ", although the finish scratches easily|, which matters more than it sounds| without feeling bulky| at this price point|, especially on busy trains| for everyday use|, and updates arrive regularly|||";
pub(super) const REVIEWERS: &str = "Maria G.|Tom K.|Priya S.|Daniel R.|Aiko T.|Jonas W.|Fatima B.|Chris P.|Lena M.|Omar H.|Grace L.";
pub(super) const NAV: &str = "Today's Deals|Customer Service|Registry|Gift Cards|Electronics|Home & Kitchen|Books|Fashion|Toys & Games|Sports & Outdoors|Beauty|Automotive|Pet Supplies|Grocery|Health & Household|Tools & Home Improvement|Baby|Garden|Office Products|Video Games|Music|Movies & TV|Handmade|New Releases|Best Sellers|Coupons|Renewed|Outlet";
pub(super) const FOOTER: &str = "About Us|Careers|Press Releases|Investor Relations|Sustainability|Accessibility|Privacy Notice|Conditions of Use|Your Ads Privacy Choices|Interest-Based Ads|Help|Returns & Replacements|Shipping Rates|Track Package|Gift Card Balance|Affiliate Program|Advertise Your Products|Sell on ShopNorth|Become a Delivery Driver|Store Locator";
pub(super) const SUBCATS: &str = "Headphones|Laptops|Smart Home|Cameras|Monitors|Printers|Wearables|Networking|Storage|Tablets|Accessories|Cookware|Bedding|Lighting|Vacuums";
// Software prose: pull requests, doc comments, tickets.
pub(super) const SW_VERBS: &str = "reworks|fixes|simplifies|adds retries to|removes dead code from|documents|hardens|speeds up|adds tests for|splits up";
pub(super) const SW_PARTS: &str = "the session cache|the webhook dispatcher|pagination in the list endpoints|the config loader|error handling in the sync worker|the rate limiter|the CLI argument parser|the metrics exporter|the migration runner|the auth middleware|the retry policy|the connection pool";
pub(super) const SW_OUTCOMES: &str = "requests no longer time out under load|we stop leaking file handles on shutdown|retries respect the backoff budget|behaviour matches the documented contract|the flaky integration test passes reliably|startup is roughly 30% faster|errors carry enough context to debug|the public API stays backwards compatible|memory stays flat during long imports";
pub(super) const DOC_VERBS: &str =
    "Returns|Updates|Validates|Loads|Persists|Refreshes|Clears|Resolves|Normalizes|Records";
pub(super) const DOC_SUBJECTS: &str = "the cached value|the owning account|the current page|the retry budget|the last sync cursor|the normalized labels|the audit trail|the request context|the pending changes|the expiry timestamp";
pub(super) const DOC_NOTES: &str = "callers must hold the write lock|this never touches the database|errors are logged and then swallowed|the result is cached for five minutes|timestamps are always UTC|this is safe to call concurrently|see the module docs for the state machine|invalid input is rejected before any I/O";
// GitHub accounts, repositories and labels (`name:color:description`).
pub(super) const LOGINS: &str = "octocat|mona-lisa|hubot|rgarcia|lchen-dev|tkowalski|amara-o|jpetersen|sofia-m|kenji-t|nordic-labs|lumen-io|tidewater|kestrel-hq|ayoung|bpatel|mvasquez|dkim-oss";
pub(super) const REPO_NAMES: &str = "api-gateway|web-client|user-service|sdk-js|platform|dashboard|mobile-app|infra-tools|shared-utils|auth-server|data-pipeline|design-system";
pub(super) const DESCRIPTIONS: &str = "Typed HTTP client for the Acme platform API|Self-hosted dashboard for team metrics|GraphQL gateway with caching and rate limiting|Shared React hooks and utilities|Background job runner with retries and tracing|Command-line tools for managing deployments";
pub(super) const LABELS: &str = "bug:d73a4a:Something isn't working|enhancement:a2eeef:New feature or request|documentation:0075ca:Improvements or additions to documentation|good first issue:7057ff:Good for newcomers|dependencies:0366d6:Pull requests that update a dependency file|performance:fbca04:Makes things faster|breaking-change:b60205:Changes the public API|needs-review:ededed:Waiting on a maintainer";
// Source files and server logs.
pub(super) const ENTITIES: &str = "User|Session|Order|Invoice|Payment|Shipment|Customer|Product|Webhook|Subscription|Coupon|Warehouse|Refund|AuditEvent|ApiKey";
pub(super) const LOG_ERRORS: &str = "connection reset by peer (os error 104)|deadline has elapsed|pool timed out while waiting for an open connection|upstream returned 503 Service Unavailable|invalid JSON at line 1 column 4097";
pub(super) const USER_AGENTS: &str = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15|okhttp/4.12.0|python-requests/2.32.3|acme-sdk-js/3.4.1 node/22.3.0|curl/8.7.1";
pub(super) const STATUSES: &str = "200|200|200|201|204|304|400|404|429|500";
// Weather.
pub(super) const CONDITIONS: &str =
    "Clear|Mostly sunny|Partly cloudy|Overcast|Light rain|Showers|Drizzle|Fog|Windy";
// GitHub `*_url` templates as `key=suffix` pairs appended to a user or repository API URL.
pub(super) const USER_URLS: &str = "followers_url=/followers following_url=/following{/other_user} gists_url=/gists{/gist_id} starred_url=/starred{/owner}{/repo} subscriptions_url=/subscriptions organizations_url=/orgs repos_url=/repos events_url=/events{/privacy} received_events_url=/received_events";
pub(super) const REPO_URLS: &str = "forks_url=/forks keys_url=/keys{/key_id} collaborators_url=/collaborators{/collaborator} teams_url=/teams hooks_url=/hooks issue_events_url=/issues/events{/number} events_url=/events assignees_url=/assignees{/user} branches_url=/branches{/branch} tags_url=/tags blobs_url=/git/blobs{/sha} git_tags_url=/git/tags{/sha} git_refs_url=/git/refs{/sha} trees_url=/git/trees{/sha} statuses_url=/statuses/{sha} languages_url=/languages stargazers_url=/stargazers contributors_url=/contributors subscribers_url=/subscribers subscription_url=/subscription commits_url=/commits{/sha} git_commits_url=/git/commits{/sha} comments_url=/comments{/number} issue_comment_url=/issues/comments{/number} contents_url=/contents/{+path} compare_url=/compare/{base}...{head} merges_url=/merges archive_url=/{archive_format}{/ref} downloads_url=/downloads issues_url=/issues{/number} pulls_url=/pulls{/number} milestones_url=/milestones{/number} notifications_url=/notifications{?since,all,participating} labels_url=/labels{/name} releases_url=/releases{/id} deployments_url=/deployments";

//! report.html in a real headless browser (Debian's chromium driven by playwright-core, both
//! installed by `.ci/run`): it loads from the file with no console or page errors and no request
//! leaving the file, the tables sort on a header click, and the inline charts are drawn.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{mcp_budget, repo};

/// playwright-core's folder and the chromium binary, or a skip (fatal under
/// MCP_BUDGET_REQUIRE_REAL_SERVERS).
fn browser() -> Option<(PathBuf, PathBuf)> {
    // where `.ci/run` installs it, as for the real servers (support::real_server)
    let pw = std::env::var_os("MCP_BUDGET_TEST_SERVERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target/test-servers"))
        .join("node_modules/playwright-core");
    let chromium = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if pw.join("package.json").exists() && chromium.exists() {
        return Some((pw, chromium));
    }
    crate::support::skip(&format!(
        "playwright-core ({}) or chromium ({}) not installed (run .ci/run)",
        pw.display(),
        chromium.display()
    ));
    None
}

/// Width, height and the share of pixels that are not near-white, of a PNG file.
fn png_ink(path: &Path) -> (u32, u32, f64) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let pixels = buf[..info.buffer_size()].chunks(channels);
    let total = (info.width * info.height) as f64;
    let inked = pixels
        .filter(|p| p.iter().take(3).any(|c| *c < 200))
        .count() as f64;
    (info.width, info.height, inked / total)
}

#[test]
fn report_html_loads_cleanly_sorts_and_shows_the_charts() {
    let Some((pw, chromium)) = browser() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let out = home.path().join("report");
    mcp_budget(home.path(), home.path())
        .arg("audit")
        .arg(repo().join("probes/demo.toml"))
        .arg("--out")
        .arg(&out)
        .assert()
        .code(0);
    let shots = std::env::var_os("MCP_BUDGET_KEEP_SCREENSHOTS")
        .map_or(home.path().to_path_buf(), PathBuf::from);
    let (page_png, chart_png) = (shots.join("page.png"), shots.join("chart.png"));
    let run = Command::new("node")
        .arg(repo().join("tests/fixtures/check_html.mjs"))
        .args([&pw, &out.join("report.html"), &page_png, &chart_png])
        .env("CHROMIUM", &chromium)
        .output()
        .expect("node runs");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let got: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(got["console_errors"], serde_json::json!([]), "{got}");
    assert_eq!(got["page_errors"], serde_json::json!([]), "{got}");
    assert_eq!(got["external_requests"], serde_json::json!([]), "{got}");
    assert_eq!(got["title"], "MCP token audit");

    // sorting: the tools table starts largest first; a click sorts ascending, another descending
    let col = |k: &str| -> Vec<f64> {
        got[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect()
    };
    let mut sorted = col("before");
    assert_eq!(sorted.len(), 13);
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(col("ascending"), sorted);
    sorted.reverse();
    assert_eq!(col("descending"), sorted);

    // one inline chart per chart file written, each drawn at a real size
    let svgs = std::fs::read_dir(out.join("charts"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "svg")
        })
        .count();
    let figures = got["figures"].as_array().unwrap();
    assert_eq!(figures.len(), svgs);
    assert_eq!(svgs, 5, "the demo has data for all five charts");
    for f in figures {
        assert!(
            f["width"].as_f64().unwrap() > 300.0 && f["height"].as_f64().unwrap() > 100.0,
            "{f}"
        );
    }
    // the screenshots show something: the first chart has bars and text, not a blank box
    let (w, h, ink) = png_ink(&chart_png);
    assert!(w > 300 && h > 100, "{w}x{h}");
    assert!(ink > 0.02, "the chart screenshot is blank ({ink})");
    let (_, page_h, _) = png_ink(&page_png);
    assert!(page_h > 2000, "the full page is {page_h} px tall");
}

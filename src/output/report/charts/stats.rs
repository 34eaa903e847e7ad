//! The `stats --chart` chart of a proxy call log: each tool's p95 raw and returned tokens on a
//! log scale, with Claude Code's limits.

use super::bitmap::png_of;
use super::draw::svg_of;
use super::error::ChartError;
use super::font::legible;
use super::plan::{
    claude_code_refs, fit_width, sorted_rows, Plan, Row, Series, Unit, BLUE, LABEL_CHARS,
    LABEL_GAP, MAX_LABEL_AREA, ORANGE,
};
use crate::ground::units::thousands;
use crate::output::report::StatsRow;

/// The title of the `stats` chart.
pub const STATS_TITLE: &str = "Proxied calls per tool: raw vs returned tokens (p95)";

/// The `stats` chart of a call log's rows (as SVG or PNG by `png`): each tool's p95 raw and
/// returned tokens on a log scale, with Claude Code's limits; None when there are no calls.
pub fn render_stats_chart(rows: &[StatsRow], png: bool) -> Result<Option<Vec<u8>>, ChartError> {
    let Some(plan) = stats_plan(rows) else {
        return Ok(None);
    };
    let bytes = if png {
        png_of(&plan, STATS_TITLE, "stats")?
    } else {
        svg_of(&plan, STATS_TITLE, "stats")?.into_bytes()
    };
    Ok(Some(bytes))
}

const STATS_SERIES: &[Series] = &[
    Series {
        name: "raw result (p95)",
        color: BLUE,
    },
    Series {
        name: "returned to the client (p95)",
        color: ORANGE,
    },
];

fn stats_plan(rows: &[StatsRow]) -> Option<Plan> {
    let bars = rows
        .iter()
        .map(|r| {
            let calls = if r.calls == 1 { "call" } else { "calls" };
            let label = format!(
                "{} ({} {calls})",
                legible(&format!("{}/{}", r.server, r.tool), LABEL_CHARS - 12),
                thousands(r.calls)
            );
            let values = vec![
                Some(r.raw_tokens_p95 as f64),
                Some(r.returned_tokens_p95 as f64),
            ];
            (r.raw_tokens_p95 as f64, Row { label, values })
        })
        .collect();
    let mut plan = Plan {
        x_desc: "tokens per result, 95th percentile (log scale)",
        unit: Unit::Tokens,
        log: true,
        series: STATS_SERIES,
        rows: sorted_rows(bars),
        refs: claude_code_refs(),
    };
    if plan.rows.is_empty() {
        return None;
    }
    for row in &mut plan.rows {
        row.label = fit_width(&row.label, (MAX_LABEL_AREA - LABEL_GAP) as f32);
    }
    Some(plan)
}

#[cfg(test)]
mod tests {
    use super::super::draw::WIDTH;
    use super::super::fixtures::{decode, stats_row};
    use super::*;

    #[test]
    fn the_stats_chart_draws_each_tools_p95_largest_first() {
        let rows = [
            stats_row("get_forecast", 1, 1_616, 1_616),
            stats_row("scrape_as_markdown", 12, 237_481, 3_998),
        ];
        let plan = stats_plan(&rows).unwrap();
        let labels: Vec<&str> = plan.rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "demo/scrape_as_markdown (12 calls)",
                "demo/get_forecast (1 call)"
            ]
        );
        assert_eq!(plan.rows[0].values, [Some(237_481.0), Some(3_998.0)]);
        assert!(plan.log);
        let svg = render_stats_chart(&rows, false).unwrap().unwrap();
        let svg = String::from_utf8(svg).unwrap();
        for text in [
            STATS_TITLE,
            "demo/scrape_as_markdown (12 calls)",
            "Claude Code cap 25k",
            "returned to the client (p95)",
            "237,481",
        ] {
            assert!(svg.contains(text), "{text} is not in the SVG");
        }
        let png = render_stats_chart(&rows, true).unwrap().unwrap();
        let (w, h, inked) = decode(&png);
        assert_eq!((w, h), (WIDTH, plan.height()));
        assert!(inked > 0.02, "{inked}");
        assert!(render_stats_chart(&[], true).unwrap().is_none());
    }
}

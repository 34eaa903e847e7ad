//! The schema score of a server: 0-100 and a grade, from the measured numbers alone, so a reader
//! can check it by hand (docs/findings.md's "Schema score" gives the same formula).
//!
//! ```text
//! waste    = 50 x recoverable / schema tokens      (the share every definition fix recovers,
//!            each parameter repeated across tools hidden or stated once included)
//! findings = 10 per error + 4 per warning + 1 per note, of the definition rules, at most 30
//! size     = schema tokens / 2,500, at most 20     (one point per 2,500 tokens a turn)
//! score    = 100 - waste - findings - size, rounded, at least 0
//! grade    = A from 90, B from 80, C from 70, D from 60, else F
//! ```

use crate::measure::facts::{SchemaScore, ServerReport};

/// The score of a server with tools (its findings already filled in); `None` without tools.
pub fn schema_score(s: &ServerReport) -> Option<SchemaScore> {
    if s.tools.is_empty() {
        return None;
    }
    let schema_tokens: usize = s.tools.iter().map(|t| t.model_tokens).sum();
    let recoverable: usize = s
        .tools
        .iter()
        .map(|t| {
            t.fixed_model_tokens
                .map_or(0, |f| t.model_tokens.saturating_sub(f))
        })
        .sum::<usize>()
        // the tax between tools: each repeated parameter hidden (optional) or stated once
        + s.shared_parameters
            .iter()
            .map(|g| g.best_saving())
            .sum::<usize>();
    let recoverable = recoverable.min(schema_tokens);
    let waste = 50.0 * recoverable as f64 / schema_tokens.max(1) as f64;
    let findings: f64 = s
        .findings
        .iter()
        .filter(|f| super::rule(&f.rule).is_some_and(|r| r.judges_definitions))
        .map(|f| match f.severity.as_str() {
            "error" => 10.0,
            "warning" => 4.0,
            _ => 1.0,
        })
        .sum::<f64>()
        .min(30.0);
    let size = (schema_tokens as f64 / 2_500.0).min(20.0);
    let score = (100.0 - waste - findings - size).round().max(0.0) as u8;
    Some(SchemaScore {
        score,
        grade: grade(score).into(),
        schema_tokens,
        recoverable_tokens: recoverable,
    })
}

pub fn grade(score: u8) -> &'static str {
    match score {
        90.. => "A",
        80..=89 => "B",
        70..=79 => "C",
        60..=69 => "D",
        _ => "F",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::facts::{Finding, ToolCost};

    #[test]
    fn the_score_is_the_readme_formula() {
        let mut s = ServerReport::new("s", "stdio", "x", "t");
        assert!(schema_score(&s).is_none());
        let tool = |model: usize, fixed: usize| ToolCost {
            model_tokens: model,
            fixed_model_tokens: Some(fixed),
            ..ToolCost::default()
        };
        s.tools = vec![tool(6_000, 5_000), tool(4_000, 4_000)];
        let f = |rule: &str, severity: &str| Finding {
            rule: rule.into(),
            severity: severity.into(),
            tool: None,
            message: String::new(),
            fix: String::new(),
            saves_tokens: None,
            saves_wire_tokens: None,
        };
        s.findings = vec![
            f("long-description", "warning"),
            f("null-default", "info"),
            f("result-over-cap-unpaginated", "error"),
        ];
        // waste 50 x 1,000 / 10,000 = 5; findings 4 + 1 = 5 (results do not count); size 4
        let got = schema_score(&s).unwrap();
        assert_eq!((got.score, got.grade.as_str()), (86, "B"));
        assert_eq!((got.schema_tokens, got.recoverable_tokens), (10_000, 1_000));
        // a parameter repeated across tools adds what hiding it (or, required, stating it once)
        // saves: waste 50 x 3,000 / 10,000 = 15
        s.shared_parameters = vec![
            crate::measure::facts::SharedParameter {
                name: "tenant".into(),
                schema: "{}".into(),
                tools: vec!["a".into(); 5],
                required_in: 0,
                hide_saves_tokens: Some(1_500),
                state_once_saves_tokens: 1_400,
            },
            crate::measure::facts::SharedParameter {
                name: "owner".into(),
                schema: "{}".into(),
                tools: vec!["a".into(); 5],
                required_in: 5,
                hide_saves_tokens: None,
                state_once_saves_tokens: 500,
            },
        ];
        let got = schema_score(&s).unwrap();
        assert_eq!(got.recoverable_tokens, 3_000);
        assert_eq!(got.score, 76);
        assert_eq!(
            [grade(90), grade(89), grade(60), grade(59)],
            ["A", "B", "D", "F"]
        );
    }
}

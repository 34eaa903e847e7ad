//! Where telemetry goes, from the standard OpenTelemetry variables: the OTLP endpoint (one base,
//! or one per signal), the protocol (http/protobuf), the headers (their values are secrets:
//! never printed), the export timeout. The service name and resource attributes
//! (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`) are read by the SDK's own resource
//! detectors.

use std::time::Duration;

/// The collector's OTLP/HTTP port on this machine, when export is asked for by a flag alone.
pub const DEFAULT_ENDPOINT: &str = "http://localhost:4318";

/// A telemetry setting that cannot be used, naming the variable.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error("this mcp-budget was built without telemetry (the `telemetry` feature is off): build it with `--features telemetry` to export OTLP or serve Prometheus metrics")]
    NotBuilt,
    #[error("{var}={value}: mcp-budget exports OTLP over http/protobuf only (a collector's port 4318, not gRPC's 4317)")]
    Protocol { var: &'static str, value: String },
    #[error("{var}: `{value}` is not an http:// or https:// URL")]
    Endpoint { var: &'static str, value: String },
    #[error("OTEL_EXPORTER_OTLP_HEADERS: `{entry}` is not `name=value`")]
    Header { entry: String },
    #[error("{var}: `{value}` is not a number of milliseconds")]
    Timeout { var: &'static str, value: String },
    #[error("the OTLP {signal} exporter could not be built: {message}")]
    Build {
        signal: &'static str,
        message: String,
    },
}

/// Where and how spans and metrics are exported.
#[derive(Clone, PartialEq)]
pub struct OtlpConfig {
    pub traces_endpoint: String,
    pub metrics_endpoint: String,
    /// Header names and values; the values are secrets.
    pub headers: Vec<(String, String)>,
    /// How long one export may take before it is given up (and its data counted as dropped).
    pub timeout: Duration,
}

impl std::fmt::Debug for OtlpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl OtlpConfig {
    /// The configuration the variables give, read through `var`; `None` when no endpoint is
    /// set and `forced` (a flag) is false, or when `OTEL_SDK_DISABLED=true`.
    pub fn from_env(
        forced: bool,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<OtlpConfig>, TelemetryError> {
        let get = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        if get("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        let base = get("OTEL_EXPORTER_OTLP_ENDPOINT");
        let traces = get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
        let metrics = get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT");
        if !forced && base.is_none() && traces.is_none() && metrics.is_none() {
            return Ok(None);
        }
        for name in [
            "OTEL_EXPORTER_OTLP_PROTOCOL",
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
        ] {
            if let Some(p) = get(name).filter(|p| p.trim() != "http/protobuf") {
                return Err(TelemetryError::Protocol {
                    var: name,
                    value: p,
                });
            }
        }
        let base_var = "OTEL_EXPORTER_OTLP_ENDPOINT";
        let base = base.unwrap_or_else(|| DEFAULT_ENDPOINT.to_string());
        let signal = |own: Option<String>, own_var: &'static str, path: &str| {
            match own {
                Some(url) => checked(own_var, url.trim().to_string()),
                // the base endpoint gets the signal's path, as the OTLP exporter spec says
                None => checked(base_var, base.trim().to_string())
                    .map(|b| format!("{}/{path}", b.trim_end_matches('/'))),
            }
        };
        let traces_endpoint = signal(traces, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "v1/traces")?;
        let metrics_endpoint =
            signal(metrics, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "v1/metrics")?;
        let headers = match get("OTEL_EXPORTER_OTLP_HEADERS") {
            Some(h) => parse_headers(&h)?,
            None => Vec::new(),
        };
        let timeout = match get("OTEL_EXPORTER_OTLP_TIMEOUT") {
            Some(ms) => {
                Duration::from_millis(ms.trim().parse().map_err(|_| TelemetryError::Timeout {
                    var: "OTEL_EXPORTER_OTLP_TIMEOUT",
                    value: ms.clone(),
                })?)
            }
            None => Duration::from_secs(10),
        };
        Ok(Some(OtlpConfig {
            traces_endpoint,
            metrics_endpoint,
            headers,
            timeout,
        }))
    }

    /// The configuration in words, header values redacted: "http/protobuf to
    /// http://127.0.0.1:4318/v1/traces and .../v1/metrics (headers: authorization=<redacted>)".
    pub fn describe(&self) -> String {
        let mut out = format!(
            "OTLP http/protobuf to {} and {}",
            self.traces_endpoint, self.metrics_endpoint
        );
        if !self.headers.is_empty() {
            let names: Vec<String> = self
                .headers
                .iter()
                .map(|(k, _)| format!("{k}=<redacted>"))
                .collect();
            out.push_str(&format!(" (headers: {})", names.join(", ")));
        }
        out
    }

    /// The header values: secrets every message of the exporters is cleaned of.
    pub fn secrets(&self) -> Vec<String> {
        self.headers.iter().map(|(_, v)| v.clone()).collect()
    }

    /// `text` with every header value replaced (an exporter's error may quote a request).
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for secret in self.secrets().iter().filter(|s| s.len() >= 3) {
            out = out.replace(secret.as_str(), "<redacted>");
        }
        out
    }
}

fn checked(var: &'static str, url: String) -> Result<String, TelemetryError> {
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(url)
    } else {
        Err(TelemetryError::Endpoint { var, value: url })
    }
}

/// `name=value,name2=value2`, values percent-decoded (the W3C baggage form the spec uses).
fn parse_headers(text: &str) -> Result<Vec<(String, String)>, TelemetryError> {
    text.split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(|entry| {
            let (k, v) = entry
                .split_once('=')
                .filter(|(k, _)| !k.trim().is_empty())
                .ok_or_else(|| TelemetryError::Header {
                    // the name alone: the value is a secret
                    entry: entry.split('=').next().unwrap_or("").to_string(),
                })?;
            let v = v.trim();
            let v = crate::config::percent_decoded(v).unwrap_or_else(|| v.to_string());
            Ok((k.trim().to_string(), v))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn no_endpoint_no_flag_is_off_and_a_flag_alone_is_the_local_collector() {
        assert_eq!(OtlpConfig::from_env(false, &env(&[])).unwrap(), None);
        let c = OtlpConfig::from_env(true, &env(&[])).unwrap().unwrap();
        assert_eq!(c.traces_endpoint, "http://localhost:4318/v1/traces");
        assert_eq!(c.metrics_endpoint, "http://localhost:4318/v1/metrics");
        let off = [
            ("OTEL_SDK_DISABLED", "true"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://x"),
        ];
        assert_eq!(OtlpConfig::from_env(true, &env(&off)).unwrap(), None);
    }

    #[test]
    fn the_base_endpoint_gets_each_signals_path_and_a_signals_own_is_used_as_given() {
        let e = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9/otlp/"),
            ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://m:1/custom"),
        ];
        let c = OtlpConfig::from_env(false, &env(&e)).unwrap().unwrap();
        assert_eq!(c.traces_endpoint, "http://127.0.0.1:9/otlp/v1/traces");
        assert_eq!(c.metrics_endpoint, "http://m:1/custom");
    }

    #[test]
    fn grpc_and_bad_values_are_errors_that_name_the_variable() {
        let e = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ];
        let err = OtlpConfig::from_env(false, &env(&e))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("OTEL_EXPORTER_OTLP_PROTOCOL=grpc"), "{err}");
        let e = [("OTEL_EXPORTER_OTLP_ENDPOINT", "h:4318")];
        let err = OtlpConfig::from_env(false, &env(&e))
            .unwrap_err()
            .to_string();
        assert!(err.contains("`h:4318` is not an http"), "{err}");
        let e = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "authorization"),
        ];
        let err = OtlpConfig::from_env(false, &env(&e))
            .unwrap_err()
            .to_string();
        assert!(err.contains("`authorization` is not"), "{err}");
    }

    #[test]
    fn header_values_are_decoded_and_never_described() {
        let e = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "Authorization=Bearer%20s3cr3t-token,x-tenant=acme",
            ),
        ];
        let c = OtlpConfig::from_env(false, &env(&e)).unwrap().unwrap();
        assert_eq!(
            c.headers[0],
            ("Authorization".into(), "Bearer s3cr3t-token".into())
        );
        let words = format!("{} {:?}", c.describe(), c);
        assert!(
            !words.contains("s3cr3t") && !words.contains("acme"),
            "{words}"
        );
        assert!(words.contains("Authorization=<redacted>"), "{words}");
        assert_eq!(
            c.redact("401 for Bearer s3cr3t-token at acme"),
            "401 for <redacted> at <redacted>"
        );
    }
}

//! Prometheus' HTTP API over `ureq` (the recorder's one HTTP stack): instant queries at a
//! given time, range queries cut into pieces Prometheus accepts, the target list (scrape
//! intervals) and readiness. Replies are parsed through serde types; values arrive as
//! strings (`"4"`, `"NaN"`, `"+Inf"`) and are turned into numbers here. An error names the
//! URL asked and Prometheus' own `error` text.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::http::Client;

/// A series' labels, `__name__` included.
pub type Labels = BTreeMap<String, String>;

/// Prometheus refuses a range query over more points than this per series.
pub const MAX_POINTS: u64 = 11_000;

/// A query Prometheus did not answer, or answered with an error.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{url}: {text}")]
pub struct ApiError {
    /// The URL asked, query string included.
    pub url: String,
    /// The transport error, or Prometheus' `errorType: error` text.
    pub text: String,
}

/// One sample of an instant vector.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub labels: Labels,
    /// Unix seconds: the query's evaluation time.
    pub t: f64,
    pub value: f64,
}

impl Sample {
    /// Its metric name (`__name__`), empty when a function dropped it.
    pub fn name(&self) -> &str {
        self.labels.get("__name__").map_or("", String::as_str)
    }
}

/// One series of a range query: its points in time order. A gap (a failed scrape, a
/// replica down) is missing points, never a null.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeSeries {
    pub labels: Labels,
    pub points: Vec<(f64, f64)>,
}

/// An instant query's answer and how it was asked.
#[derive(Debug, Clone)]
pub struct InstantReply {
    pub url: String,
    /// Seconds the HTTP call took.
    pub latency_s: f64,
    pub samples: Vec<Sample>,
}

/// A scrape target from `/api/v1/targets`.
#[derive(Debug, Clone, Deserialize)]
pub struct Target {
    #[serde(default)]
    pub labels: Labels,
    /// A Prometheus duration (`1s`, `15s`, `1m30s`).
    #[serde(default, rename = "scrapeInterval")]
    pub scrape_interval: String,
    #[serde(default)]
    pub health: String,
}

impl Target {
    /// Its scrape interval in seconds, when the text is a duration.
    pub fn interval_s(&self) -> Option<f64> {
        duration_s(&self.scrape_interval)
    }
}

/// The reply envelope every endpoint shares.
#[derive(Deserialize)]
struct Envelope<T> {
    status: String,
    data: Option<T>,
    #[serde(rename = "errorType")]
    error_type: Option<String>,
    error: Option<String>,
}

/// `[time, "value"]`.
type Point = (f64, String);

#[derive(Deserialize)]
#[serde(tag = "resultType", content = "result", rename_all = "lowercase")]
enum QueryData {
    Vector(Vec<VectorItem>),
    Matrix(Vec<MatrixItem>),
    Scalar(Point),
    String(Point),
}

#[derive(Deserialize)]
struct VectorItem {
    metric: Labels,
    value: Point,
}

#[derive(Deserialize)]
struct MatrixItem {
    metric: Labels,
    values: Vec<Point>,
}

#[derive(Deserialize)]
struct TargetsData {
    #[serde(rename = "activeTargets", default)]
    active: Vec<Target>,
}

/// A value as Prometheus writes it: a decimal, `NaN`, `+Inf` or `-Inf`.
pub fn value(text: &str) -> Option<f64> {
    analyzer::prom::parse_value(text)
}

/// A Prometheus duration (`500ms`, `1s`, `1m30s`, `2h`) in seconds.
pub fn duration_s(text: &str) -> Option<f64> {
    let mut total = 0.0;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let n: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit = rest.bytes().take_while(u8::is_ascii_alphabetic).count();
        let seconds = match &rest[..unit] {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            "d" => 86_400.0,
            "w" => 604_800.0,
            "y" => 31_536_000.0,
            _ => return None,
        };
        total += n * seconds;
        rest = &rest[unit..];
    }
    Some(total)
}

/// A number for a query string: the shortest text that reads back the same.
fn num(x: f64) -> String {
    format!("{x}")
}

/// A Prometheus server's API, by its base URL.
#[derive(Clone)]
pub struct Prometheus {
    pub base: String,
    http: Client,
}

impl Prometheus {
    pub fn new(base: &str) -> Prometheus {
        Prometheus::with_timeout(base, Duration::from_secs(30))
    }

    pub fn with_timeout(base: &str, timeout: Duration) -> Prometheus {
        Prometheus {
            base: base.trim_end_matches('/').to_string(),
            http: Client::new(timeout),
        }
    }

    /// The URL of an API path with its parameters encoded.
    pub fn url(&self, path: &str, params: &[(&str, String)]) -> String {
        let mut query = form_urlencoded::Serializer::new(String::new());
        for (k, v) in params {
            query.append_pair(k, v);
        }
        let query = query.finish();
        if query.is_empty() {
            format!("{}{path}", self.base)
        } else {
            format!("{}{path}?{query}", self.base)
        }
    }

    /// A GET of an API path: its `data`, the URL and the seconds it took.
    fn get<T: DeserializeOwned>(
        &self,
        path: &str,
        params: &[(&str, String)],
    ) -> Result<(T, String, f64), ApiError> {
        let url = self.url(path, params);
        let fail = |text: String| ApiError {
            url: url.clone(),
            text,
        };
        let t0 = Instant::now();
        let reply = self.http.get(&url).map_err(|e| fail(e.0))?;
        let latency = t0.elapsed().as_secs_f64();
        let envelope: Envelope<T> = serde_json::from_slice(&reply.body).map_err(|e| {
            let body = reply.text();
            let shown: String = body.chars().take(200).collect();
            fail(format!(
                "HTTP {} and not Prometheus' API ({e}): {shown}",
                reply.status
            ))
        })?;
        match (envelope.status.as_str(), envelope.data) {
            ("success", Some(data)) => Ok((data, url, latency)),
            _ => Err(fail(match (envelope.error_type, envelope.error) {
                (Some(kind), Some(text)) => format!("{kind}: {text}"),
                (None, Some(text)) => text,
                _ => format!("HTTP {} with status {:?}", reply.status, envelope.status),
            })),
        }
    }

    /// `GET /-/ready` answered 200.
    pub fn ready(&self) -> Result<(), ApiError> {
        let url = format!("{}/-/ready", self.base);
        match self.http.get(&url) {
            Ok(r) if r.status == 200 => Ok(()),
            Ok(r) => Err(ApiError {
                url,
                text: format!("HTTP {}: {}", r.status, r.text().trim()),
            }),
            Err(e) => Err(ApiError { url, text: e.0 }),
        }
    }

    /// An instant query evaluated at `at` (unix seconds).
    pub fn instant(&self, query: &str, at: f64) -> Result<InstantReply, ApiError> {
        let params = [("query", query.to_string()), ("time", num(at))];
        let (data, url, latency_s) = self.get::<QueryData>("/api/v1/query", &params)?;
        let samples = match data {
            QueryData::Vector(items) => items
                .into_iter()
                .map(|i| sample(i.metric, i.value))
                .collect(),
            QueryData::Scalar(p) | QueryData::String(p) => vec![sample(Labels::new(), p)],
            QueryData::Matrix(_) => {
                return Err(ApiError {
                    url,
                    text: "a range vector where an instant vector was expected".into(),
                })
            }
        };
        Ok(InstantReply {
            url,
            latency_s,
            samples,
        })
    }

    /// A range query from `start` to `end` every `step` seconds, asked in pieces of at
    /// most [`MAX_POINTS`] points; each series' points joined in time order. The URL of
    /// the first piece comes back with them.
    pub fn range(
        &self,
        query: &str,
        start: f64,
        end: f64,
        step: f64,
    ) -> Result<(Vec<RangeSeries>, String), ApiError> {
        let mut joined: BTreeMap<Labels, Vec<(f64, f64)>> = BTreeMap::new();
        let mut first_url = None;
        for (from, to) in pieces(start, end, step) {
            let params = [
                ("query", query.to_string()),
                ("start", num(from)),
                ("end", num(to)),
                ("step", num(step)),
            ];
            let (data, url, _) = self.get::<QueryData>("/api/v1/query_range", &params)?;
            let QueryData::Matrix(items) = data else {
                return Err(ApiError {
                    url,
                    text: "not a range vector".into(),
                });
            };
            first_url.get_or_insert(url);
            for item in items {
                let points = joined.entry(item.metric).or_default();
                points.extend(
                    item.values
                        .iter()
                        .filter_map(|(t, v)| value(v).map(|v| (*t, v))),
                );
            }
        }
        let series = joined
            .into_iter()
            .map(|(labels, points)| RangeSeries { labels, points })
            .collect();
        Ok((series, first_url.unwrap_or_else(|| self.base.clone())))
    }

    /// The active scrape targets.
    pub fn targets(&self) -> Result<Vec<Target>, ApiError> {
        let params = [("state", "active".to_string())];
        let (data, _, _) = self.get::<TargetsData>("/api/v1/targets", &params)?;
        Ok(data.active)
    }
}

fn sample(labels: Labels, (t, v): Point) -> Sample {
    Sample {
        labels,
        t,
        // A value that is not a number is kept as NaN: Prometheus never writes one.
        value: value(&v).unwrap_or(f64::NAN),
    }
}

/// `[start, end]` cut into pieces of at most [`MAX_POINTS`] steps each; the next piece
/// starts one step after the last one ended, so no point is asked twice.
pub fn pieces(start: f64, end: f64, step: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    if !(step > 0.0 && start <= end) {
        return out;
    }
    let span = step * (MAX_POINTS - 1) as f64;
    let mut from = start;
    while from <= end {
        let to = (from + span).min(end);
        out.push((from, to));
        from = to + step;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(duration_s("1s"), Some(1.0));
        assert_eq!(duration_s("500ms"), Some(0.5));
        assert_eq!(duration_s("1m30s"), Some(90.0));
        assert_eq!(duration_s("2h"), Some(7200.0));
        for bad in ["", "s", "1", "1x", "-1s"] {
            assert_eq!(duration_s(bad), None, "{bad}");
        }
    }

    #[test]
    fn long_ranges_are_cut_below_the_limit() {
        assert_eq!(pieces(0.0, 10.0, 1.0), [(0.0, 10.0)]);
        let p = pieces(0.0, 25_000.0, 1.0);
        assert_eq!(
            p,
            [(0.0, 10_999.0), (11_000.0, 21_999.0), (22_000.0, 25_000.0)]
        );
        for (a, b) in &p {
            // Points per piece: both ends included.
            let points = (b - a) as u64 + 1;
            assert!(points <= MAX_POINTS, "{a}..{b}");
        }
        assert!(pieces(5.0, 4.0, 1.0).is_empty());
        assert!(pieces(0.0, 4.0, 0.0).is_empty());
    }

    #[test]
    fn replies_parse_with_string_values() {
        let vector = r#"{"status":"success","data":{"resultType":"vector","result":[
          {"metric":{"__name__":"vllm:num_requests_running","instance":"127.0.0.1:8031"},"value":[1796035594.72,"4"]},
          {"metric":{"__name__":"x","instance":"a"},"value":[1796035594.72,"+Inf"]}]}}"#;
        let e: Envelope<QueryData> = serde_json::from_str(vector).unwrap();
        let Some(QueryData::Vector(items)) = e.data else {
            panic!("not a vector")
        };
        let s: Vec<Sample> = items
            .into_iter()
            .map(|i| sample(i.metric, i.value))
            .collect();
        assert_eq!(s[0].name(), "vllm:num_requests_running");
        assert_eq!((s[0].t, s[0].value), (1796035594.72, 4.0));
        assert_eq!(s[1].value, f64::INFINITY);
        let scalar = r#"{"status":"success","data":{"resultType":"scalar","result":[1796035652.197,"NaN"]}}"#;
        let e: Envelope<QueryData> = serde_json::from_str(scalar).unwrap();
        assert!(matches!(e.data, Some(QueryData::Scalar((_, ref v))) if v == "NaN"));
        let error = r#"{"status":"error","errorType":"bad_data","error":"invalid parameter \"query\": 1:27: parse error"}"#;
        let e: Envelope<QueryData> = serde_json::from_str(error).unwrap();
        assert_eq!(e.error_type.as_deref(), Some("bad_data"));
        assert!(e.data.is_none());
    }

    #[test]
    fn query_strings_are_encoded() {
        let p = Prometheus::new("http://127.0.0.1:9/");
        assert_eq!(
            p.url(
                "/api/v1/query",
                &[("query", r#"{job="vllm"}"#.into()), ("time", num(1.5))]
            ),
            "http://127.0.0.1:9/api/v1/query?query=%7Bjob%3D%22vllm%22%7D&time=1.5"
        );
    }

    /// A server that answers every request with `status` and `body`, closing each
    /// connection.
    fn answering(status: u16, body: &'static str) -> String {
        use std::io::{BufRead, BufReader, Write};
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://127.0.0.1:{}", l.local_addr().unwrap().port());
        std::thread::spawn(move || {
            for conn in l.incoming().flatten() {
                let mut r = BufReader::new(conn);
                let mut line = String::new();
                while r.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                    line.clear();
                }
                let _ = write!(
                    r.into_inner(),
                    "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        base
    }

    #[test]
    fn errors_name_the_url_and_prometheus_text() {
        let base = answering(
            400,
            r#"{"status":"error","errorType":"bad_data","error":"invalid parameter \"query\": 1:27: parse error"}"#,
        );
        let e = Prometheus::new(&base).instant("up{", 5.0).unwrap_err();
        assert_eq!(e.url, format!("{base}/api/v1/query?query=up%7B&time=5"));
        assert_eq!(
            e.text,
            "bad_data: invalid parameter \"query\": 1:27: parse error"
        );
        let base = answering(502, "Bad Gateway");
        let e = Prometheus::new(&base).targets().unwrap_err();
        assert!(
            e.text.starts_with("HTTP 502 and not Prometheus' API")
                && e.text.ends_with(": Bad Gateway"),
            "{e}"
        );
        let e = Prometheus::new(&base).ready().unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("{base}/-/ready: HTTP 502: Bad Gateway")
        );
    }

    #[test]
    fn a_range_is_joined_across_pieces() {
        let base = answering(
            200,
            r#"{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"instance":"a"},"values":[[1,"1"],[2,"NaN"]]}]}}"#,
        );
        // Three pieces, each answered with the same two points: joined in order.
        let (series, url) = Prometheus::new(&base)
            .range("x", 0.0, 25_000.0, 1.0)
            .unwrap();
        assert!(url.contains("start=0&end=10999&step=1"), "{url}");
        assert_eq!(series.len(), 1);
        assert_eq!(series[0].points.len(), 6);
        assert!(series[0].points[1].1.is_nan());
    }
}

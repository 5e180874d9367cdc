//! AIPerf's own scrape of the server's `/metrics` (`server_metrics_export.json`, schema
//! 1.1, written beside `profile_export_aiperf.json`). AIPerf reads `/metrics` about every
//! 333 ms during its run and keeps, per metric family and endpoint, a counter's `total`
//! (the increase over its profiling window) and a gauge's statistics over the samples in
//! that window. Family names are Prometheus's with a counter's `_total` left off.
//!
//! With no recording beside it, this is the server's side of the run: T1 reads the
//! preemption counter, T8 the running gauge's highest sample, T15 the finished-requests
//! and generated-tokens counters (`checks/scraped.rs`), each at AIPerf's resolution.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::engine::Engine;
use crate::input::{decode_strict, InputError};
use crate::json;
use crate::plausible::{self, Implausible, Quantity};

/// The document as AIPerf writes it; unknown keys are ignored.
#[derive(Debug, Deserialize)]
struct ExportDoc {
    #[serde(default)]
    aiperf_version: Option<String>,
    #[serde(default)]
    summary: Option<SummaryDoc>,
    #[serde(default)]
    metrics_phase: Option<String>,
    metrics: BTreeMap<String, FamilyDoc>,
    /// The same over AIPerf's warm-up phase, when one ran.
    #[serde(default)]
    warmup_metrics: Option<BTreeMap<String, FamilyDoc>>,
}

#[derive(Debug, Deserialize)]
struct SummaryDoc {
    #[serde(default)]
    endpoint_info: BTreeMap<String, EndpointDoc>,
}

/// How often AIPerf read one endpoint.
#[derive(Debug, Deserialize)]
struct EndpointDoc {
    #[serde(default)]
    median_update_interval_ms: Option<f64>,
    #[serde(default)]
    unique_updates: Option<f64>,
}

#[derive(Debug, Deserialize)]
struct FamilyDoc {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    series: Vec<SeriesDoc>,
}

#[derive(Debug, Deserialize)]
struct SeriesDoc {
    #[serde(default)]
    endpoint_url: Option<String>,
    #[serde(default)]
    stats: Option<StatsDoc>,
}

/// The statistics inferlint reads: a counter's `total`, a gauge's `max`.
#[derive(Debug, Deserialize)]
struct StatsDoc {
    #[serde(default)]
    total: Option<f64>,
    #[serde(default)]
    max: Option<f64>,
}

/// One metric family as read: a counter's total summed over its series, or a gauge's
/// highest sample. Absent when a series lacks it or the gate refused it.
#[derive(Debug, Clone, PartialEq)]
struct Family {
    kind: String,
    value: Option<f64>,
    /// The refusal that left the value out.
    refused: Option<Implausible>,
    /// Gauges read from several endpoints: their highest samples do not add up.
    endpoints: usize,
}

/// What the scrape says about one metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reading<'a> {
    Value(f64),
    /// Not scraped, or a series without the statistic.
    Missing,
    /// Gauges from several endpoints: no single highest value.
    SeveralEndpoints(usize),
    Refused(&'a Implausible),
}

/// What a verdict read from the scrape, for [`AiperfServer::resolution`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// A gauge's highest sample.
    Gauge,
    /// Counters over the measured window.
    Counters,
    /// Counters over the warm-up and measured windows together.
    CountersWithWarmup,
}

/// AIPerf's scrape of the server, read.
#[derive(Debug, Clone, PartialEq)]
pub struct AiperfServer {
    /// "AIPerf 0.13.0".
    pub tool: String,
    /// The engine its metric names belong to.
    pub engine: Option<Engine>,
    /// AIPerf's phase the statistics cover (`profiling`).
    pub phase: Option<String>,
    /// The median time between changed scrapes, in ms (the first endpoint's).
    pub interval_ms: Option<f64>,
    /// Scrapes that changed something.
    pub updates: Option<i64>,
    families: BTreeMap<String, Family>,
    /// The families over the warm-up phase, when AIPerf ran one. Its window meets the
    /// measured one while warm-up requests still run, so a counter's increase splits
    /// between the two at AIPerf's sampling; both together cover both phases.
    warmup: Option<BTreeMap<String, Family>>,
    /// Values the plausibility gate refused.
    pub implausible: Vec<Implausible>,
}

impl AiperfServer {
    /// Reads `server_metrics_export.json`; `file` names it in errors.
    pub fn read(file: &str, bytes: &[u8]) -> Result<AiperfServer, InputError> {
        let text = decode_strict(file, bytes)?;
        let value = json::parse(text).map_err(|e| InputError::new(file, Some(e.line), e.reason))?;
        let doc: ExportDoc =
            json::from_json(&value).map_err(|e| InputError::new(file, None, e.to_string()))?;
        Ok(Self::from_doc(file, doc))
    }

    fn from_doc(file: &str, doc: ExportDoc) -> AiperfServer {
        let mut implausible = Vec::new();
        let mut read_all = |key: &str, docs: BTreeMap<String, FamilyDoc>| {
            docs.into_iter()
                .map(|(name, f)| {
                    let family = read_family(file, key, &name, &f, &mut implausible);
                    (name, family)
                })
                .collect::<BTreeMap<String, Family>>()
        };
        let families = read_all("metrics", doc.metrics);
        let warmup = doc.warmup_metrics.map(|w| read_all("warmup_metrics", w));
        let endpoint = doc
            .summary
            .as_ref()
            .and_then(|s| s.endpoint_info.values().next());
        let mut gate = |field: &str, q, v: Option<f64>| {
            plausible::keep(q, v, (file, None), field, &mut implausible)
        };
        let interval_ms = gate(
            "summary.endpoint_info.median_update_interval_ms",
            Quantity::Measure,
            endpoint.and_then(|e| e.median_update_interval_ms),
        );
        let updates = gate(
            "summary.endpoint_info.unique_updates",
            Quantity::Count,
            endpoint.and_then(|e| e.unique_updates),
        )
        .map(|x| x.trunc() as i64);
        let engine = Engine::from_metric_names(families.keys().map(String::as_str));
        let version = doc
            .aiperf_version
            .map(|v| format!(" {v}"))
            .unwrap_or_default();
        AiperfServer {
            tool: format!("AIPerf{version}"),
            engine,
            phase: doc.metrics_phase,
            interval_ms,
            updates,
            families,
            warmup,
            implausible,
        }
    }

    /// A counter's increase over AIPerf's window, by its Prometheus name
    /// (`vllm:num_preemptions_total`; AIPerf leaves `_total` off).
    pub fn counter(&self, name: &str) -> Reading<'_> {
        counter_in(&self.families, name)
    }

    /// Whether AIPerf ran a warm-up phase and scraped over it.
    pub fn has_warmup(&self) -> bool {
        self.warmup.is_some()
    }

    /// A counter's increase over the warm-up and measured windows together (missing
    /// without a warm-up).
    pub fn counter_with_warmup(&self, name: &str) -> Reading<'_> {
        let Some(warmup) = &self.warmup else {
            return Reading::Missing;
        };
        match (counter_in(warmup, name), self.counter(name)) {
            (Reading::Value(a), Reading::Value(b)) => Reading::Value(a + b),
            (bad @ Reading::Refused(_), _) | (_, bad @ Reading::Refused(_)) => bad,
            _ => Reading::Missing,
        }
    }

    /// A gauge's highest sample over AIPerf's window.
    pub fn gauge_max(&self, name: &str) -> Reading<'_> {
        let family = self.families.get(name).filter(|f| f.kind == "gauge");
        match family {
            Some(f) if f.endpoints > 1 => Reading::SeveralEndpoints(f.endpoints),
            _ => reading(family),
        }
    }

    /// Whether AIPerf scraped a gauge of this name (the SGLang eviction witness).
    pub fn has_gauge(&self, name: &str) -> bool {
        self.families.get(name).is_some_and(|f| f.kind == "gauge")
    }

    /// How finely AIPerf saw the server, for messages: "at the resolution AIPerf 0.13.0
    /// sampled (/metrics read every 334 ms; counters over its profiling window)"; for a
    /// gauge, that a peak between two reads is not seen.
    pub fn resolution(&self, seen: Seen) -> String {
        let every = self
            .interval_ms
            .map(|ms| format!(" every {} ms", ms.round()))
            .unwrap_or_default();
        let phase = self.phase.as_deref().unwrap_or("measured");
        let what = match seen {
            Seen::Gauge => "a peak between two reads is not seen".to_string(),
            Seen::Counters => format!("counters over its {phase} window"),
            Seen::CountersWithWarmup => format!("counters over its warm-up and {phase} windows"),
        };
        format!(
            "at the resolution {} sampled (/metrics read{every}; {what})",
            self.tool
        )
    }
}

fn counter_in<'a>(families: &'a BTreeMap<String, Family>, name: &str) -> Reading<'a> {
    let stripped = name.strip_suffix("_total").unwrap_or(name);
    let family = [name, stripped]
        .into_iter()
        .find_map(|n| families.get(n).filter(|f| f.kind == "counter"));
    reading(family)
}

fn reading(family: Option<&Family>) -> Reading<'_> {
    match family {
        None => Reading::Missing,
        Some(f) => match (&f.refused, f.value) {
            (Some(bad), _) => Reading::Refused(bad),
            (None, Some(v)) => Reading::Value(v),
            (None, None) => Reading::Missing,
        },
    }
}

/// A family's value: a counter's totals summed, a gauge's highest `max`; each series'
/// value through the gate.
fn read_family(
    file: &str,
    key: &str,
    name: &str,
    f: &FamilyDoc,
    out: &mut Vec<Implausible>,
) -> Family {
    let counter = f.kind == "counter";
    // The gauges checks read count requests; another gauge is kept only when finite and
    // never reported (it decides nothing).
    let q = match () {
        _ if counter => Some(Quantity::Counter),
        _ if name.contains("requests") || name.contains("reqs") => Some(Quantity::Requests),
        _ => None,
    };
    let mut endpoints: Vec<&str> = f
        .series
        .iter()
        .map(|s| s.endpoint_url.as_deref().unwrap_or(""))
        .collect();
    endpoints.sort_unstable();
    endpoints.dedup();
    let mut family = Family {
        kind: f.kind.clone(),
        value: None,
        refused: None,
        endpoints: endpoints.len(),
    };
    if f.kind != "counter" && f.kind != "gauge" {
        return family;
    }
    let mut values = Vec::new();
    for (i, s) in f.series.iter().enumerate() {
        let stat = if counter { "total" } else { "max" };
        let x = s
            .stats
            .as_ref()
            .and_then(|st| if counter { st.total } else { st.max });
        let Some(x) = x else {
            return family; // one series without it: the sum or peak is unknown
        };
        let field = format!("{key}[{name:?}].series[{i}].stats.{stat}");
        let mut found = Vec::new();
        let kept = match q {
            Some(q) => plausible::keep(q, Some(x), (file, None), &field, &mut found),
            None => x.is_finite().then_some(x),
        };
        match kept {
            Some(v) => values.push(v),
            None => {
                family.refused = found.first().cloned();
                out.extend(found);
                return family;
            }
        }
    }
    if values.is_empty() {
        return family;
    }
    family.value = Some(if counter {
        values.iter().sum()
    } else {
        values.iter().copied().fold(f64::NEG_INFINITY, f64::max)
    });
    family
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded() -> AiperfServer {
        let path = format!(
            "{}/../fixtures/loadtools/recorded/aiperf-c8/aiperf/server_metrics_export.json",
            env!("CARGO_MANIFEST_DIR")
        );
        AiperfServer::read("server_metrics_export.json", &std::fs::read(path).unwrap()).unwrap()
    }

    #[test]
    fn the_real_export() {
        let s = recorded();
        assert_eq!(s.tool, "AIPerf 0.13.0");
        assert_eq!(s.engine, Some(Engine::Vllm));
        assert_eq!(s.phase.as_deref(), Some("profiling"));
        assert_eq!(s.interval_ms, Some(333.517168));
        assert_eq!(s.updates, Some(20));
        let m = Engine::Vllm.metrics();
        assert_eq!(s.counter(m.evictions.unwrap()), Reading::Value(0.0));
        assert_eq!(s.counter(m.requests_finished), Reading::Value(24.0));
        assert_eq!(s.counter(m.generation_tokens), Reading::Value(2400.0));
        assert_eq!(s.gauge_max(m.running), Reading::Value(8.0));
        assert_eq!(s.gauge_max(m.waiting), Reading::Value(0.0));
        assert_eq!(
            s.counter(m.running),
            Reading::Missing,
            "a gauge is no counter"
        );
        assert_eq!(s.counter("vllm:nothing_total"), Reading::Missing);
        assert!(s.implausible.is_empty());
        assert!(s
            .resolution(Seen::Counters)
            .contains("every 334 ms; counters over its profiling"));
    }

    fn doc(metrics: &str) -> Result<AiperfServer, InputError> {
        let text = format!(r#"{{"aiperf_version": "0.13.0", "metrics": {{{metrics}}}}}"#);
        AiperfServer::read("s.json", text.as_bytes())
    }

    #[test]
    fn refused_and_missing_values_are_never_read() {
        let s = doc(r#""vllm:num_preemptions": {"type": "counter", "series": [
                {"stats": {"total": 1}}, {"stats": {"total": -3}}]},
            "vllm:num_requests_running": {"type": "gauge", "series": [
                {"endpoint_url": "a", "stats": {"max": 4}},
                {"endpoint_url": "b", "stats": {"max": 2}}]},
            "vllm:num_requests_waiting": {"type": "gauge", "series": [
                {"stats": {"max": 1e12}}]},
            "vllm:generation_tokens": {"type": "counter", "series": [
                {"stats": {"rate": 3}}]}"#)
        .unwrap();
        let bad = s.counter("vllm:num_preemptions_total");
        assert!(matches!(bad, Reading::Refused(i) if i.field.contains("series[1].stats.total")));
        assert_eq!(
            s.gauge_max("vllm:num_requests_running"),
            Reading::SeveralEndpoints(2)
        );
        assert!(matches!(
            s.gauge_max("vllm:num_requests_waiting"),
            Reading::Refused(_)
        ));
        assert_eq!(s.counter("vllm:generation_tokens_total"), Reading::Missing);
        assert_eq!(s.implausible.len(), 2);
        assert_eq!(s.interval_ms, None);
    }

    #[test]
    fn a_warm_up_splits_the_counters_at_its_boundary() {
        let path = format!(
            "{}/../fixtures/loadtools/aiperf-warmup/server_metrics_export.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let s = AiperfServer::read("s.json", &std::fs::read(path).unwrap()).unwrap();
        let m = Engine::Vllm.metrics();
        assert!(s.has_warmup());
        // 3 warm-up and 8 measured requests of 30 tokens: the measured window alone
        // misses the tokens its first requests made while the warm-up still ran.
        assert_eq!(s.counter(m.generation_tokens), Reading::Value(225.0));
        assert_eq!(
            s.counter_with_warmup(m.generation_tokens),
            Reading::Value(330.0)
        );
        assert_eq!(
            s.counter_with_warmup(m.requests_finished),
            Reading::Value(11.0)
        );
        assert!(!recorded().has_warmup());
        assert_eq!(
            recorded().counter_with_warmup(m.requests_finished),
            Reading::Missing
        );
    }

    #[test]
    fn bad_documents_name_the_file() {
        let e = AiperfServer::read("s.json", b"{\"metrics\": [1]}").unwrap_err();
        assert!(e.to_string().starts_with("s.json"), "{e}");
        let e = AiperfServer::read("s.json", b"{\n\"metrics\": {,}}").unwrap_err();
        assert!(e.to_string().contains("s.json:2"), "{e}");
        assert!(doc("").is_ok());
    }
}

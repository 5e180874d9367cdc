//! Metric snapshots: the JSON form (`*.snapshot.json`, the document `docs::SnapshotDoc`)
//! and bare Prometheus text (docs/run-folder.md#snapshots).

use crate::docs::{self, SnapshotDoc};
use crate::engine::Engine;
use crate::input::{decode_strict, InputError};
use crate::plausible::{self, Implausible, Quantity};
use crate::prom::Exposition;
use crate::series::column;

/// One timed reading of a server's metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub url: String,
    /// Unix seconds, midpoint of the request; NaN for bare text (no clock).
    pub t_wall: f64,
    pub t_mono_ns: Option<i64>,
    pub latency_s: Option<f64>,
    pub metrics: Exposition,
    /// Values the plausibility gate refused (`plausible`), each left out of the fields
    /// above: a refused clock field is absent (`t_wall` NaN), a refused sample is removed
    /// from `metrics`. Fields are named by their key or metric name; a sample's line is
    /// its line in the Prometheus text.
    pub implausible: Vec<Implausible>,
}

impl Snapshot {
    /// Reads either form: JSON when the text, after leading whitespace, starts with `{`.
    /// `file` names the file in errors and in a bare snapshot's `file:` URL.
    pub fn read(file: &str, bytes: &[u8]) -> Result<Snapshot, InputError> {
        let text = decode_strict(file, bytes)?;
        if text.trim_start().starts_with('{') {
            Self::read_json(file, text)
        } else {
            let metrics = Exposition::parse(text)
                .map_err(|e| InputError::new(file, Some(e.line), e.reason))?;
            let mut s = Snapshot {
                url: format!("file:{}", crate::text::base_name(file)),
                t_wall: f64::NAN,
                t_mono_ns: None,
                latency_s: None,
                metrics,
                implausible: Vec::new(),
            };
            s.gate_samples(file);
            Ok(s)
        }
    }

    fn read_json(file: &str, text: &str) -> Result<Snapshot, InputError> {
        let doc: SnapshotDoc = docs::read_text(file, text)?;
        let metrics = Exposition::parse(&doc.text).map_err(|e| {
            InputError::new(
                file,
                Some(e.line),
                format!(
                    "{} (line {} of the Prometheus text in `text`)",
                    e.reason, e.line
                ),
            )
        })?;
        let mut implausible = Vec::new();
        let at = (file, None);
        // NaN is how a snapshot says "no clock"; any other refused stamp reads the same.
        let t_wall = if doc.t_wall.is_nan()
            || plausible::gate(
                Quantity::WallClock,
                doc.t_wall,
                at,
                column::T_WALL,
                &mut implausible,
            ) {
            doc.t_wall
        } else {
            f64::NAN
        };
        let t_mono_ns = doc.t_mono_ns.filter(|&n| {
            plausible::gate(
                Quantity::MonoNs,
                n as f64,
                at,
                column::T_MONO_NS,
                &mut implausible,
            )
        });
        let latency_s = plausible::keep(
            Quantity::Seconds,
            doc.latency_s,
            at,
            column::LATENCY_S,
            &mut implausible,
        );
        let mut s = Snapshot {
            url: doc.url,
            t_wall,
            t_mono_ns,
            latency_s,
            metrics,
            implausible,
        };
        let from = s.implausible.len();
        s.gate_samples(file);
        for i in &mut s.implausible[from..] {
            i.part = Some("the Prometheus text in `text`");
        }
        Ok(s)
    }

    /// Removes the samples of the series checks read whose value cannot be what the
    /// series counts, recording each.
    fn gate_samples(&mut self, file: &str) {
        let found = &mut self.implausible;
        self.metrics.samples.retain(|s| match quantity_of(&s.name) {
            Some(q) => plausible::gate(q, s.value, (file, Some(s.line)), &s.name, found),
            None => true,
        });
    }

    /// The first refused value among `fields` (metric names or clock keys).
    pub fn implausible_in(&self, fields: &[&str]) -> Option<&Implausible> {
        plausible::first(&self.implausible, fields)
    }
}

/// The kind of number a metric the checks read holds, by its name in any engine's table;
/// `None` for the metrics no check reads (their values are kept as written).
pub fn quantity_of(name: &str) -> Option<Quantity> {
    for e in Engine::ALL {
        let m = e.metrics();
        let counters = [
            m.evictions,
            Some(m.generation_tokens),
            Some(m.prompt_tokens),
            Some(m.requests_finished),
        ];
        if counters.contains(&Some(name)) {
            return Some(Quantity::Counter);
        }
        // T17's prefix-cache counters, in prompt tokens.
        let prefix = e.prefix_cache();
        if prefix
            .hits
            .iter()
            .chain(prefix.queries)
            .any(|(n, _)| *n == name)
        {
            return Some(Quantity::Counter);
        }
        for base in [m.e2e_latency, m.ttft, m.queue_time] {
            if name
                .strip_prefix(base)
                .is_some_and(|rest| matches!(rest, "_sum" | "_count"))
            {
                return Some(Quantity::Counter);
            }
        }
        if [Some(m.running), Some(m.waiting), m.paused].contains(&Some(name)) {
            return Some(Quantity::Requests);
        }
        if name == m.kv_usage {
            return Some(Quantity::KvFraction);
        }
    }
    None
}

/// The engine a set of snapshots names, by the union of their metric names.
pub fn snapshots_engine(snaps: &[&Snapshot]) -> Option<Engine> {
    let mut names: Vec<&str> = snaps.iter().flat_map(|s| s.metrics.names()).collect();
    names.sort_unstable();
    names.dedup();
    Engine::from_metric_names(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_text_has_no_clock() {
        let s = Snapshot::read("dir/a.prom", b"x 1\n").unwrap();
        assert_eq!(s.url, "file:a.prom");
        assert!(s.t_wall.is_nan());
    }

    #[test]
    fn implausible_counters_and_clocks_are_refused_and_named() {
        let s = Snapshot::read(
            "run/after.prom",
            b"vllm:num_preemptions_total NaN\nvllm:generation_tokens_total 12\nother NaN\n",
        )
        .unwrap();
        assert_eq!(s.metrics.samples.len(), 2);
        let i = s.implausible_in(&["vllm:num_preemptions_total"]).unwrap();
        assert_eq!(
            i.to_string(),
            "run/after.prom:1: vllm:num_preemptions_total = NaN is not a number"
        );
        assert!(s
            .implausible_in(&["vllm:generation_tokens_total"])
            .is_none());
        let doc = br#"{"schema": "inferlint.snapshot/1", "url": "u", "t_wall": 1e308, "t_mono_ns": -4, "latency_s": 0.01, "text": "sglang:token_usage 2.5\n"}"#;
        let s = Snapshot::read("s.json", doc).unwrap();
        assert!(s.t_wall.is_nan());
        assert_eq!(s.t_mono_ns, None);
        let fields: Vec<&str> = s.implausible.iter().map(|i| i.field.as_str()).collect();
        assert_eq!(fields, ["t_wall", "t_mono_ns", "sglang:token_usage"]);
    }

    #[test]
    fn every_engines_prefix_cache_counters_are_counters() {
        for e in Engine::ALL {
            let p = e.prefix_cache();
            for (name, _) in p.hits.iter().chain(p.queries) {
                assert_eq!(quantity_of(name), Some(Quantity::Counter), "{name}");
            }
        }
        let s = Snapshot::read(
            "run/after.prom",
            b"sglang:prefill_effective_tokens_total{mode=\"input\"} 10\nsglang:prefill_effective_tokens_total{mode=\"device_hit\"} -3\n",
        )
        .unwrap();
        assert_eq!(s.metrics.samples.len(), 1);
        assert_eq!(
            s.implausible[0].to_string(),
            "run/after.prom:2: sglang:prefill_effective_tokens_total = -3 is negative where the quantity cannot be"
        );
    }

    #[test]
    fn json_form_and_errors() {
        let ok = br#"{"schema": "inferlint.snapshot/1", "url": "u", "t_wall": 1.5, "t_mono_ns": null, "latency_s": 0.01, "text": "x 1\n"}"#;
        let s = Snapshot::read("s.json", ok).unwrap();
        assert_eq!(s.t_wall, 1.5);
        assert_eq!(s.latency_s, Some(0.01));
        let wrong = br#"{"schema": "other/1", "url": "u", "t_wall": 1, "text": ""}"#;
        assert!(Snapshot::read("s.json", wrong)
            .unwrap_err()
            .reason
            .contains("schema"));
        let bad_text =
            br#"{"schema": "inferlint.snapshot/1", "url": "u", "t_wall": 1, "text": "x 1\ny z"}"#;
        let e = Snapshot::read("s.json", bad_text).unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.reason.contains("Prometheus text"));
        let e = Snapshot::read("s.json", b"{\"schema\": ").unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(Snapshot::read("s.json", b"\xff\xfe").is_err());
    }
}

//! What the recorder asks Prometheus for: the `--match` selector's matchers merged with
//! the metric names inferlint reads (`analyzer::engine`'s table), never a whole job (a
//! vLLM replica exports about 330 series, mostly histogram buckets, none of them read).

use analyzer::Engine;

/// A series selector given with `--match`: `{job="vllm"}`, `{namespace="llm",pod=~"vllm-.*"}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Selector {
    /// As given.
    pub text: String,
    /// The matchers between the braces, trimmed (may be empty).
    matchers: String,
}

impl Selector {
    /// Only label matchers in braces: the metric names are the recorder's to choose.
    pub fn parse(text: &str) -> Result<Selector, String> {
        let t = text.trim();
        let inner = t
            .strip_prefix('{')
            .and_then(|r| r.strip_suffix('}'))
            .ok_or_else(|| {
                format!("--match {text:?} is not a selector in braces, e.g. '{{job=\"vllm\"}}'")
            })?
            .trim()
            .trim_end_matches(',')
            .trim();
        if inner.contains("__name__") {
            return Err(format!(
                "--match {text:?} names metrics: give only the replicas' labels, e.g. '{{job=\"vllm\"}}'"
            ));
        }
        Ok(Selector {
            text: t.to_string(),
            matchers: inner.to_string(),
        })
    }

    /// The selector for these metric names: `{__name__=~"a|b",job="vllm"}`.
    pub fn with_names(&self, names: &[String]) -> String {
        let names = format!("__name__=~\"{}\"", names.join("|"));
        self.braces(&names)
    }

    /// The selector for one metric: `up{job="vllm"}`.
    pub fn metric(&self, name: &str) -> String {
        format!("{name}{}", self.braces(""))
    }

    fn braces(&self, first: &str) -> String {
        let parts: Vec<&str> = [first, self.matchers.as_str()]
            .into_iter()
            .filter(|p| !p.is_empty())
            .collect();
        format!("{{{}}}", parts.join(","))
    }
}

/// The engine's, or all three when it is not known yet.
fn engines(engine: Option<Engine>) -> Vec<Engine> {
    engine.map_or(Engine::ALL.to_vec(), |e| vec![e])
}

/// Every metric the checks read from a snapshot: the gauges, the counters, the latency
/// histograms' `_sum` and `_count`, vLLM's cache info and the prefix-cache counters.
pub fn snapshot_names(engine: Option<Engine>) -> Vec<String> {
    let mut names = series_names(engine);
    for e in engines(engine) {
        let m = e.metrics();
        names.push(m.requests_finished.to_string());
        for base in [m.e2e_latency, m.ttft, m.queue_time] {
            names.push(format!("{base}_sum"));
            names.push(format!("{base}_count"));
        }
        names.extend(m.cache_info.map(str::to_string));
    }
    dedup(names)
}

/// The metrics a series row holds.
pub fn series_names(engine: Option<Engine>) -> Vec<String> {
    let mut names = Vec::new();
    for e in engines(engine) {
        let m = e.metrics();
        names.extend(
            [
                Some(m.running),
                Some(m.waiting),
                Some(m.kv_usage),
                m.evictions,
                m.evictions_witness,
                m.paused,
                Some(m.generation_tokens),
                Some(m.prompt_tokens),
            ]
            .into_iter()
            .flatten()
            .map(str::to_string),
        );
        let prefix = e.prefix_cache();
        names.extend(
            prefix
                .hits
                .iter()
                .chain(prefix.queries)
                .map(|(n, _)| n.to_string()),
        );
    }
    dedup(names)
}

/// First occurrence kept; names are plain `[a-zA-Z0-9_:]`, so none needs escaping in a
/// regular expression.
fn dedup(names: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    names
        .into_iter()
        .filter(|n| seen.insert(n.clone()))
        .inspect(|n| {
            debug_assert!(n
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':'))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_merge_with_names() {
        let s = Selector::parse(r#" {job="vllm", pod=~"a.*",} "#).unwrap();
        assert_eq!(
            s.with_names(&["a".into(), "b:c".into()]),
            r#"{__name__=~"a|b:c",job="vllm", pod=~"a.*"}"#
        );
        assert_eq!(s.metric("up"), r#"up{job="vllm", pod=~"a.*"}"#);
        let all = Selector::parse("{}").unwrap();
        assert_eq!(all.with_names(&["a".into()]), r#"{__name__=~"a"}"#);
        assert_eq!(all.metric("up"), "up{}");
        for bad in ["job=\"vllm\"", "up{job=\"x\"}", "{__name__=\"x\"}", ""] {
            assert!(Selector::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn names_cover_what_the_checks_read() {
        let snap = snapshot_names(None);
        for n in [
            "vllm:num_preemptions_total",
            "vllm:request_success_total",
            "vllm:e2e_request_latency_seconds_sum",
            "vllm:cache_config_info",
            "sglang:num_retracted_reqs",
            "trtllm_num_paused_requests",
            "vllm:prefix_cache_queries_total",
        ] {
            assert!(snap.iter().any(|s| s == n), "{n}");
        }
        assert!(!snap.iter().any(|s| s.ends_with("_bucket")));
        let series = series_names(None);
        assert!(series.iter().all(|n| snap.contains(n)));
        assert!(!series.iter().any(|s| s == "vllm:request_success_total"));
        // Once the engine is known, only its names are asked.
        let vllm = snapshot_names(Some(Engine::Vllm));
        assert!(vllm.iter().all(|n| n.starts_with("vllm:")), "{vllm:?}");
        assert!(vllm.len() < snap.len());
    }
}

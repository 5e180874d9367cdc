//! SGLang's settings as people read them (`inferlint boot-facts`): its `server_args` line
//! holds every setting (546 in 0.5.23, about 19 KB on one line), so the digest gives the
//! ones that decide capacity and speed, then the others whose value is not the declared
//! default. The whole dict stays in the facts record (`boot-facts --json`).
//!
//! The defaults are SGLang 0.5.23's, read from the release itself
//! (`sglang_defaults.txt`, made by `xtask/real/sglang/defaults.py`): only plain values are
//! listed there, so a setting decided at start-up (declared `None`) is never reported as
//! changed, and a setting another release added or renamed is left out rather than
//! guessed at.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::derive::py_str;
use super::{jsoneq, pylit};
use crate::json::Json;

/// Settings that decide how much the server holds and runs at once.
const CAPACITY: &[&str] = &[
    "max_total_tokens",
    "max_running_requests",
    "context_length",
    "mem_fraction_static",
    "page_size",
    "chunked_prefill_size",
    "max_prefill_tokens",
    "max_queued_requests",
    "schedule_policy",
    "schedule_conservativeness",
    "disable_radix_cache",
    "kv_cache_dtype",
    "tp_size",
    "dp_size",
    "pp_size",
];

/// Settings that decide how fast each step runs.
const SPEED: &[&str] = &[
    "device",
    "dtype",
    "quantization",
    "attention_backend",
    "prefill_attention_backend",
    "decode_attention_backend",
    "sampling_backend",
    "disable_cuda_graph",
    "cuda_graph_config",
    "cuda_graph_max_bs",
    "enable_torch_compile",
    "speculative_algorithm",
    "stream_interval",
];

/// SGLang 0.5.23's declared defaults, by setting.
static DEFAULTS: LazyLock<HashMap<&'static str, Json>> = LazyLock::new(|| {
    include_str!("sglang_defaults.txt")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (k, v) = l.split_once(" = ")?;
            Some((k, pylit::parse(v)?))
        })
        .collect()
});

/// The settings of one start, grouped.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingsDigest {
    /// How many settings the start printed.
    pub total: usize,
    /// (group title, settings as (name, value as text)), in order: capacity, speed, the
    /// others that differ from the defaults.
    pub groups: Vec<(&'static str, Vec<(String, String)>)>,
}

/// A setting's value as text: strings bare, other values as Python prints them, and the
/// graph configuration as each phase's backend and largest batch.
fn shown(name: &str, v: &Json) -> String {
    if let (Some(Json::Obj(phases)), "cuda_graph_config") = (Some(v), name) {
        let parts: Vec<String> = phases
            .iter()
            .map(|(phase, p)| {
                let backend = p.get("backend").map_or("?".into(), py_str);
                match p.get("max_bs") {
                    Some(bs) if backend != "disabled" => {
                        format!("{phase} {backend} (up to batch {})", py_str(bs))
                    }
                    _ => format!("{phase} {backend}"),
                }
            })
            .collect();
        return parts.join(", ");
    }
    py_str(v)
}

/// The digest of an SGLang `server_args` dict; none for anything else.
pub fn sglang(server_args: &Json) -> Option<SettingsDigest> {
    let Json::Obj(pairs) = server_args else {
        return None;
    };
    let pick = |names: &[&str]| -> Vec<(String, String)> {
        names
            .iter()
            .filter_map(|n| Some((n.to_string(), shown(n, server_args.get(n)?))))
            .collect()
    };
    let named = |k: &str| CAPACITY.contains(&k) || SPEED.contains(&k);
    let changed: Vec<(String, String)> = pairs
        .iter()
        .filter(|(k, v)| {
            !named(k)
                && DEFAULTS
                    .get(k.as_str())
                    .is_some_and(|d| !jsoneq::same(d, v))
        })
        .map(|(k, v)| (k.clone(), shown(k, v)))
        .collect();
    Some(SettingsDigest {
        total: pairs.len(),
        groups: vec![
            ("capacity", pick(CAPACITY)),
            ("speed", pick(SPEED)),
            ("other settings not at SGLang's defaults", changed),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_table_reads_whole() {
        let listed = include_str!("sglang_defaults.txt")
            .lines()
            .filter(|l| !l.starts_with('#'))
            .count();
        assert_eq!(DEFAULTS.len(), listed);
        assert_eq!(DEFAULTS.get("port"), Some(&Json::Int(30000)));
        assert_eq!(DEFAULTS.get("enable_metrics"), Some(&Json::Bool(false)));
        assert!(
            !DEFAULTS.contains_key("max_running_requests"),
            "decided at start-up"
        );
    }

    #[test]
    fn capacity_speed_and_what_differs() {
        let sa = pylit::parse(
            "{'model_path': '/m', 'max_total_tokens': 600, 'max_running_requests': 8, \
             'context_length': None, 'page_size': 1, 'attention_backend': 'torch_native', \
             'cuda_graph_config': {'decode': {'backend': 'disabled', 'max_bs': 32}, \
             'prefill': {'backend': 'breakable', 'max_bs': 4096}}, 'port': 31112, \
             'enable_metrics': True, 'schedule_policy': 'fcfs', 'tokenizer_mode': 'auto', \
             'brand_new_setting': 3}",
        )
        .unwrap();
        let d = sglang(&sa).unwrap();
        assert_eq!(d.total, 12);
        let group = |title: &str| -> Vec<(String, String)> {
            d.groups
                .iter()
                .find(|(t, _)| *t == title)
                .unwrap()
                .1
                .clone()
        };
        let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        assert_eq!(
            group("capacity"),
            pairs(&[
                ("max_total_tokens", "600"),
                ("max_running_requests", "8"),
                ("context_length", "None"),
                ("page_size", "1"),
                ("schedule_policy", "fcfs"),
            ])
        );
        assert_eq!(
            group("speed"),
            pairs(&[
                ("attention_backend", "torch_native"),
                (
                    "cuda_graph_config",
                    "decode disabled, prefill breakable (up to batch 4096)"
                ),
            ])
        );
        // Not at the default: the port and metrics; the tokenizer mode is; a setting the
        // table does not know is not guessed at.
        assert_eq!(
            group("other settings not at SGLang's defaults"),
            pairs(&[("port", "31112"), ("enable_metrics", "True")])
        );
        assert_eq!(sglang(&Json::Null), None);
    }
}

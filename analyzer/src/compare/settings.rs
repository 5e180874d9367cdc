//! The engine settings that change speed or capacity, read from each run's boot log: a
//! row for each one the runs disagree on, judged as a setting (the other rows are then not
//! like for like). Runs of different engines are not compared here: each engine's
//! defaults differ by design, and comparing engines is often the point.

use super::rows::{Kind, Spec};
use super::{Cell, Run};
use crate::bootlog::BootFacts;
use crate::engine::Engine;
use crate::json::Json;

/// One setting: its row's key and label, and the names the engines give its flag (vLLM's,
/// SGLang's, TensorRT-LLM's), looked up in the start's arguments.
struct Setting {
    key: &'static str,
    label: &'static str,
    names: &'static [&'static str],
}

const SETTINGS: &[Setting] = &[
    Setting {
        key: "setting_kv_cache_dtype",
        label: "KV cache dtype",
        names: &["kv_cache_dtype"],
    },
    Setting {
        key: "setting_block_size",
        label: "KV block size asked for",
        names: &["block_size", "page_size", "tokens_per_block"],
    },
    Setting {
        key: "setting_running_limit",
        label: "Running limit",
        names: &["max_num_seqs", "max_running_requests", "max_batch_size"],
    },
    Setting {
        key: "setting_batched_tokens",
        label: "Batched-token limit",
        names: &[
            "max_num_batched_tokens",
            "max_prefill_tokens",
            "max_num_tokens",
        ],
    },
    Setting {
        key: "setting_chunked_prefill",
        label: "Chunked prefill",
        names: &["enable_chunked_prefill", "chunked_prefill_size"],
    },
    Setting {
        key: "setting_prefix_caching",
        label: "Prefix caching",
        names: &[
            "enable_prefix_caching",
            "disable_radix_cache",
            "enable_block_reuse",
        ],
    },
    Setting {
        key: "setting_eager",
        label: "Eager mode (no CUDA graphs)",
        names: &["enforce_eager", "disable_cuda_graph"],
    },
    Setting {
        key: "setting_speculative",
        label: "Speculative decoding",
        names: &["speculative_config", "speculative_algorithm"],
    },
    Setting {
        key: "setting_quantization",
        label: "Quantization",
        names: &["quantization", "quant_config"],
    },
    Setting {
        key: "setting_tensor_parallel",
        label: "Tensor parallel size",
        names: &["tensor_parallel_size", "tp_size"],
    },
    Setting {
        key: "setting_pipeline_parallel",
        label: "Pipeline parallel size",
        names: &["pipeline_parallel_size", "pp_size"],
    },
];

/// A value as a reader writes it on the command line.
fn shown(v: &Json) -> String {
    match v {
        Json::Str(s) => s.clone(),
        Json::Null => "none".to_string(),
        other => other.to_compact(),
    }
}

/// The run's value of `s`: "max_num_seqs=8"; "default" where the log lists only the
/// arguments that differ from the defaults (vLLM's) and this one is not among them;
/// absent without a log or its arguments.
fn cell(f: &BootFacts, s: &Setting) -> Cell {
    let Some(args) = f.config_args.as_ref() else {
        return Cell::absent();
    };
    match s.names.iter().find_map(|n| args.get(n).map(|v| (n, v))) {
        Some((n, v)) => Cell::text(format!("{n}={}", shown(v))),
        None if f.non_default_args.is_some() => Cell::text("default"),
        None => Cell::absent(),
    }
}

/// The setting rows the runs disagree on; none when the runs with a log are not all of one
/// engine, or fewer than two have one.
pub(super) fn rows(runs: &[Run<'_>]) -> Vec<Spec> {
    let facts: Vec<Option<&BootFacts>> = runs.iter().map(|r| r.report.facts.as_ref()).collect();
    of_facts(&facts)
}

/// The rows, from each run's boot-log facts.
fn of_facts(facts: &[Option<&BootFacts>]) -> Vec<Spec> {
    let engines: Vec<Engine> = facts
        .iter()
        .flatten()
        .map(|f| f.engine.unwrap_or(Engine::Vllm))
        .collect();
    if engines.len() < 2 || engines.iter().any(|e| *e != engines[0]) {
        return Vec::new();
    }
    SETTINGS
        .iter()
        .map(|s| Spec {
            key: s.key.to_string(),
            label: s.label.to_string(),
            kind: Kind::Setting,
            cells: facts
                .iter()
                .map(|f| f.map_or_else(Cell::absent, |f| cell(f, s)))
                .collect(),
            unit: "",
        })
        .filter(|spec| {
            let present: Vec<&Cell> = spec.cells.iter().filter(|c| c.present()).collect();
            present.len() >= 2 && present.iter().any(|c| c.text != present[0].text)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vllm(args: &[(&str, Json)]) -> BootFacts {
        let nda = Json::Obj(
            args.iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        );
        BootFacts {
            engine: Some(Engine::Vllm),
            config_args: Some(nda.clone()),
            non_default_args: Some(nda),
            ..BootFacts::default()
        }
    }

    #[test]
    fn only_the_settings_that_differ_get_a_row() {
        let a = vllm(&[("model", "m".into()), ("max_num_seqs", Json::Int(32))]);
        let b = vllm(&[
            ("model", "m".into()),
            ("max_num_seqs", Json::Int(8)),
            ("kv_cache_dtype", "fp8".into()),
            ("enforce_eager", Json::Bool(true)),
        ]);
        let got: Vec<(String, Vec<String>)> = of_facts(&[Some(&a), Some(&b)])
            .into_iter()
            .map(|s| (s.key, s.cells.into_iter().map(|c| c.text).collect()))
            .collect();
        let want = |k: &str, x: &str, y: &str| (k.to_string(), vec![x.to_string(), y.to_string()]);
        assert_eq!(
            got,
            [
                want("setting_kv_cache_dtype", "default", "kv_cache_dtype=fp8"),
                want("setting_running_limit", "max_num_seqs=32", "max_num_seqs=8"),
                want("setting_eager", "default", "enforce_eager=true"),
            ]
        );
        // The same settings: no row; a run without a log is not a difference.
        assert!(of_facts(&[Some(&a), Some(&a)]).is_empty());
        assert!(of_facts(&[Some(&a), None]).is_empty());
        // Another engine: not compared.
        let mut sglang = vllm(&[("tp_size", Json::Int(2))]);
        sglang.engine = Some(Engine::Sglang);
        assert!(of_facts(&[Some(&a), Some(&sglang)]).is_empty());
    }
}

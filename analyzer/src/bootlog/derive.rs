//! Settings and facts derived after the scan (docs/run-folder.md#boot-log), in a fixed
//! order: a later fact may read an earlier one.

use super::facts::Extras;
use super::{trtllm, BootFacts};
use crate::engine::Engine;
use crate::json::{write_float, Json};

/// Python's truth value of a literal.
pub(crate) fn truthy(v: &Json) -> bool {
    match v {
        Json::Null => false,
        Json::Bool(b) => *b,
        Json::Int(i) => *i != 0,
        Json::Float(f) => *f != 0.0,
        Json::Str(s) => !s.is_empty(),
        Json::Arr(a) => !a.is_empty(),
        Json::Obj(o) => !o.is_empty(),
    }
}

/// Python's `str()` of a literal (a string as it is; others as their repr).
pub(crate) fn py_str(v: &Json) -> String {
    match v {
        Json::Str(s) => s.clone(),
        other => py_repr(other),
    }
}

fn py_repr(v: &Json) -> String {
    match v {
        Json::Null => "None".into(),
        Json::Bool(true) => "True".into(),
        Json::Bool(false) => "False".into(),
        Json::Int(i) => i.to_string(),
        Json::Float(f) if f.is_nan() => "nan".into(),
        Json::Float(f) if f.is_infinite() => if *f > 0.0 { "inf" } else { "-inf" }.into(),
        Json::Float(f) => {
            let mut s = String::new();
            write_float(&mut s, *f);
            s
        }
        Json::Str(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
        Json::Arr(a) => format!("[{}]", a.iter().map(py_repr).collect::<Vec<_>>().join(", ")),
        Json::Obj(o) => format!(
            "{{{}}}",
            o.iter()
                .map(|(k, v)| format!("'{k}': {}", py_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A value that is present and not `None`.
fn given<'a>(d: &'a Json, key: &str) -> Option<&'a Json> {
    d.get(key).filter(|v| !v.is_null())
}

/// Derives the facts from the scanned ones; `text` is the whole raw log.
pub(crate) fn derive(f: &mut BootFacts, x: &Extras, engine: Option<Engine>, text: &str) {
    f.engine = engine;
    if x.compiled {
        f.compiled_fresh = Some(true);
    } else if x.aot_loaded {
        f.compiled_fresh = Some(false);
    }
    sglang_settings(f, x);
    if engine == Some(Engine::Trtllm) {
        trtllm_settings(f, x, text);
    }
    vllm_settings(f);
    cpu_backend(f, x);
    if f.cudagraphs.is_none() && f.cudagraph_actual_gib.is_some() {
        f.cudagraphs = Some(true);
    }
    f.config_args = config_args(f);
    f.boot_seconds = boot_seconds(f, x);
}

/// Step 1: SGLang's `server_args`.
fn sglang_settings(f: &mut BootFacts, x: &Extras) {
    let Some(sa) = f.server_args.clone() else {
        return;
    };
    f.page_size = match sa.get("page_size") {
        Some(Json::Int(n)) => Some(*n),
        _ => None,
    };
    if let Some(Json::Int(n)) = sa.get("max_running_requests") {
        f.requested_running = Some(*n);
    }
    let backend = given(&sa, "attention_backend");
    f.requested_backend = match backend {
        Some(b) if !x.not_specified => Some(py_str(b)),
        _ => None,
    };
    if let Some(b) = backend {
        if f.selected_backends.is_empty() {
            f.selected_backends.push(py_str(b));
        }
    }
    f.speculative = Some(given(&sa, "speculative_algorithm").is_some());
    if f.cudagraphs != Some(false) {
        f.cudagraphs = Some(!sa.get("disable_cuda_graph").is_some_and(truthy));
    }
}

/// Step 2: TensorRT-LLM's settings line and the counts from its raw text.
fn trtllm_settings(f: &mut BootFacts, x: &Extras, text: &str) {
    if let Some(line) = &x.llm_args {
        let sa = trtllm::settings(line);
        if f.selected_backends.is_empty() {
            if let Some(b) = sa.get("attn_backend").and_then(Json::as_str) {
                f.selected_backends.push(b.to_string());
            }
        }
        f.speculative = Some(
            sa.get("speculative_config")
                .and_then(Json::as_str)
                .is_some_and(|s| s != "None"),
        );
        f.server_args = Some(sa);
    }
    f.served_in_log = Some(x.served);
    // Pauses are logged at INFO level: without INFO lines, or before any request was
    // served, none could have been recorded.
    f.pauses = (x.served > 0 && text.contains("[TRT-LLM] [I]")).then_some(x.pauses);
}

/// Step 3: vLLM's non-default arguments.
fn vllm_settings(f: &mut BootFacts) {
    let Some(nda) = &f.non_default_args else {
        return;
    };
    f.requested_backend = given(nda, "attention_backend").map(py_str);
    f.speculative = Some(given(nda, "speculative_config").is_some());
    if f.cudagraphs.is_none() && nda.get("enforce_eager").is_some_and(truthy) {
        f.cudagraphs = Some(false);
    }
}

/// vLLM's CPU platform (0.32) prints no selection line for its attention backend: every
/// model that is not MLA gets `CPU_ATTN` (`CpuPlatform.get_attn_backend_cls`; a requested
/// other backend is refused with "Cannot use … backend on CPU."), and MLA models print
/// `Using CPU_MLA backend.` or `Using AMX_MLA backend.`, read as a selection line.
fn cpu_backend(f: &mut BootFacts, x: &Extras) {
    if x.cpu_platform && f.selected_backends.is_empty() {
        f.selected_backends.push(CPU_ATTN.to_string());
    }
}

/// The CPU platform's attention backend for models that are not MLA.
pub(crate) const CPU_ATTN: &str = "CPU_ATTN";

/// vLLM's flag that sets the pool's block count. Like TensorRT-LLM's pool values
/// (`trtllm.rs`) it is not part of a start's identity: starts that differ only in it are
/// compared, and T4/T11 report the pools it set and the memory beside them (a departure:
/// the reference compares the whole dict, so such starts got no T4/T11 at all).
pub(crate) const POOL_OVERRIDE: &str = "num_gpu_blocks_override";

/// A dict without the given keys (any other value as it is).
fn without_keys(d: &Json, keys: &[&str]) -> Json {
    match d {
        Json::Obj(pairs) => Json::Obj(
            pairs
                .iter()
                .filter(|(k, _)| !keys.contains(&k.as_str()))
                .cloned()
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A start's identity, what T4 and T11 group starts by (docs/tripwires.md#t4).
fn config_args(f: &BootFacts) -> Option<Json> {
    if let Some(nda) = &f.non_default_args {
        return Some(without_keys(nda, &[POOL_OVERRIDE]));
    }
    let Json::Obj(pairs) = f.server_args.as_ref()? else {
        return None;
    };
    let trt = f.engine == Some(Engine::Trtllm);
    Some(Json::Obj(
        pairs
            .iter()
            .filter(|(k, _)| k != "random_seed")
            .map(|(k, v)| match v {
                Json::Str(s) if trt && k == "llm_args" => {
                    (k.clone(), Json::Str(trtllm::without_pool_values(s)))
                }
                _ => (k.clone(), v.clone()),
            })
            .collect(),
    ))
}

/// Seconds from the first to the last stamped line up to ready; null when not ready,
/// without stamps, or negative.
fn boot_seconds(f: &BootFacts, x: &Extras) -> Option<f64> {
    if !f.ready {
        return None;
    }
    let span = x.last_stamp? - x.first_stamp?;
    (span >= 0).then_some(span as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_truth_and_text() {
        assert!(!truthy(&Json::Null));
        assert!(!truthy(&Json::Str(String::new())));
        assert!(truthy(&Json::Int(2)));
        assert!(!truthy(&Json::Float(0.0)));
        assert_eq!(py_str(&Json::Str("FLASH_ATTN".into())), "FLASH_ATTN");
        assert_eq!(py_str(&Json::Bool(true)), "True");
        assert_eq!(py_str(&Json::Float(1e-5)), "1e-05");
        assert_eq!(
            py_str(&Json::Arr(vec!["a".into(), Json::Null])),
            "['a', None]"
        );
    }

    /// A line of vLLM 0.32 on the CPU platform, tagged as the real ones are.
    fn line(proc_name: &str, msg: &str) -> String {
        format!("({proc_name} pid=7) INFO 11-30 10:50:26 [x.py:1] {msg}")
    }

    fn cpu_log(args: &str) -> String {
        [
            line("APIServer", &format!("non-default args: {{'model': '/m', {args}}}")),
            line("EngineCore", "Initializing a V1 LLM engine (v0.32.0) with config: model='/m', device_config=cpu, compilation_config={'cudagraph_mode': <CUDAGraphMode.NONE: 0>, 'cudagraph_capture_sizes': []}"),
            line("Worker", "Explicitly set (1.0/22.71) GiB for KV cache on node 0."),
            line("EngineCore", "CPU KV cache size: 384 tokens, Maximum concurrency for 256 tokens per request: 1.50x"),
            "INFO:     Application startup complete.".to_string(),
        ]
        .join("\n")
    }

    /// The CPU platform names no backend for a model that is not MLA: it is CPU_ATTN, and
    /// a requested other backend was refused (T6 fails); no CUDA graphs.
    #[test]
    fn cpu_platform_backend_and_graphs() {
        let f = crate::bootlog::read_facts(&cpu_log("'block_size': 32"), None);
        assert_eq!(f.selected_backends, [CPU_ATTN]);
        assert_eq!(f.cudagraphs, Some(false));
        assert_eq!(f.kv_pool_tokens, Some(384));
        assert_eq!(f.available_kv_cache_gib, Some(1.0));
        assert_eq!(f.untested_version_note(), None);
        let asked = cpu_log("'attention_backend': 'FLASH_ATTN'");
        let logs = crate::bootlog::read_logs(&[("boot.log".into(), asked)], None);
        let t6 = crate::rules::runner::check_logs(&logs, false)
            .into_iter()
            .find(|r| r.id() == "T6")
            .unwrap();
        assert_eq!(
            t6.status,
            crate::rules::verdict::Status::Fail,
            "{}",
            t6.message
        );
        // An MLA model's own line is its selection, and a GPU log gets nothing derived.
        let mla = format!(
            "{}\n{}",
            cpu_log("'block_size': 16"),
            line("Worker", "Using CPU_MLA backend.")
        );
        assert_eq!(
            crate::bootlog::read_facts(&mla, None).selected_backends,
            ["CPU_MLA"]
        );
        let gpu = cpu_log("'block_size': 32").replace("device_config=cpu", "device_config=cuda");
        assert!(crate::bootlog::read_facts(&gpu, None)
            .selected_backends
            .is_empty());
    }

    /// Starts that differ only in `--num-gpu-blocks-override` are compared: T4 shows the
    /// pools the override set, T11 the memory beside them. Any other flag keeps them apart.
    #[test]
    fn starts_differing_only_in_the_pool_override_are_compared() {
        let read = |a: &str, b: &str| {
            crate::bootlog::read_logs(
                &[
                    ("a/boot.log".into(), cpu_log(a)),
                    ("b/boot.log".into(), cpu_log(b)),
                ],
                None,
            )
        };
        let ids = |logs| -> Vec<(String, String)> {
            crate::rules::runner::check_logs(logs, false)
                .into_iter()
                .filter(|r| ["T4", "T11"].contains(&r.id().as_str()))
                .map(|r| (r.id(), r.status.as_str().to_string()))
                .collect()
        };
        let logs = read(
            "'num_gpu_blocks_override': 12",
            "'num_gpu_blocks_override': 16",
        );
        let results = crate::rules::runner::check_logs(&logs, false);
        let t11 = results.iter().find(|r| r.id() == "T11").unwrap();
        assert_eq!(t11.status, crate::rules::verdict::Status::Pass);
        assert_eq!(
            t11.evidence_value(POOL_OVERRIDE)
                .map(|j| j.to_compact())
                .as_deref(),
            Some(r#"{"a/boot.log": 12, "b/boot.log": 16}"#)
        );
        assert!(t11
            .message
            .contains("apart from --num-gpu-blocks-override (12, 16)"));
        let logs = read("'num_gpu_blocks_override': 12", "'max_num_seqs': 4");
        assert_eq!(ids(&logs), []);
        let logs = read(
            "'num_gpu_blocks_override': 12",
            "'num_gpu_blocks_override': 12",
        );
        let same = crate::rules::runner::check_logs(&logs, false);
        assert!(same
            .iter()
            .all(|r| r.evidence_value(POOL_OVERRIDE).is_none()));
        assert_eq!(ids(&logs).len(), 2);
    }
}

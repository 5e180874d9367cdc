//! Boot logs against the recorded fixtures: every `check-log` case of
//! `expected-verdicts.json` (statuses and evidence), and the facts and classifier outcomes
//! the recorded logs show.

mod common;

use analyzer::rules::Tripwire;
use std::path::Path;

use analyzer::bootlog::{classify, read_facts, read_logs, BootFacts, BootLog};
use analyzer::json::{parse, Json};
use analyzer::rules::runner::check_logs;
use analyzer::rules::verdict::{exit_status, CheckResult};

fn logs(dir: &Path, rels: &[&str]) -> Vec<BootLog> {
    let inputs: Vec<(String, String)> = rels
        .iter()
        .map(|r| (r.to_string(), common::read(dir, r)))
        .collect();
    read_logs(&inputs, None)
}

fn facts(dir: &Path, rel: &str) -> BootFacts {
    read_facts(&common::read(dir, rel), None)
}

/// Numbers numerically (integers only where integers are expected), the rest
/// structurally; object key order does not matter.
fn same(want: &Json, got: &Json, at: &str, errs: &mut Vec<String>) {
    match (want, got) {
        (Json::Int(a), Json::Int(b)) if a == b => {}
        (Json::Float(a), Json::Float(b)) if (a - b).abs() <= 1e-9 * a.abs().max(1.0) => {}
        (Json::Arr(a), Json::Arr(b)) if a.len() == b.len() => {
            for (k, (x, y)) in a.iter().zip(b).enumerate() {
                same(x, y, &format!("{at}[{k}]"), errs);
            }
        }
        (Json::Obj(a), Json::Obj(b)) => {
            if a.len() != b.len() {
                errs.push(format!("{at}: keys {:?} vs {:?}", keys(want), keys(got)));
            }
            for (k, x) in a {
                match got.get(k) {
                    Some(y) => same(x, y, &format!("{at}.{k}"), errs),
                    None => errs.push(format!("{at}.{k}: missing")),
                }
            }
        }
        (a, b) if a == b => {}
        _ => errs.push(format!(
            "{at}: want {} got {}",
            want.to_compact(),
            got.to_compact()
        )),
    }
}

fn keys(v: &Json) -> Vec<&str> {
    v.as_object()
        .map(|o| o.iter().map(|(k, _)| k.as_str()).collect())
        .unwrap_or_default()
}

/// Results keyed as the expected verdicts are: `T5`, then `T5+` for a second one.
fn keyed(results: &[CheckResult]) -> Vec<(String, &CheckResult)> {
    let mut out: Vec<(String, &CheckResult)> = Vec::new();
    for r in results {
        let mut key = r.id();
        while out.iter().any(|(k, _)| *k == key) {
            key.push('+');
        }
        out.push((key, r));
    }
    out
}

#[test]
fn every_check_log_case_matches_the_expected_verdicts() {
    let Some(dir) = common::recorded() else {
        return;
    };
    let expected = parse(&common::read(&dir, "expected-verdicts.json")).unwrap();
    let (mut cases, mut verdicts, mut agree) = (0, 0, 0);
    let mut errs = Vec::new();
    for (key, case) in expected.as_object().unwrap() {
        let Some(args) = key.strip_prefix("check-log ") else {
            continue;
        };
        cases += 1;
        let rels: Vec<&str> = args.split_whitespace().collect();
        let read = logs(&dir, &rels);
        let results = check_logs(&read, true);
        let got = keyed(&results);
        for (id, want) in case.get("verdicts").unwrap().as_object().unwrap() {
            verdicts += 1;
            let Some((_, r)) = got.iter().find(|(k, _)| k == id) else {
                errs.push(format!("{key}: {id} missing"));
                continue;
            };
            let mut local = Vec::new();
            let status = want.get("status").and_then(Json::as_str).unwrap();
            if r.status.as_str() != status {
                local.push(format!("status want {status} got {}", r.status.as_str()));
            }
            let ev = Json::Obj(r.evidence());
            for (k, w) in want.get("evidence").unwrap().as_object().unwrap() {
                match ev.get(k) {
                    Some(g) => same(w, g, k, &mut local),
                    None => local.push(format!("evidence {k} missing")),
                }
            }
            if local.is_empty() {
                agree += 1;
            } else {
                errs.push(format!("{key}: {id}: {}", local.join("; ")));
            }
        }
        let exit = case.get("exit").and_then(Json::as_i64_trunc).unwrap();
        let ours = i64::from(exit_status(&results, false, false));
        if ours != exit {
            errs.push(format!("{key}: exit want {exit} got {ours}"));
        }
        // Every per-log result names its log; messages are one line.
        for r in &results {
            if matches!(r.tripwire.number(), 4 | 11) {
                assert!(r.source.is_none(), "{key}: {}", r.message);
            } else {
                assert!(r.source.is_some(), "{key}: {}", r.message);
            }
            assert!(
                !r.message.is_empty() && !r.message.contains('\n'),
                "{key}: {}",
                r.message
            );
            if rels.len() > 1 && r.source.is_some() {
                let src = r.source.as_deref().unwrap();
                assert!(r.message.starts_with(&format!("{src}: ")), "{}", r.message);
            }
        }
    }
    eprintln!("check-log: {agree} of {verdicts} verdicts agree over {cases} cases");
    assert!(cases >= 28, "only {cases} check-log cases found");
    assert!(
        errs.is_empty(),
        "{} disagreements:\n{}",
        errs.len(),
        errs.join("\n")
    );
}

#[test]
fn single_log_results_are_sourced_without_prefix() {
    let Some(dir) = common::recorded() else {
        return;
    };
    let read = logs(&dir, &["vllm-0.30/capped/boot.log"]);
    let r = check_logs(&read, true);
    let ids: Vec<(String, &str)> = r.iter().map(|r| (r.id(), r.status.as_str())).collect();
    assert_eq!(
        ids,
        [
            ("T12".to_string(), "pass"),
            ("T7".to_string(), "pass"),
            ("T5".to_string(), "warn"),
            ("T6".to_string(), "pass")
        ]
    );
    for x in &r {
        assert_eq!(x.source.as_deref(), Some("boot.log"));
        assert!(!x.message.starts_with("boot.log: "));
    }
    assert_eq!(r[1].evidence_value("lineno"), Some(Json::Int(207)));
    assert_eq!(
        r[1].evidence_value("admission_rejections"),
        Some(Json::Int(16))
    );
    assert_eq!(exit_status(&r, false, false), 0);
}

#[test]
fn facts_of_the_fixture_table() {
    let Some(dir) = common::recorded() else {
        return;
    };
    let f = facts(&dir, "vllm-0.28/boot_eager.log");
    assert_eq!(f.kv_pool_tokens, Some(31554));
    assert_eq!((f.ready, f.ready_lineno, f.lines), (true, Some(74), 223));
    assert_eq!(f.boot_seconds, Some(115.0));
    assert_eq!(f.cudagraphs, Some(false));
    assert_eq!(f.max_concurrency, Some(1.93));
    assert_eq!(f.max_concurrency_request_len, Some(16384));
    assert_eq!(
        (f.consumed_gib, f.peak_activation_gib),
        (Some(17.95), Some(1.86))
    );
    assert_eq!(f.compile_s, None);
    assert_eq!(f.attention_block_size, Some(784));
    assert_eq!(f.available_kv_cache_gib, Some(2.51));
    assert_eq!(f.cudagraph_actual_gib, None);
    assert_eq!(f.vllm_version.as_deref(), Some("0.28.0"));
    let rec = parse(&analyzer::json::to_compact(&f)).unwrap();
    assert_eq!(
        rec.get("processes").unwrap().to_compact(),
        r#"{"APIServer": [163874], "EngineCore": [164098]}"#
    );
    assert_eq!(rec.get("unparsed"), Some(&Json::Arr(vec![])));
    assert_eq!(rec.get("conflicts"), Some(&Json::Obj(vec![])));
    assert_eq!(keys(&rec).len(), 39);
    assert_eq!(keys(&rec)[0], "engine");
    assert_eq!(keys(&rec)[38], "lines");
    assert_eq!(f.untested_version_note(), None);

    let f = facts(&dir, "vllm-0.28/boot_cudagraphs.log");
    assert_eq!((f.ready_lineno, f.lines), (Some(89), 155));
    assert_eq!(f.kv_pool_tokens, Some(26093));
    assert_eq!(f.cudagraph_estimated_gib, Some(0.20));
    assert_eq!(f.cudagraph_actual_gib, Some(0.18));
    assert_eq!(
        (f.model_load_gib, f.model_load_s),
        (Some(17.71), Some(76.067804))
    );
    assert_eq!((f.compile_s, f.compiled_fresh), (Some(4.46), Some(false)));
    assert_eq!((f.speculative, f.cudagraphs), (Some(false), Some(true)));
    assert_eq!(
        f.processes,
        [
            ("APIServer".to_string(), vec![48151]),
            ("EngineCore".to_string(), vec![48374])
        ]
    );

    let f = facts(&dir, "vllm-0.28/boot_spec_backend_override.log");
    assert_eq!(f.selected_backends, ["TRITON_ATTN"]);
    assert_eq!(f.drafter_backends, ["FLASHINFER"]);
    assert!(f.candidate_backends.is_empty());
    assert_eq!(f.requested_backend.as_deref(), Some("TRITON_ATTN"));
    assert_eq!(
        f.cudagraph_mode_downgrade,
        Some(("FULL_AND_PIECEWISE".to_string(), "PIECEWISE".to_string()))
    );
    assert_eq!((f.compile_s, f.compiled_fresh), (Some(67.24), Some(true)));
    assert_eq!((f.ready_lineno, f.lines), (Some(134), 557));

    let f = facts(&dir, "vllm-0.28/boot_fail_accelerator.log");
    assert_eq!((f.ready, f.lines, f.speculative), (false, 188, Some(true)));
    assert_eq!(f.kv_pool_tokens, None);
    assert_eq!(f.boot_seconds, None);
    assert!(f
        .non_default_args
        .as_ref()
        .unwrap()
        .has("speculative_config"));

    let f = facts(&dir, "vllm-0.28/boot_fail_cccl_headers.log");
    assert_eq!(f.kv_pool_tokens, None);
    assert_eq!(
        (f.model_load_gib, f.model_load_s),
        (Some(17.71), Some(76.064813))
    );
    assert_eq!((f.compile_s, f.compiled_fresh), (Some(27.29), Some(true)));

    let f = facts(&dir, "vllm-0.28/boot_fp8_triton.log");
    assert_eq!(f.kv_pool_tokens, Some(41441));
    assert_eq!(f.attention_block_size, Some(1568));
    assert_eq!(f.selected_backends, ["TRITON_ATTN"]);
    assert_eq!(f.max_concurrency, Some(2.53));

    let f = facts(&dir, "vllm-0.30/capped/boot.log");
    assert_eq!(f.max_num_queued_reqs(), Some(16));
    assert_eq!((f.ready_lineno, f.lines), (Some(145), 702));
    assert_eq!(
        (f.consumed_gib, f.peak_activation_gib),
        (Some(17.91), Some(2.09))
    );
    assert_eq!(f.cudagraph_actual_gib, Some(0.08));
    let cap = f.running_cap_info().unwrap();
    assert_eq!(
        (cap.cap, cap.from_max_num_seqs, cap.requested_running),
        (32, true, None)
    );

    let f = facts(&dir, "vllm-0.30/qwen3-8b-start1/boot.log");
    assert_eq!(f.kv_pool_tokens, Some(32336));
    assert_eq!(f.attention_block_size, None);
    assert_eq!((f.compile_s, f.compiled_fresh), (Some(20.73), Some(true)));
    assert_eq!(f.max_concurrency, Some(1.97));
    assert_eq!(f.model(), Some("/root/models/Qwen3-8B"));

    let f = facts(&dir, "vllm-0.30/boot_fail_link_cudart.log");
    assert_eq!(
        (f.kv_pool_tokens, f.lines, f.ready),
        (Some(29127), 385, false)
    );
    assert_eq!((f.compile_s, f.compiled_fresh), (Some(0.45), Some(false)));

    let f = facts(&dir, "sglang-0.5/qwen3-8b/boot.log");
    assert_eq!(f.boot_seconds, Some(58.0));
    assert_eq!((f.ready_lineno, f.lines), (Some(139), 459));
    assert_eq!(f.kv_pool_tokens, Some(32096));
    assert_eq!(f.available_kv_cache_gib, Some(4.4));
    assert_eq!(f.cudagraph_actual_gib, Some(0.94));
    assert_eq!((f.running_cap, f.requested_running), (Some(32), Some(32)));
    assert_eq!(
        (f.model_load_gib, f.model_load_s),
        (Some(15.28), Some(20.69))
    );
    assert_eq!(f.page_size, Some(1));
    assert_eq!(f.selected_backends, ["flashinfer"]);
    assert_eq!(
        (f.requested_backend.as_deref(), f.speculative),
        (None, Some(false))
    );
    assert_eq!(f.version(), None);
    assert_eq!(f.model(), Some("/root/models/Qwen3-8B"));
    assert!(!f.config_args.as_ref().unwrap().has("random_seed"));
    assert!(f.server_args.as_ref().unwrap().has("random_seed"));

    let f = facts(&dir, "sglang-0.5/capped/boot.log");
    assert_eq!((f.ready_lineno, f.lines), (Some(801), 4155));
    assert_eq!(f.kv_pool_tokens, Some(17675));
    assert_eq!(
        (f.available_kv_cache_gib, f.cudagraph_actual_gib),
        (Some(1.08), Some(1.74))
    );
    assert_eq!(f.running_cap_reason.as_deref(), Some("mamba state cache"));
    let cap = f.running_cap_info().unwrap();
    assert_eq!((cap.cap, cap.requested_running), (1, Some(32)));
    assert_eq!(cap.reason.as_deref(), Some("mamba state cache"));

    let f = facts(&dir, "sglang-0.5/live/boot.log");
    assert_eq!(
        (f.ready_lineno, f.lines, f.kv_pool_tokens),
        (Some(800), 1819, Some(5930))
    );
    assert_eq!(
        (f.available_kv_cache_gib, f.cudagraph_actual_gib),
        (Some(0.36), Some(1.82))
    );
    assert_eq!((f.running_cap, f.requested_running), (Some(10), Some(10)));
    assert_eq!(f.running_cap_info().unwrap().requested_running, None);

    let f = facts(&dir, "sglang-0.5/boot_fail_mamba_state.log");
    assert_eq!(
        (f.ready, f.lines, f.requested_running),
        (false, 697, Some(32))
    );
    assert_eq!(
        (f.model_load_gib, f.model_load_s),
        (Some(17.65), Some(76.96))
    );
    assert_eq!(f.cudagraphs, Some(true));

    let f = facts(&dir, "trtllm-1.3/pauses/boot.log");
    assert_eq!((f.pauses, f.served_in_log), (Some(13), Some(41)));
    assert_eq!(
        (f.ready_lineno, f.lines, f.kv_pool_tokens),
        (Some(441), 685, Some(20960))
    );
    assert_eq!(f.capacity_scheduler_policy(), Some("MAX_UTILIZATION"));
    let sa = f.server_args.as_ref().unwrap();
    assert_eq!(
        sa.get("free_gpu_memory_fraction").and_then(Json::as_str),
        Some("0.5")
    );
    assert_eq!(f.boot_seconds, None);
    assert_eq!(f.cudagraphs, None);

    let f = facts(&dir, "trtllm-1.3/qwen3-8b/boot.log");
    assert_eq!((f.pauses, f.served_in_log), (Some(0), Some(41)));
    assert_eq!(
        (f.kv_pool_tokens, f.available_kv_cache_gib),
        (Some(37760), Some(5.19))
    );
    assert_eq!(
        (f.running_cap, f.requested_running, f.page_size),
        (Some(32), Some(32), Some(32))
    );
    assert_eq!(f.model_load_gib, Some(15.31));
    assert_eq!(f.model(), Some("/root/models/Qwen3-8B"));
    assert_eq!(f.capacity_scheduler_policy(), Some("GUARANTEED_NO_EVICT"));
    assert_eq!(f.engine_version.as_deref(), Some("1.3.0rc29"));
    let sa = f.server_args.as_ref().unwrap();
    for (k, v) in [
        ("attn_backend", "TRTLLM"),
        ("max_batch_size", "32"),
        ("free_gpu_memory_fraction", "0.9"),
        ("tokens_per_block", "32"),
        ("speculative_config", "None"),
    ] {
        assert_eq!(sa.get(k).and_then(Json::as_str), Some(v), "{k}");
    }
    let ca = f
        .config_args
        .as_ref()
        .unwrap()
        .get("llm_args")
        .and_then(Json::as_str)
        .unwrap();
    assert!(ca.contains("max_tokens=,") && !ca.contains("37763"));
    assert!(sa
        .get("llm_args")
        .and_then(Json::as_str)
        .unwrap()
        .contains("max_tokens=37763,"));
    assert_eq!(f.speculative, Some(false));

    let f = facts(&dir, "trtllm-1.3/no-iter-stats/boot.log");
    assert_eq!((f.pauses, f.served_in_log), (Some(0), Some(42)));
    assert_eq!(
        (f.running_cap, f.requested_running),
        (Some(2048), Some(2048))
    );
    assert_eq!(f.available_kv_cache_gib, Some(4.97));

    let f = facts(&dir, "trtllm-1.3/boot_fail_no_cuda_home.log");
    assert_eq!(
        (f.served_in_log, f.pauses, f.speculative),
        (Some(0), None, None)
    );
    assert_eq!((f.lines, f.ready), (35, false));
}

#[test]
fn every_fixture_log_reads_cleanly() {
    let Some(dir) = common::recorded() else {
        return;
    };
    for rel in all_logs(&dir) {
        let f = facts(&dir, &rel);
        assert!(f.unparsed.is_empty(), "{rel}: {:?}", f.unparsed);
        assert!(f.conflicts.is_empty(), "{rel}: {:?}", f.conflicts);
        assert!(f.engine.is_some(), "{rel}");
        assert_eq!(f.untested_version_note(), None, "{rel}");
        if rel.starts_with("trtllm") {
            assert_eq!(f.boot_seconds, None, "{rel}");
        } else if f.ready {
            assert!(f.boot_seconds.is_some(), "{rel}");
        }
    }
}

/// Every boot log under the fixtures folder, relative to it.
fn all_logs(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "log")
                && p.file_name().is_none_or(|n| n != "load.log")
            {
                out.push(
                    p.strip_prefix(dir)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/"),
                );
            }
        }
    }
    out.sort();
    assert!(out.len() >= 25, "{out:?}");
    out
}

#[test]
fn two_starts_appended_to_one_file() {
    let Some(dir) = common::recorded() else {
        return;
    };
    let text = common::read(&dir, "vllm-0.28/boot_pool_level_hi.log")
        + &common::read(&dir, "vllm-0.28/boot_pool_level_lo.log");
    let f = read_facts(&text, None);
    assert_eq!(f.kv_pool_tokens, Some(12405));
    assert_eq!(f.compile_s, Some(64.91));
    assert_eq!(f.ready_lineno, Some(138));
    let conflicts: Vec<&str> = f.conflicts.iter().map(|(k, _)| k.as_str()).collect();
    let mut sorted = conflicts.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        [
            "available_kv_cache_gib",
            "kv_pool",
            "memory_split",
            "model_load"
        ]
    );
    let kv = &f.conflicts.iter().find(|(k, _)| k == "kv_pool").unwrap().1;
    assert_eq!(
        Json::Arr(kv.clone()).to_compact(),
        "[[13575, 8192, 1.66], [12405, 8192, 1.51]]"
    );
    let avail = &f
        .conflicts
        .iter()
        .find(|(k, _)| k == "available_kv_cache_gib")
        .unwrap()
        .1;
    assert_eq!(avail, &[Json::Float(1.59), Json::Float(1.44)]);
}

#[test]
fn a_changed_pool_line_is_unparsed_not_guessed() {
    let Some(dir) = common::recorded() else {
        return;
    };
    let text = common::read(&dir, "vllm-0.28/boot_eager.log");
    let lines: Vec<&str> = text.lines().collect();
    let mut changed = lines.clone();
    changed[49] = "GPU KV cache size: 31.5k tokens (1.93x)";
    let f = read_facts(&changed.join("\n"), None);
    assert_eq!(f.kv_pool_tokens, None);
    assert_eq!(f.unparsed.len(), 1);
    let u = &f.unparsed[0];
    assert_eq!(
        (u.field.as_str(), u.lineno, u.line.as_str()),
        ("kv_pool", 50, "GPU KV cache size: 31.5k tokens (1.93x)")
    );
    // The same line with its prefix: the prefix is not part of the unparsed text.
    let mut prefixed = lines.clone();
    let l50 = lines[49].replace(
        "GPU KV cache size: 31,554 tokens, Maximum concurrency for 16,384 tokens per request: 1.93x",
        "GPU KV cache size: 31.5k tokens (1.93x)",
    );
    prefixed[49] = &l50;
    let f = read_facts(&prefixed.join("\n"), None);
    assert_eq!(
        f.unparsed[0].line,
        "GPU KV cache size: 31.5k tokens (1.93x)"
    );

    let mut deleted = lines.clone();
    deleted.remove(49);
    let f = read_facts(&deleted.join("\n"), None);
    assert_eq!(f.kv_pool_tokens, None);
    assert!(f.unparsed.is_empty());

    // The arguments line without its closing brace.
    let mut cut = lines.clone();
    let l7 = lines[6].trim_end().trim_end_matches('}').to_string();
    cut[6] = &l7;
    let f = read_facts(&cut.join("\n"), None);
    assert_eq!(f.non_default_args, None);
    assert_eq!(f.unparsed.len(), 1);
    assert_eq!(f.unparsed[0].field, "non_default_args");
    assert_eq!(f.unparsed[0].lineno, 7);

    // check-log reports the unparsed line as an extra T12 unknown, analyze does not.
    let read = read_logs(
        &[("x/boot_eager.log".to_string(), changed.join("\n"))],
        None,
    );
    let with = check_logs(&read, true);
    let last = with.last().unwrap();
    assert_eq!(
        (last.id(), last.status.as_str()),
        ("T12".to_string(), "unknown")
    );
    let list = last.evidence_value("unparsed").unwrap();
    let list = list.as_array().unwrap();
    assert_eq!(list[0].get("lineno"), Some(&Json::Int(50)));
    assert_eq!(check_logs(&read, false).len(), with.len() - 1);
}

#[test]
fn classifier_outcomes_on_the_fixtures() {
    let Some(dir) = common::recorded() else {
        return;
    };
    let cases = [
        (
            "vllm-0.28/boot_fail_accelerator.log",
            "accelerator_error",
            "boot",
            113,
            "CUDA error: device not ready",
        ),
        (
            "vllm-0.28/boot_fail_cccl_headers.log",
            "jit_toolchain",
            "boot",
            174,
            "CUDA compiler and CUDA toolkit headers are incompatible",
        ),
        (
            "vllm-0.28/boot_spec_backend_override.log",
            "jit_toolchain",
            "serving",
            236,
            "CUDA compiler and CUDA toolkit headers are incompatible",
        ),
        (
            "vllm-0.30/boot_fail_link_cudart.log",
            "jit_toolchain",
            "boot",
            196,
            "cannot find -lcudart: No such file or directory",
        ),
        (
            "trtllm-1.3/boot_fail_no_cuda_home.log",
            "assertion",
            "boot",
            24,
            "assert cuda_home is not None",
        ),
    ];
    for (rel, kind, phase, lineno, detail) in cases {
        let c = classify(&common::read(&dir, rel));
        let f = c.failure.unwrap_or_else(|| panic!("{rel}: no failure"));
        assert_eq!(
            (
                f.kind.as_str(),
                f.phase.as_str(),
                f.lineno,
                f.detail.as_str()
            ),
            (kind, phase, lineno, detail),
            "{rel}"
        );
        assert_eq!(c.rejections, 0);
    }
    let c = classify(&common::read(&dir, "sglang-0.5/boot_fail_mamba_state.log"));
    let f = c.failure.unwrap();
    assert_eq!((f.kind.as_str(), f.lineno), ("runtime_error", 694));
    assert!(f.detail.starts_with("Not enough GPU memory for hybrid (mamba/linear-attention) state cache. Computed max_mamba_cache_size=-12"));
    assert_eq!(f.detail.chars().count(), 200);
    assert_eq!(f.line.chars().count(), 300);

    let c = classify(&common::read(&dir, "vllm-0.30/capped/boot.log"));
    assert!(c.failure.is_none());
    assert_eq!((c.rejections, c.first_rejection_lineno), (16, Some(207)));

    for rel in all_logs(&dir) {
        if cases.iter().any(|c| c.0 == rel) || rel.contains("boot_fail_mamba") {
            continue;
        }
        let c = classify(&common::read(&dir, &rel));
        assert!(c.failure.is_none(), "{rel}: {:?}", c.failure);
    }
    // Without the shutdown cut, an orderly stop would read as a dead engine.
    let text = common::read(&dir, "vllm-0.28/boot_eager.log").replace("[shutdown]", "[stopping]");
    let f = classify(&text).failure.unwrap();
    assert_eq!(
        (f.kind.as_str(), f.phase.as_str()),
        ("engine_dead", "serving")
    );
}

#[test]
fn comparing_starts() {
    let Some(dir) = common::recorded() else {
        return;
    };
    let rels = [
        "vllm-0.28/boot_cudagraphs.log",
        "vllm-0.28/live/boot.log",
        "vllm-0.28/run_preempted_silently.log",
        "vllm-0.28/boot_fail_cccl_headers.log",
    ];
    let r = check_logs(&logs(&dir, &rels), false);
    let t4: Vec<&CheckResult> = r
        .iter()
        .filter(|r| r.tripwire == Tripwire::PoolSizeJump)
        .collect();
    assert_eq!(t4.len(), 1);
    assert_eq!(t4[0].status.as_str(), "pass");
    assert_eq!(
        t4[0].evidence_value("pools").unwrap().to_compact(),
        r#"{"boot_cudagraphs.log": 26093, "boot.log": 26093, "run_preempted_silently.log": 26093}"#
    );
    assert_eq!(
        t4[0].evidence_value("not_compared").unwrap().to_compact(),
        r#"["boot_fail_cccl_headers.log"]"#
    );
    let t11: Vec<&CheckResult> = r
        .iter()
        .filter(|r| r.tripwire == Tripwire::KvMemoryDrift)
        .collect();
    assert_eq!(t11[0].status.as_str(), "pass");

    let r = check_logs(
        &logs(
            &dir,
            &["vllm-0.28/live/boot.log", "vllm-0.30/live/boot.log"],
        ),
        false,
    );
    let t4 = r
        .iter()
        .find(|r| r.tripwire == Tripwire::PoolSizeJump)
        .unwrap();
    assert_eq!(t4.status.as_str(), "warn");
    assert!(t4.message.contains("11.63%"), "{}", t4.message);
    assert_eq!(
        t4.evidence_value("levels").unwrap().to_compact(),
        "[26093, 29127]"
    );
    let t11 = r
        .iter()
        .find(|r| r.tripwire == Tripwire::KvMemoryDrift)
        .unwrap();
    assert_eq!(t11.status.as_str(), "warn");
    assert!(!t11.message.contains("from scratch"), "{}", t11.message);

    let r = check_logs(
        &logs(
            &dir,
            &[
                "vllm-0.28/boot_pool_level_hi.log",
                "vllm-0.28/boot_pool_level_lo.log",
            ],
        ),
        false,
    );
    let t4 = r
        .iter()
        .find(|r| r.tripwire == Tripwire::PoolSizeJump)
        .unwrap();
    assert!(t4.message.contains("9.43%"), "{}", t4.message);
    let t11 = r
        .iter()
        .find(|r| r.tripwire == Tripwire::KvMemoryDrift)
        .unwrap();
    assert!(
        t11.message
            .contains("1 of 2 starts compiled the model from scratch"),
        "{}",
        t11.message
    );
    assert!(t11.message.contains("18.85 to 18.99"), "{}", t11.message);
    assert!(!t11.message.contains("peak activation"), "{}", t11.message);

    for pair in [
        [
            "vllm-0.28/boot_eager.log",
            "vllm-0.28/boot_pool_level_lo.log",
        ],
        ["trtllm-1.3/qwen3-8b/boot.log", "trtllm-1.3/pauses/boot.log"],
    ] {
        let r = check_logs(&logs(&dir, &pair), false);
        assert!(
            r.iter().all(|r| !matches!(r.tripwire.number(), 4 | 11)),
            "{pair:?}"
        );
    }
    let r = check_logs(
        &logs(
            &dir,
            &[
                "sglang-0.5/qwen3-8b/boot.log",
                "sglang-0.5/qwen3-8b-start2/boot.log",
                "sglang-0.5/qwen3-8b-own-client/boot.log",
            ],
        ),
        false,
    );
    let t4 = r
        .iter()
        .find(|r| r.tripwire == Tripwire::PoolSizeJump)
        .unwrap();
    assert_eq!(t4.status.as_str(), "pass");
    assert_eq!(
        t4.evidence_value("pools")
            .unwrap()
            .as_object()
            .unwrap()
            .len(),
        3
    );
}

#[test]
fn trtllm_starts_with_different_pools_are_compared() {
    let Some(dir) = common::recorded() else {
        return;
    };
    // The same settings, but a second start that drew a smaller pool.
    let first = common::read(&dir, "trtllm-1.3/qwen3-8b/boot.log");
    let second = common::read(&dir, "trtllm-1.3/qwen3-8b-start2/boot.log")
        .replace("max_tokens=37763", "max_tokens=20979")
        .replace(
            "max_gpu_total_bytes=5568485529",
            "max_gpu_total_bytes=3093603072",
        )
        .replace(
            "Allocated 5.19 GiB for max tokens in paged KV cache (37760)",
            "Allocated 2.88 GiB for max tokens in paged KV cache (20960)",
        );
    let read = read_logs(
        &[("a/boot.log".into(), first), ("b/boot.log".into(), second)],
        None,
    );
    let r = check_logs(&read, false);
    let t4 = r
        .iter()
        .find(|r| r.tripwire == Tripwire::PoolSizeJump)
        .unwrap();
    assert_eq!(t4.status.as_str(), "warn");
    assert_eq!(
        t4.evidence_value("levels").unwrap().to_compact(),
        "[20960, 37760]"
    );
    let t11 = r
        .iter()
        .find(|r| r.tripwire == Tripwire::KvMemoryDrift)
        .unwrap();
    assert_eq!(t11.status.as_str(), "warn");
}

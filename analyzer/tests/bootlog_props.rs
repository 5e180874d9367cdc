//! Properties of the boot-log reader: no input makes it panic, and a log cut short keeps
//! every fact that lay before the cut.

mod common;

use std::sync::OnceLock;

use analyzer::bootlog::{classify, read_facts, read_logs, BootFacts};
use analyzer::rules::runner::check_logs;
use analyzer::text::split_lines;
use proptest::prelude::*;

/// Pieces of real log lines, so that random texts reach the rules and not just the
/// "no anchor here" path.
const PIECES: &[&str] = &[
    "(EngineCore pid=164098) INFO 09-07 23:15:06 [gpu_worker.py:578] ",
    "(APIServer pid=1) ERROR 09-30 20:31:13 [serving.py:498] ",
    "(APIServer pid=99999999999999999999999) ",
    "[2026-10-01 01:41:07] ",
    "[10/01/2026-01:43:50] [TRT-LLM] [I] ",
    "Initializing a V1 LLM engine (v0.28.0) with config",
    "Initializing a V1 LLM engine (v",
    "non-default args: {",
    "server_args={",
    "'model': '/m', ",
    "'max_num_seqs': 32",
    "'attention_backend': 'TRITON_ATTN'",
    "'speculative_config': {'method': 'mtp'}",
    "'block_size': 16",
    "'page_size': 1, ",
    "}",
    "{",
    "[",
    "]",
    "(",
    ")",
    "'",
    "\"",
    "\\",
    "Using FLASH_ATTN attention backend out of potential backends: ['FLASH_ATTN', 'X']",
    "Using AttentionBackendEnum.TRITON_ATTN backend.",
    "Loading drafter model...",
    "Setting attention block size to 784 tokens",
    "Padding mamba page size by 0.13%",
    "GPU KV cache size: 31,554 tokens, Maximum concurrency for 16,384 tokens per request: 1.93x",
    "GPU KV cache size: ",
    "Available KV cache memory: 2.51 GiB",
    "Model loading took 17.71 GiB memory and 75.25 seconds",
    "CUDA graph pool memory: 0.18 GiB (actual)",
    "Actual usage is 17.95 GiB for consumed memory (weights + non-torch), 1.86 GiB for peak activation",
    "torch.compile took 60.37 s in total",
    "X is not supported with spec-decode; setting cudagraph_mode=PIECEWISE",
    "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 32096, K size: 2.20 GB, V size: 2.20 GB",
    "Load weight end. elapsed=20.69 s, mem usage=15.28 GB",
    "Capture CUDA graph end. elapsed=1.11 s, mem usage=0.11 GB",
    "max_running_requests is capped to 1 by the mamba state cache (x)",
    "max_total_num_tokens=32096, max_running_requests=32",
    "Attention backend not specified. Use flashinfer backend by default.",
    "TensorRT LLM version: 1.3.0rc29",
    "Allocated 5.19 GiB for max tokens in paged KV cache (37760)",
    "tokens per block=32",
    "max_num_requests=32, max_num_tokens=8192, max_batch_size=32",
    "after loading weights (inside torch) in memory usage profiling: 15.31 GiB",
    "LLM Args:",
    "model='/m' kv_cache_config=KvCacheConfig(max_tokens=37763, max_gpu_total_bytes=1) attn_backend='TRTLLM' speculative_config=None",
    "Cudagraph is disabled under eager mode",
    "Compiling a graph for compile range",
    "Directly load AOT compilation",
    "INFO:     Application startup complete.",
    "INFO:     127.0.0.1:1 - \"POST /v1/completions HTTP/1.1\" 200 OK",
    "MaxUtilizationScheduler: request ID 72 -> pause",
    "[shutdown] stop",
    "Request queue full - rejecting request x (current=16, n=1, max=16).",
    "vllm.exceptions.QueueOverflowError: The engine is busy",
    "CUDA compiler and CUDA toolkit headers are incompatible",
    "ptxas fatal   : bad",
    "nvcc fatal : x",
    "/usr/bin/ld: cannot find -lcudart",
    "ninja: build stopped",
    "torch.OutOfMemoryError: CUDA out of memory",
    "torch.AcceleratorError: CUDA error: device not ready",
    "AssertionError",
    "assert x is not None",
    "ValueError: v",
    "RuntimeError: r",
    "a.b.SomeError: s",
    "File \"/a/b.py\", line 3, in f",
    "EngineDeadError",
    "[start of x traceback]",
    "[end of x traceback].",
    "Prefill batch, #new-seq: 1",
    "09-07 23:13:25 ",
    "02-30 00:00:00",
    "\x1b[33;20m",
    "\x1b[",
    "é",
    "█",
    " ",
    "\t",
    "0",
    "1.2.3",
    ",",
    "-",
    "\n",
    "\r",
    "\r\n",
    "\u{2028}",
    "\u{85}",
    "\x0c",
];

fn loglike() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..120).prop_map(|v| v.concat())
}

/// Exercises everything a caller may call on a log's results.
fn use_everything(text: &str) {
    let f = read_facts(text, None);
    let rec = analyzer::json::parse(&analyzer::json::to_compact(&f)).unwrap();
    assert!(rec.get("lines").is_some());
    let _ = (
        f.model(),
        f.max_num_queued_reqs(),
        f.max_num_queued_tokens(),
    );
    let _ = (
        f.capacity_scheduler_policy(),
        f.running_cap_info(),
        f.untested_version_note(),
    );
    let c = classify(text);
    if let Some(fail) = &c.failure {
        assert!(fail.line.chars().count() <= 300 && fail.detail.chars().count() <= 200);
        assert!(fail.lineno >= 1 && fail.lineno <= f.lines);
    }
    for u in &f.unparsed {
        assert!(u.line.chars().count() <= 300);
    }
    let logs = read_logs(
        &[
            ("a/x.log".to_string(), text.to_string()),
            ("b/x.log".to_string(), text.to_string()),
        ],
        None,
    );
    assert_eq!(logs[0].facts, f);
    assert_eq!(logs[0].classification, c);
    let results = check_logs(&logs, true);
    for r in &results {
        assert!(!r.message.contains('\n'), "{}", r.message);
        let _ = analyzer::json::to_compact(r);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        use_everything(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn log_like_text_never_panics(text in loglike()) {
        use_everything(&text);
    }

    #[test]
    fn log_like_text_reads_the_same_in_one_pass(text in loglike()) {
        // read_log does the facts and the classifier in one pass; the separate calls
        // must agree with it.
        let (f, c) = analyzer::bootlog::read_log(&text, None);
        prop_assert_eq!(f, read_facts(&text, None));
        prop_assert_eq!(c, classify(&text));
    }
}

#[test]
fn hostile_shapes_never_panic() {
    let long = "x".repeat(1 << 20);
    let cases = [
        format!("non-default args: {}", "{'a': ".repeat(50_000)),
        format!("server_args={}{}", "[".repeat(100_000), "]".repeat(100_000)),
        format!("non-default args: {{'a': '{long}'}}"),
        "Initializing a V1 LLM engine (v x ".repeat(20_000),
        "Using X attention backend out of potential backends: [".repeat(20_000),
        "max_running_requests is capped to 1 by the x".repeat(20_000),
        "max_total_num_tokens=1,".repeat(20_000),
        "Load weight end. elapsed=1 s,".repeat(20_000),
        "A is not supported with spec-decode".repeat(20_000),
        "\"POST /".repeat(50_000),
        "ptxas fatal".repeat(50_000),
        "a.".repeat(100_000) + "Error: x",
        "\x1b[".repeat(100_000),
        "Application startup complete\n".to_string() + &"RuntimeError: x\n".repeat(10_000),
        "-".repeat(100_000),
        long.clone(),
        "\r".repeat(100_000),
    ];
    for text in &cases {
        let t = std::time::Instant::now();
        use_everything(text);
        eprintln!("{:>10?} {:?}", t.elapsed(), &text[..40.min(text.len())]);
        // Linear work: even a slow debug build reads each in well under 20 s (a quadratic
        // rule took minutes).
        assert!(
            t.elapsed().as_secs() < 20,
            "{:?}",
            &text[..40.min(text.len())]
        );
    }
}

/// The fixture logs (path, text), or none when the fixtures are absent.
fn fixture_logs() -> &'static [(String, String)] {
    static LOGS: OnceLock<Vec<(String, String)>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let Some(dir) = common::recorded() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut stack = vec![dir.clone()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "log")
                    && p.file_name().is_none_or(|n| n != "load.log")
                {
                    let rel = p.strip_prefix(&dir).unwrap().to_string_lossy().into_owned();
                    out.push((rel.clone(), common::read(&dir, &rel)));
                }
            }
        }
        out.sort();
        out
    })
}

/// Byte offset just after line `k` (1-based; 0 → empty) of `text`, break included.
fn after_line(text: &str, k: usize) -> usize {
    if k == 0 {
        return 0;
    }
    let base = text.as_ptr() as usize;
    let line = split_lines(text).nth(k - 1).unwrap();
    let end = line.as_ptr() as usize - base + line.len();
    // Skip the line break itself.
    let rest = &text[end..];
    let brk = rest.chars().next().map_or(0, |c| {
        if rest.starts_with("\r\n") {
            2
        } else {
            c.len_utf8()
        }
    });
    end + brk
}

/// The last line (1-based) holding any of `anchors`, or 0.
fn last_line_with(text: &str, anchors: &[&str]) -> usize {
    split_lines(text)
        .enumerate()
        .filter(|(_, l)| anchors.iter().any(|a| l.contains(a)))
        .map(|(k, _)| k + 1)
        .last()
        .unwrap_or(0)
}

struct Full {
    facts: BootFacts,
    pool_line: usize,
    version_line: usize,
}

fn full_reads() -> &'static [Full] {
    static FULL: OnceLock<Vec<Full>> = OnceLock::new();
    FULL.get_or_init(|| {
        fixture_logs()
            .iter()
            .map(|(_, text)| Full {
                facts: read_facts(text, None),
                pool_line: last_line_with(
                    text,
                    &[
                        "GPU KV cache size:",
                        "KV Cache is allocated.",
                        "max_total_num_tokens=",
                        "for max tokens in paged KV cache",
                    ],
                ),
                version_line: last_line_with(
                    text,
                    &["Initializing a V1 LLM engine", "TensorRT LLM version:"],
                ),
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    #[test]
    fn a_log_cut_at_any_line_keeps_what_came_before(which in 0usize..1000, at in 0.0f64..=1.0) {
        let logs = fixture_logs();
        if logs.is_empty() {
            return Ok(());
        }
        let i = which % logs.len();
        let (rel, text) = &logs[i];
        let full = &full_reads()[i];
        let k = (at * full.facts.lines as f64).round() as usize;
        let cut = &text[..after_line(text, k)];
        let f = read_facts(cut, None);
        prop_assert_eq!(f.lines, k, "{}", rel);
        if k >= full.pool_line {
            prop_assert_eq!(f.kv_pool_tokens, full.facts.kv_pool_tokens, "{} cut at {}", rel, k);
        }
        if k >= full.version_line {
            prop_assert_eq!(f.version(), full.facts.version(), "{} cut at {}", rel, k);
        }
        match full.facts.ready_lineno {
            Some(r) if k >= r => {
                prop_assert!(f.ready);
                prop_assert_eq!(f.ready_lineno, Some(r));
                prop_assert_eq!(f.boot_seconds, full.facts.boot_seconds);
            }
            _ => prop_assert!(!f.ready, "{} cut at {}", rel, k),
        }
        // Everything unparsed or in conflict before the cut stays so.
        prop_assert!(f.unparsed.is_empty() && f.conflicts.is_empty());
        // Facts fixed by the settings line stay once it is in.
        if f.non_default_args.is_some() || f.server_args.is_some() && f.engine == full.facts.engine {
            prop_assert_eq!(&f.requested_backend, &full.facts.requested_backend, "{}", rel);
        }
        use_everything(cut);
    }

    #[test]
    fn a_log_cut_inside_a_line_never_panics(which in 0usize..1000, at in 0.0f64..=1.0) {
        let logs = fixture_logs();
        if logs.is_empty() {
            return Ok(());
        }
        let (_, text) = &logs[which % logs.len()];
        let mut b = (at * text.len() as f64) as usize;
        while !text.is_char_boundary(b) {
            b -= 1;
        }
        use_everything(&text[..b]);
    }

    #[test]
    fn garbage_lines_inserted_never_panic(
        which in 0usize..1000,
        inserts in prop::collection::vec((0.0f64..=1.0, loglike()), 1..8),
        bytes in prop::collection::vec(any::<u8>(), 0..200),
    ) {
        let logs = fixture_logs();
        if logs.is_empty() {
            return Ok(());
        }
        let (_, text) = &logs[which % logs.len()];
        let mut lines: Vec<String> = split_lines(text).map(str::to_string).collect();
        let n0 = lines.len();
        let mut added = 0;
        for (at, garbage) in inserts {
            let k = (at * lines.len() as f64) as usize;
            let g = garbage.replace(['\n', '\r', '\u{2028}', '\u{85}', '\x0c'], " ");
            lines.insert(k.min(lines.len()), g);
            added += 1;
        }
        lines.insert(lines.len() / 2, String::from_utf8_lossy(&bytes).replace(['\n', '\r'], " "));
        added += 1;
        let joined = lines.join("\n");
        let f = read_facts(&joined, None);
        // A lossy line may hold other break characters; never fewer lines.
        prop_assert!(f.lines >= n0 + added - 1);
        use_everything(&joined);
    }
}

//! SGLang 0.5.23's Prometheus text (`--enable-metrics`): every `sglang:` family a real
//! 0.5.23 exports, with its type and label keys (checked against the real run in
//! `fixtures/real/sglang-small-pool` by `tests/real_0523.rs`). What the simulator models
//! carries its figures; the rest (speculative decoding, data-parallel attention, hybrid
//! pools, disaggregation, routing keys) is exported as the real one exports it when unused.
//!
//! Quirks kept: request counters carry `is_streaming` and appear on first use; the
//! retraction counters appear only after the first retraction; token usage is rounded to
//! 0.01; and the scheduler's gauges (running, queued, usage, used tokens, throughput) show
//! their values as of its last log point, not the moment of the scrape.

use std::fmt::Write;

use crate::hist::{fmt, render, Hist};
use crate::http::Server;
use crate::sched::Stats;

/// Writes families one after another.
struct Out {
    s: String,
}

impl Out {
    fn head(&mut self, name: &str, help: &str, ty: &str) {
        let _ = writeln!(self.s, "# HELP {name} {help}\n# TYPE {name} {ty}");
    }
    fn sample(&mut self, name: &str, labels: &str, v: f64) {
        if labels.is_empty() {
            let _ = writeln!(self.s, "{name} {}", fmt(v));
        } else {
            let _ = writeln!(self.s, "{name}{{{labels}}} {}", fmt(v));
        }
    }
    fn gauge(&mut self, name: &str, help: &str, labels: &str, v: f64) {
        self.head(name, help, "gauge");
        self.sample(name, labels, v);
    }
    fn counter(&mut self, name: &str, help: &str, series: &[(String, f64)]) {
        self.head(name, help, "counter");
        for (labels, v) in series {
            self.sample(name, labels, *v);
        }
    }
    fn hist(&mut self, name: &str, help: &str, series: &[(String, &Hist)]) {
        self.head(name, help, "histogram");
        for (labels, h) in series {
            render(&mut self.s, name, labels, h, true);
        }
    }
}

/// Labels as the exporter prints them: keys in alphabetical order.
fn labels(pairs: &[(&str, &str)]) -> String {
    let mut v = pairs.to_vec();
    v.sort_by_key(|(k, _)| *k);
    v.iter()
        .map(|(k, val)| format!("{k}=\"{val}\""))
        .collect::<Vec<_>>()
        .join(",")
}

/// The labels of a scheduler series, plus `extra`.
fn rank(model: &str, extra: &[(&str, &str)]) -> String {
    let mut p = vec![
        ("engine_type", "unified"),
        ("model_name", model),
        ("moe_ep_rank", "0"),
        ("pp_rank", "0"),
        ("tp_rank", "0"),
    ];
    p.extend_from_slice(extra);
    labels(&p)
}

/// The labels of a tokenizer series, plus `extra`.
fn front(model: &str, extra: &[(&str, &str)]) -> String {
    let mut p = vec![("engine_type", "unified"), ("model_name", model)];
    p.extend_from_slice(extra);
    labels(&p)
}

const GRAPH_PHASES: [&str; 6] = [
    "decode",
    "draft_decode",
    "draft_extend",
    "draft_prefill",
    "prefill",
    "target_verify",
];
const ROUTING_GT: [&str; 11] = ["0", "1", "10", "100", "2", "20", "200", "3", "5", "50", "7"];
const STAGES: [&str; 9] = [
    "get_next_batch_to_run",
    "idle",
    "other",
    "process_batch_result",
    "process_input_requests",
    "process_queue",
    "recv_requests",
    "run_batch",
    "sanity_check_cache",
];

/// The whole exposition.
pub fn exposition(srv: &Server) -> String {
    let st = srv.engine.stats.lock().unwrap().clone();
    let mut o = Out {
        s: String::with_capacity(96 * 1024),
    };
    let m = srv.served_name.as_str();
    requests(&mut o, &st, m);
    http(&mut o, srv);
    startup(&mut o, m);
    scheduler(&mut o, srv, &st, m);
    o.s
}

/// The tokenizer's per-request families.
fn requests(o: &mut Out, st: &Stats, m: &str) {
    let present: Vec<usize> = (0..2).filter(|i| st.by_stream[*i].requests > 0).collect();
    let stream = |i: usize| {
        front(
            m,
            &[("is_streaming", if i == 1 { "true" } else { "false" })],
        )
    };
    let ttft: Vec<(String, &Hist)> = present
        .iter()
        .map(|&i| (stream(i), &st.by_stream[i].ttft))
        .collect();
    let e2e: Vec<(String, &Hist)> = present
        .iter()
        .map(|&i| (stream(i), &st.by_stream[i].e2e))
        .collect();
    let tpot: Vec<(String, &Hist)> = present.iter().map(|&i| (stream(i), &st.tpot)).collect();
    if !present.is_empty() {
        o.hist(
            "sglang:time_to_first_token_seconds",
            "Time to first token, seconds.",
            &ttft,
        );
        o.hist(
            "sglang:e2e_request_latency_seconds",
            "Request latency from arrival to the last token, seconds.",
            &e2e,
        );
        o.hist(
            "sglang:request_time_per_output_token_seconds",
            "Seconds per output token after the first, per request.",
            &tpot,
        );
        let model = front(m, &[]);
        o.hist(
            "sglang:prompt_tokens_histogram",
            "Prompt lengths, tokens.",
            &[(model.clone(), &st.prompt_len)],
        );
        o.hist(
            "sglang:uncached_prompt_tokens_histogram",
            "Prompt tokens computed (not found in the cache), per request.",
            &[(model.clone(), &st.prompt_len)],
        );
        o.hist(
            "sglang:generation_tokens_histogram",
            "Generated lengths, tokens.",
            &[(model.clone(), &st.gen_len)],
        );
        o.hist(
            "sglang:inter_token_latency_seconds",
            "Time between tokens, seconds.",
            &[(model, &st.itl)],
        );
    }
    o.counter(
        "sglang:process_cpu_seconds_total",
        "CPU seconds used by the front-end processes.",
        &[
            (labels(&[("component", "detokenizer")]), 0.4),
            (labels(&[("component", "tokenizer")]), 1.2),
        ],
    );
    if !present.is_empty() {
        for (name, help, get) in [
            ("sglang:prompt_tokens_total", "Prompt tokens processed.", 0),
            ("sglang:generation_tokens_total", "Tokens generated.", 1),
            ("sglang:num_requests_total", "Requests processed.", 2),
        ] {
            let series: Vec<(String, f64)> = present
                .iter()
                .map(|&i| {
                    let b = &st.by_stream[i];
                    let v = [b.prompt_tokens, b.generation_tokens, b.requests][get];
                    (stream(i), v as f64)
                })
                .collect();
            o.counter(name, help, &series);
        }
        o.counter(
            "sglang:cached_tokens_total",
            "Prompt tokens found in a cache, by cache.",
            &[(
                front(m, &[("cache_source", "device")]),
                st.prefix_hits as f64,
            )],
        );
    }
}

/// The HTTP server's counters and the routing-key gauge it keeps.
fn http(o: &mut Out, srv: &Server) {
    let http = srv.http.lock().unwrap().clone();
    let mut by_ep: std::collections::BTreeMap<(String, String), u64> = Default::default();
    for ((p, me, _), c) in &http {
        *by_ep.entry((p.clone(), me.clone())).or_insert(0) += c.count;
    }
    let ep = |p: &str, me: &str| labels(&[("endpoint", p), ("method", me)]);
    o.counter(
        "sglang:http_requests_total",
        "HTTP requests by endpoint and method.",
        &by_ep
            .iter()
            .map(|((p, me), n)| (ep(p, me), *n as f64))
            .collect::<Vec<_>>(),
    );
    o.counter(
        "sglang:http_responses_total",
        "HTTP responses by endpoint, method and status.",
        &http
            .iter()
            .map(|((p, me, s), c)| {
                let s = s.to_string();
                (
                    labels(&[("endpoint", p), ("method", me), ("status_code", &s)]),
                    c.count as f64,
                )
            })
            .collect::<Vec<_>>(),
    );
    o.gauge(
        "sglang:routing_keys_active",
        "Routing keys with requests in flight.",
        "",
        0.0,
    );
    o.head(
        "sglang:http_requests_active",
        "HTTP requests in flight by endpoint and method.",
        "gauge",
    );
    for (p, me) in by_ep.keys() {
        let now = if p == "/metrics" { 1.0 } else { 0.0 };
        o.sample("sglang:http_requests_active", &ep(p, me), now);
    }
}

/// What the start-up measured.
fn startup(o: &mut Out, m: &str) {
    o.head(
        "sglang:startup_time_seconds",
        "Start-up time by phase, seconds.",
        "gauge",
    );
    for (phase, s) in [
        ("kv_cache_allocation", 0.4),
        ("load_weight", 0.1),
        ("scheduler_e2e", 2.2),
        ("tokenizer_e2e", 19.0),
    ] {
        o.sample(
            "sglang:startup_time_seconds",
            &front(m, &[("phase", phase)]),
            s,
        );
    }
    o.head(
        "sglang:startup_cuda_graph_time_seconds",
        "Graph capture time by phase, seconds.",
        "gauge",
    );
    for phase in GRAPH_PHASES {
        o.sample(
            "sglang:startup_cuda_graph_time_seconds",
            &front(m, &[("phase", phase)]),
            0.0,
        );
    }
}

/// The scheduler's families.
fn scheduler(o: &mut Out, srv: &Server, st: &Stats, m: &str) {
    let r = rank(m, &[]);
    let pid = srv.pid.to_string();
    let r_pid = rank(m, &[("pid", &pid)]);
    let empty = Hist::new(crate::hist::COUNT);
    o.hist(
        "sglang:dp_attention_token_imbalance_ratio",
        "Data-parallel attention: token imbalance per step.",
        &[(r.clone(), &empty)],
    );
    o.hist(
        "sglang:dp_attention_sync_wait_seconds",
        "Data-parallel attention: seconds waiting for the other ranks.",
        &[(r.clone(), &empty)],
    );
    o.hist(
        "sglang:per_stage_req_latency_seconds",
        "Request latency by stage, seconds.",
        &[
            (rank(m, &[("stage", "prefill_forward")]), &st.prefill),
            (rank(m, &[("stage", "request_process")]), &st.e2e),
        ],
    );
    o.hist(
        "sglang:queue_time_seconds",
        "Seconds waiting in the queue.",
        &[(r.clone(), &st.queue)],
    );
    if st.preemptions > 0 {
        let (input, output) = st.retracted_tokens;
        o.counter(
            "sglang:num_retracted_requests_total",
            "Requests retracted to free the KV cache.",
            &[(r.clone(), st.preemptions as f64)],
        );
        o.counter(
            "sglang:num_retracted_input_tokens_total",
            "Prompt tokens of retracted requests.",
            &[(r.clone(), input as f64)],
        );
        o.counter(
            "sglang:num_retracted_output_tokens_total",
            "Generated tokens of retracted requests.",
            &[(r.clone(), output as f64)],
        );
    }
    if st.evictions > 0 {
        // Exported once the radix cache first evicted, with labels of their own.
        let cache = labels(&[
            ("cache_type", "UnifiedRadixCache"),
            ("dp_rank", "0"),
            ("pp_rank", "0"),
            ("tp_rank", "0"),
        ]);
        o.counter(
            "sglang:evicted_tokens_total",
            "Token slots the radix cache freed by eviction.",
            &[(cache.clone(), st.evicted_tokens as f64)],
        );
        let mut passes = Hist::new(crate::hist::LATENCY);
        for _ in 0..st.evictions {
            passes.observe(0.003);
        }
        o.hist(
            "sglang:eviction_duration_seconds",
            "Seconds of one eviction pass.",
            &[(cache, &passes)],
        );
    }
    o.gauge(
        "sglang:num_retracted_reqs",
        "Requests retracted in the last step.",
        &r_pid,
        0.0,
    );
    o.gauge(
        "sglang:num_paused_reqs",
        "Requests paused by a weight update.",
        &r_pid,
        0.0,
    );
    o.counter(
        "sglang:prefill_effective_tokens_total",
        "Prefill tokens by where they came from.",
        &[
            (rank(m, &[("mode", "device_hit")]), st.prefix_hits as f64),
            (rank(m, &[("mode", "host_hit")]), 0.0),
            (
                rank(m, &[("mode", "input")]),
                st.live_prompt_tokens.saturating_sub(st.prefix_hits) as f64,
            ),
            (rank(m, &[("mode", "storage_hit")]), 0.0),
        ],
    );
    let busy_s = st.steps as f64 * 0.01;
    o.counter(
        "sglang:scheduler_idle_seconds_total",
        "Seconds the scheduler had nothing to run.",
        &[(r.clone(), 1.0)],
    );
    o.counter(
        "sglang:scheduler_process_cpu_seconds_total",
        "CPU seconds used by the scheduler.",
        &[(r.clone(), busy_s)],
    );
    o.counter(
        "sglang:scheduler_stage_seconds_total",
        "Scheduler loop seconds by stage.",
        &STAGES
            .iter()
            .map(|c| {
                (
                    rank(m, &[("category", c), ("forward_overlap", "none")]),
                    busy_s / STAGES.len() as f64,
                )
            })
            .collect::<Vec<_>>(),
    );
    for (name, help, key, values) in [
        (
            "sglang:dp_attention_tokens_total",
            "Data-parallel attention: tokens per kind.",
            "kind",
            &["imbalance", "scheduled"][..],
        ),
        (
            "sglang:dp_attention_steps_total",
            "Data-parallel attention: steps by rank state.",
            "rank_state",
            &["active", "idle"][..],
        ),
        (
            "sglang:dp_attention_pairs_total",
            "Data-parallel attention: attended pairs per kind.",
            "kind",
            &["imbalance", "scheduled"][..],
        ),
    ] {
        let series: Vec<(String, f64)> =
            values.iter().map(|v| (rank(m, &[(key, v)]), 0.0)).collect();
        o.counter(name, help, &series);
    }
    let graphs = if srv.server_info.get("disable_cuda_graph") == Some(&serde_json::json!(true)) {
        "none"
    } else {
        "full"
    };
    o.counter(
        "sglang:cuda_graph_passes_total",
        "Forward passes by phase and graph use.",
        &[
            (
                rank(m, &[("mode", &format!("decode_{graphs}"))]),
                st.steps as f64,
            ),
            (
                rank(m, &[("mode", "prefill_none")]),
                st.by_stream.iter().map(|b| b.requests).sum::<u64>() as f64,
            ),
        ],
    );
    o.counter(
        "sglang:realtime_tokens_total",
        "Tokens processed, by kind, as of the last log point.",
        &[
            (
                rank(m, &[("mode", "decode")]),
                st.live_generation_tokens as f64,
            ),
            (rank(m, &[("mode", "prefill_cache")]), st.prefix_hits as f64),
            (
                rank(m, &[("mode", "prefill_compute")]),
                st.live_prompt_tokens.saturating_sub(st.prefix_hits) as f64,
            ),
        ],
    );
    pool(o, srv, st, m);
}

/// The pool's constants and the gauges of the last log point.
fn pool(o: &mut Out, srv: &Server, st: &Stats, m: &str) {
    let r = rank(m, &[]);
    let cfg = &srv.engine.cfg;
    // The simulated pool counts tokens (a page is `page_size` of them).
    let tokens = st.total_blocks;
    o.gauge(
        "sglang:max_total_num_tokens",
        "Tokens the KV cache pool holds.",
        &r,
        tokens as f64,
    );
    o.gauge(
        "sglang:weight_memory_usage_gb",
        "Memory of the weights, GB.",
        &r,
        0.0,
    );
    o.gauge(
        "sglang:kv_cache_memory_usage_gb",
        "Memory of the KV cache, GB.",
        &r,
        0.0,
    );
    o.head(
        "sglang:graph_memory_usage_gb",
        "Memory of captured graphs by phase, GB.",
        "gauge",
    );
    for phase in GRAPH_PHASES {
        o.sample(
            "sglang:graph_memory_usage_gb",
            &rank(m, &[("phase", phase)]),
            0.0,
        );
    }
    o.gauge(
        "sglang:page_size",
        "Tokens per KV cache page.",
        &r,
        cfg.block_size as f64,
    );
    o.gauge(
        "sglang:num_pages",
        "KV cache pages.",
        &r,
        (tokens / cfg.block_size.max(1)) as f64,
    );
    o.gauge(
        "sglang:context_len",
        "The longest request, tokens.",
        &r,
        srv.max_model_len as f64,
    );
    o.gauge(
        "sglang:startup_available_gpu_memory_gb",
        "Free device memory at start-up, GB.",
        &r,
        1.08,
    );
    let at = st.at_last_log;
    let usage = |used: usize| {
        let u = used as f64 / st.total_blocks.max(1) as f64;
        (u * 100.0).round() / 100.0
    };
    let hit_rate = if st.prefix_queries > 0 {
        st.prefix_hits as f64 / st.prefix_queries as f64
    } else {
        0.0
    };
    let used_tokens = at.used_blocks;
    for (name, help, v) in [
        (
            "sglang:num_running_reqs",
            "Running requests.",
            at.running as f64,
        ),
        (
            "sglang:num_queue_reqs",
            "Requests waiting in the queue.",
            at.waiting as f64,
        ),
        (
            "sglang:num_grammar_queue_reqs",
            "Requests waiting for a grammar.",
            0.0,
        ),
        (
            "sglang:gen_throughput",
            "Generated tokens per second.",
            at.gen_per_s,
        ),
        (
            "sglang:cache_hit_rate",
            "Share of prompt tokens found in the cache.",
            hit_rate,
        ),
        (
            "sglang:decode_sum_seq_lens",
            "Tokens of the sequences in the decode batch.",
            at.seq_tokens as f64,
        ),
        (
            "sglang:token_usage",
            "Share of the pool in use.",
            usage(at.used_blocks),
        ),
        (
            "sglang:full_token_usage",
            "Share of the full-attention pool in use.",
            usage(at.used_blocks),
        ),
        (
            "sglang:swa_token_usage",
            "Share of the SWA pool in use.",
            0.0,
        ),
        ("sglang:mamba_usage", "Share of the Mamba pool in use.", 0.0),
        (
            "sglang:num_used_tokens",
            "Tokens in use.",
            used_tokens as f64,
        ),
        (
            "sglang:kv_available_tokens",
            "Free token slots in the pool.",
            tokens.saturating_sub(used_tokens) as f64,
        ),
        (
            "sglang:kv_evictable_tokens",
            "Token slots held only by the radix cache.",
            0.0,
        ),
        (
            "sglang:kv_used_tokens",
            "Token slots held by requests.",
            used_tokens as f64,
        ),
    ] {
        o.gauge(name, help, &r, v);
    }
    for name in [
        "sglang:swa_available_tokens",
        "sglang:swa_evictable_tokens",
        "sglang:swa_used_tokens",
        "sglang:mamba_available_tokens",
        "sglang:mamba_evictable_tokens",
        "sglang:mamba_used_tokens",
        "sglang:spec_accept_length",
        "sglang:spec_accept_rate",
        "sglang:spec_cap_length",
        "sglang:spec_block_accept_length",
        "sglang:spec_num_steps",
        "sglang:spec_num_draft_tokens",
        "sglang:num_prefill_bootstrap_queue_reqs",
        "sglang:num_prefill_inflight_queue_reqs",
        "sglang:num_decode_prealloc_queue_reqs",
        "sglang:num_decode_transfer_queue_reqs",
        "sglang:num_decode_host_receive_queue_reqs",
        "sglang:num_decode_deferred_kv_release_reqs",
        "sglang:pending_prealloc_token_usage",
        "sglang:prealloc_full_token_usage",
        "sglang:prealloc_swa_token_usage",
        "sglang:utilization",
    ] {
        o.gauge(name, "Not used by this start (0).", &r, 0.0);
    }
    o.gauge(
        "sglang:fwd_occupancy",
        "Forward pass occupancy, percent.",
        &r,
        f64::NAN,
    );
    o.gauge(
        "sglang:new_token_ratio",
        "The scheduler's estimate of tokens still to come.",
        &r,
        st.new_token_ratio,
    );
    o.gauge(
        "sglang:is_cuda_graph",
        "The last batch ran as a graph.",
        &r,
        0.0,
    );
    o.gauge(
        "sglang:num_unique_running_routing_keys",
        "Routing keys among running requests.",
        &r,
        0.0,
    );
    for name in [
        "sglang:routing_key_running_req_count",
        "sglang:routing_key_all_req_count",
    ] {
        o.head(name, "Routing keys by request count.", "gauge");
        for gt in ROUTING_GT {
            o.sample(name, &rank(m, &[("gt", gt)]), 0.0);
        }
    }
}

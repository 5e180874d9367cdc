//! Each engine's Prometheus text, from the engine's shared state. Names, labels and
//! quirks follow the analyzer's engine table (`engine.rs`): vLLM stamps every counter and
//! histogram with `_created`; SGLang labels request counters with `is_streaming` and
//! creates them on first use, exports the retraction counter only after the first
//! retraction and rounds token usage to 0.01; TensorRT-LLM counts at request finish and
//! shows gauges frozen at the last completion.

use std::fmt::Write;

use crate::hist::{fmt, render, Hist};
use crate::http::Server;

struct Out {
    s: String,
    /// `_created` stamps: the server's start plus a small step per series, as the
    /// exporter created them one after another.
    created: f64,
}

impl Out {
    fn new(start: f64) -> Out {
        Out {
            s: String::with_capacity(48 * 1024),
            created: start + 0.5,
        }
    }
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
    fn stamp(&mut self) -> f64 {
        self.created += 0.0000071;
        self.created
    }
    fn gauge(&mut self, name: &str, help: &str, labels: &str, v: f64) {
        self.head(name, help, "gauge");
        self.sample(name, labels, v);
    }
    /// A counter `base_total` with its `base_created` sibling (vLLM only).
    fn counter_created(&mut self, base: &str, help: &str, labels: &str, v: f64) {
        self.head(&format!("{base}_total"), help, "counter");
        self.sample(&format!("{base}_total"), labels, v);
        self.head(&format!("{base}_created"), help, "gauge");
        let c = self.stamp();
        self.sample(&format!("{base}_created"), labels, c);
    }
    fn hist(&mut self, name: &str, help: &str, labels: &str, h: &Hist, created: bool) {
        self.head(name, help, "histogram");
        render(&mut self.s, name, labels, h, true);
        if created {
            let c = self.stamp();
            self.head(&format!("{name}_created"), help, "gauge");
            self.sample(&format!("{name}_created"), labels, c);
        }
    }
}

fn process_block(o: &mut Out, start: f64) {
    o.gauge(
        "process_start_time_seconds",
        "Start time of the process since unix epoch in seconds.",
        "",
        (start * 100.0).round() / 100.0,
    );
    let rss = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .nth(1)
                .and_then(|x| x.parse::<f64>().ok())
        })
        .unwrap_or(0.0)
        * 4096.0;
    o.gauge(
        "process_resident_memory_bytes",
        "Resident memory size in bytes.",
        "",
        rss,
    );
    let fds = std::fs::read_dir("/proc/self/fd")
        .map(|d| d.count())
        .unwrap_or(0);
    o.gauge(
        "process_open_fds",
        "Number of open file descriptors.",
        "",
        fds as f64,
    );
}

/// `vllm:cache_config_info`'s labels in 0.32 (keys sorted as the exporter prints them).
fn cache_info_032(
    srv: &Server,
    block_size: usize,
    blocks: usize,
    pool_tokens: u64,
    util: f64,
    over: &str,
) -> String {
    let user_block = srv
        .server_info
        .get("user_specified_block_size")
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    let space = srv
        .server_info
        .get("kv_cache_memory_bytes")
        .and_then(|v| v.as_u64())
        .map_or("None".to_string(), |b| b.to_string());
    let conc = pool_tokens as f64 / srv.max_model_len.max(1) as f64;
    let py = |b: bool| if b { "True" } else { "False" };
    [
        ("_block_size_resolved", "True".to_string()),
        ("block_size", block_size.to_string()),
        ("cache_dtype", "auto".into()),
        ("cache_hit_alignment_tokens", "None".into()),
        ("effective_attention_block_size", block_size.to_string()),
        ("enable_mamba_shared_prefix_checkpoint", "False".into()),
        ("enable_prefix_caching", "True".into()),
        ("engine", "0".into()),
        ("gpu_memory_utilization", util.to_string()),
        ("hash_block_size", "None".into()),
        ("is_attention_free", "False".into()),
        ("kv_cache_dtype_skip_layers", "[]".into()),
        ("kv_cache_layout", "None".into()),
        ("kv_cache_max_concurrency", crate::pylit::float(conc)),
        ("kv_cache_memory_bytes", space),
        ("kv_cache_size_tokens", pool_tokens.to_string()),
        ("kv_offloading_backend", "native".into()),
        ("kv_offloading_size", "None".into()),
        ("kv_sharing_fast_prefill", "False".into()),
        ("mamba_block_size", "None".into()),
        ("mamba_cache_dtype", "auto".into()),
        ("mamba_cache_mode", "none".into()),
        ("mamba_page_size_padded", "None".into()),
        ("mamba_ssm_cache_dtype", "auto".into()),
        ("num_cpu_blocks", "None".into()),
        ("num_gpu_blocks", blocks.to_string()),
        ("num_gpu_blocks_override", over.to_string()),
        ("prefix_cache_retention_interval", "0".into()),
        ("prefix_caching_hash_algo", "sha256".into()),
        ("prefix_match_unit", "None".into()),
        ("replayssm_buffer_len", "16".into()),
        ("skip_page_size_padded", "None".into()),
        ("sliding_window", "None".into()),
        ("swa_bounded_replay", "True".into()),
        ("use_kda_recoverssm", "False".into()),
        ("use_replayssm", "False".into()),
        ("user_specified_block_size", py(user_block).into()),
    ]
    .iter()
    .map(|(k, v)| format!("{k}=\"{v}\""))
    .collect::<Vec<_>>()
    .join(",")
}

/// The families vLLM 0.32 exports beside 0.30's (names, types and label sets as the real
/// release prints them; the simulator has no prefix cache, multi-modal cache, KV transfer
/// or flop estimates, so those read zero).
fn vllm_032_families(o: &mut Out, st: &crate::sched::Stats, srv: &Server, l: &str) {
    let with = |k: &str, v: &str| format!("{l},{k}=\"{v}\"");
    o.head(
        "vllm:num_requests_waiting_by_reason",
        "Number of waiting requests by reason. Reason labels: 'capacity' = waiting for scheduling capacity; 'deferred' = deferred by transient constraints (LoRA budget, KV transfer, blocked status). Sum of all reasons equals vllm:num_requests_waiting.",
        "gauge",
    );
    o.sample(
        "vllm:num_requests_waiting_by_reason",
        &with("reason", "capacity"),
        st.waiting as f64,
    );
    o.sample(
        "vllm:num_requests_waiting_by_reason",
        &with("reason", "deferred"),
        0.0,
    );
    o.head(
        "vllm:engine_sleep_state",
        "Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means engine is awake; weights_offloaded = 1 means sleep level 1; discard_all = 1 means sleep level 2.",
        "gauge",
    );
    for (state, v) in [
        ("awake", 1.0),
        ("weights_offloaded", 0.0),
        ("discard_all", 0.0),
    ] {
        o.sample("vllm:engine_sleep_state", &with("sleep_state", state), v);
    }
    for (base, help) in [
        ("vllm:estimated_flops_per_gpu", "Estimated number of floating point operations per GPU (for Model Flops Utilization calculations)."),
        ("vllm:estimated_read_bytes_per_gpu", "Estimated number of bytes read from memory per GPU (for Model Flops Utilization calculations)."),
        ("vllm:estimated_write_bytes_per_gpu", "Estimated number of bytes written to memory per GPU (for Model Flops Utilization calculations)."),
        ("vllm:external_prefix_cache_queries", "External prefix cache queries from KV connector cross-instance cache sharing, in terms of number of queried tokens."),
        ("vllm:external_prefix_cache_hits", "External prefix cache hits from KV connector cross-instance cache sharing, in terms of number of cached tokens."),
        ("vllm:mm_cache_queries", "Multi-modal cache queries, in terms of number of queried items."),
        ("vllm:mm_cache_hits", "Multi-modal cache hits, in terms of number of cached items."),
        ("vllm:prompt_tokens_cached", "Number of cached prompt tokens (local + external)."),
    ] {
        o.counter_created(base, help, l, 0.0);
    }
    let by_source = |o: &mut Out, base: &str, help: &str, rows: &[(&str, f64)]| {
        o.head(&format!("{base}_total"), help, "counter");
        for (src, v) in rows {
            o.sample(&format!("{base}_total"), &with("source", src), *v);
        }
        o.head(&format!("{base}_created"), help, "gauge");
        for (src, _) in rows {
            let c = o.stamp();
            o.sample(&format!("{base}_created"), &with("source", src), c);
        }
    };
    by_source(
        o,
        "vllm:prompt_tokens_by_source",
        "Number of prompt tokens by source.",
        &[
            ("local_compute", st.live_prompt_tokens as f64),
            ("local_cache_hit", 0.0),
            ("external_kv_transfer", 0.0),
        ],
    );
    by_source(
        o,
        "vllm:prompt_tokens_cached_by_source",
        "Prefix-cache hit tokens by the cache tier that supplied them: device (local HBM), host (offloaded to DRAM), disk, p2p (transferred from another vLLM instance) or external_unspecified. Counted at admission; sums to vllm:prefix_cache_hits + vllm:external_prefix_cache_hits.",
        &[
            ("device", 0.0),
            ("host", 0.0),
            ("p2p", 0.0),
            ("disk", 0.0),
            ("external_unspecified", 0.0),
        ],
    );
    o.hist(
        "vllm:request_prefill_kv_computed_tokens",
        "Histogram of new KV tokens computed during prefill (excluding cached tokens).",
        l,
        &st.prompt_len,
        true,
    );
    // Admission control's counter carries no engine label.
    let help = "Number of admission attempts rejected by a queue limit, by reason.";
    let ml = format!("model_name=\"{}\"", srv.served_name);
    let rejected = srv.rejections.load(std::sync::atomic::Ordering::SeqCst) as f64;
    o.head("vllm:admission_rejections_total", help, "counter");
    for (reason, v) in [
        ("max_num_queued_reqs", rejected),
        ("max_num_queued_tokens", 0.0),
    ] {
        o.sample(
            "vllm:admission_rejections_total",
            &format!("{ml},reason=\"{reason}\""),
            v,
        );
    }
    o.head("vllm:admission_rejections_created", help, "gauge");
    for reason in ["max_num_queued_reqs", "max_num_queued_tokens"] {
        let c = o.stamp();
        o.sample(
            "vllm:admission_rejections_created",
            &format!("{ml},reason=\"{reason}\""),
            c,
        );
    }
}

pub fn vllm(srv: &Server) -> String {
    let st = srv.engine.stats.lock().unwrap().clone();
    let mut o = Out::new(srv.start_unix);
    let l = format!("engine=\"0\",model_name=\"{}\"", srv.served_name);
    process_block(&mut o, srv.start_unix);
    o.gauge(
        "vllm:num_requests_running",
        "Number of requests in model execution batches.",
        &l,
        st.running as f64,
    );
    o.gauge(
        "vllm:num_requests_waiting",
        "Number of requests waiting to be processed.",
        &l,
        st.waiting as f64,
    );
    o.gauge(
        "vllm:kv_cache_usage_perc",
        "KV-cache usage. 1 means 100 percent usage.",
        &l,
        st.usage(),
    );
    let prompt_sum = st.live_prompt_tokens as f64;
    o.counter_created(
        "vllm:prefix_cache_queries",
        "Prefix cache queries, in terms of number of queried tokens.",
        &l,
        st.prefix_queries as f64,
    );
    o.counter_created(
        "vllm:prefix_cache_hits",
        "Prefix cache hits, in terms of number of cached tokens.",
        &l,
        st.prefix_hits as f64,
    );
    o.counter_created(
        "vllm:num_preemptions",
        "Cumulative number of preemption from the engine.",
        &l,
        st.preemptions as f64,
    );
    o.counter_created(
        "vllm:prompt_tokens",
        "Number of prefill tokens processed.",
        &l,
        prompt_sum,
    );
    o.counter_created(
        "vllm:generation_tokens",
        "Number of generation tokens processed.",
        &l,
        st.live_generation_tokens as f64,
    );
    let help = "Count of successfully processed requests.";
    o.head("vllm:request_success_total", help, "counter");
    let reasons = ["stop", "length", "abort", "error", "repetition"];
    for r in reasons {
        let v = st.finished_by_reason.get(r).copied().unwrap_or(0) as f64;
        o.sample(
            "vllm:request_success_total",
            &format!(
                "engine=\"0\",finished_reason=\"{r}\",model_name=\"{}\"",
                srv.served_name
            ),
            v,
        );
    }
    o.head("vllm:request_success_created", help, "gauge");
    for r in reasons {
        let c = o.stamp();
        o.sample(
            "vllm:request_success_created",
            &format!(
                "engine=\"0\",finished_reason=\"{r}\",model_name=\"{}\"",
                srv.served_name
            ),
            c,
        );
    }
    o.hist(
        "vllm:request_prompt_tokens",
        "Number of prefill tokens processed.",
        &l,
        &st.prompt_len,
        true,
    );
    o.hist(
        "vllm:request_generation_tokens",
        "Number of generation tokens processed.",
        &l,
        &st.gen_len,
        true,
    );
    o.hist(
        "vllm:iteration_tokens_total",
        "Histogram of number of tokens per engine_step.",
        &l,
        &st.iter_tokens,
        true,
    );
    o.hist(
        "vllm:request_max_num_generation_tokens",
        "Histogram of maximum number of requested generation tokens.",
        &l,
        &st.max_tokens,
        true,
    );
    o.hist(
        "vllm:request_params_n",
        "Histogram of the n request parameter.",
        &l,
        &st.n_param,
        true,
    );
    o.hist(
        "vllm:request_params_max_tokens",
        "Histogram of the max_tokens request parameter.",
        &l,
        &st.max_tokens,
        true,
    );
    o.hist(
        "vllm:time_to_first_token_seconds",
        "Histogram of time to first token in seconds.",
        &l,
        &st.ttft,
        true,
    );
    o.hist(
        "vllm:inter_token_latency_seconds",
        "Histogram of inter-token latency in seconds.",
        &l,
        &st.itl,
        true,
    );
    o.hist(
        "vllm:request_time_per_output_token_seconds",
        "Histogram of time_per_output_token_seconds per request.",
        &l,
        &st.tpot,
        true,
    );
    o.hist(
        "vllm:e2e_request_latency_seconds",
        "Histogram of e2e request latency in seconds.",
        &l,
        &st.e2e,
        true,
    );
    o.hist(
        "vllm:request_queue_time_seconds",
        "Histogram of time spent in WAITING phase for request.",
        &l,
        &st.queue,
        true,
    );
    o.hist(
        "vllm:request_inference_time_seconds",
        "Histogram of time spent in RUNNING phase for request.",
        &l,
        &st.inference,
        true,
    );
    o.hist(
        "vllm:request_prefill_time_seconds",
        "Histogram of time spent in PREFILL phase for request.",
        &l,
        &st.prefill,
        true,
    );
    o.hist(
        "vllm:request_decode_time_seconds",
        "Histogram of time spent in DECODE phase for request.",
        &l,
        &st.decode,
        true,
    );
    o.hist(
        "vllm:request_num_preemptions",
        "Histogram of the number of times a request was preempted.",
        &l,
        &st.req_preempt,
        true,
    );
    let c = &srv.engine.cfg;
    let blocks = st.total_blocks + 1;
    let v032 = crate::vllm032::Flavor::of(&srv.version).v032;
    if v032 {
        vllm_032_families(&mut o, &st, srv, &l);
    }
    let pool_tokens = srv
        .server_info
        .get("kv_pool_tokens")
        .and_then(|v| v.as_u64())
        .unwrap_or((blocks * c.block_size) as u64);
    let util = srv
        .server_info
        .get("gpu_memory_utilization")
        .and_then(|v| v.as_f64())
        .unwrap_or(0.9);
    let over = srv
        .server_info
        .get("num_gpu_blocks_override")
        .and_then(|v| v.as_u64())
        .map_or("None".to_string(), |n| n.to_string());
    let info = if v032 {
        cache_info_032(srv, c.block_size, blocks, pool_tokens, util, &over)
    } else {
        format!(
            "block_size=\"{}\",cache_dtype=\"auto\",enable_prefix_caching=\"True\",engine=\"0\",gpu_memory_utilization=\"{}\",is_attention_free=\"False\",kv_cache_size_tokens=\"{}\",num_cpu_blocks=\"None\",num_gpu_blocks=\"{}\",num_gpu_blocks_override=\"{}\",sliding_window=\"None\"",
            c.block_size, util, pool_tokens, blocks, over
        )
    };
    o.gauge(
        "vllm:cache_config_info",
        "Information of the LLMEngine CacheConfig",
        &info,
        1.0,
    );
    // The HTTP instrumentator skips /metrics, /health and /load.
    let http = srv.http.lock().unwrap().clone();
    let rows: Vec<_> = http
        .iter()
        .filter(|((p, _, _), _)| !["/metrics", "/health", "/load"].contains(&p.as_str()))
        .collect();
    if !rows.is_empty() {
        let help = "Total number of requests by method, status and handler.";
        o.head("http_requests_total", help, "counter");
        let mut merged: std::collections::BTreeMap<(String, String, String), (u64, f64)> =
            Default::default();
        for ((p, m, s), c) in &rows {
            let e = merged
                .entry((p.clone(), m.clone(), format!("{}xx", s / 100)))
                .or_insert((0, c.created));
            e.0 += c.count;
        }
        for ((p, m, s), (n, _)) in &merged {
            o.sample(
                "http_requests_total",
                &format!("handler=\"{p}\",method=\"{m}\",status=\"{s}\""),
                *n as f64,
            );
        }
        o.head("http_requests_created", help, "gauge");
        for ((p, m, s), (_, c)) in &merged {
            o.sample(
                "http_requests_created",
                &format!("handler=\"{p}\",method=\"{m}\",status=\"{s}\""),
                *c,
            );
        }
    }
    o.s
}

pub fn sglang(srv: &Server) -> String {
    let st = srv.engine.stats.lock().unwrap().clone();
    let mut o = Out::new(srv.start_unix);
    let m = &srv.served_name;
    let rank = format!(
        "engine_type=\"unified\",model_name=\"{m}\",moe_ep_rank=\"0\",pp_rank=\"0\",tp_rank=\"0\""
    );
    let rank_pid = format!("engine_type=\"unified\",model_name=\"{m}\",moe_ep_rank=\"0\",pid=\"{}\",pp_rank=\"0\",tp_rank=\"0\"", srv.pid);
    let http = srv.http.lock().unwrap().clone();
    o.head(
        "sglang:http_requests_total",
        "Total number of HTTP requests by endpoint and method.",
        "counter",
    );
    let mut by_ep: std::collections::BTreeMap<(String, String), u64> = Default::default();
    for ((p, me, _), c) in &http {
        *by_ep.entry((p.clone(), me.clone())).or_insert(0) += c.count;
    }
    for ((p, me), n) in &by_ep {
        o.sample(
            "sglang:http_requests_total",
            &format!("endpoint=\"{p}\",method=\"{me}\""),
            *n as f64,
        );
    }
    o.head(
        "sglang:http_responses_total",
        "Total number of HTTP responses by endpoint, method and status code.",
        "counter",
    );
    for ((p, me, s), c) in &http {
        o.sample(
            "sglang:http_responses_total",
            &format!("endpoint=\"{p}\",method=\"{me}\",status_code=\"{s}\""),
            c.count as f64,
        );
    }
    let present: Vec<usize> = (0..2).filter(|i| st.by_stream[*i].requests > 0).collect();
    let sl = |i: usize| {
        format!(
            "engine_type=\"unified\",is_streaming=\"{}\",model_name=\"{m}\"",
            if i == 1 { "true" } else { "false" }
        )
    };
    for (name, help, get) in [
        (
            "sglang:prompt_tokens_total",
            "Number of prefill tokens processed.",
            0,
        ),
        (
            "sglang:generation_tokens_total",
            "Number of generation tokens processed.",
            1,
        ),
        (
            "sglang:num_requests_total",
            "Number of requests processed.",
            2,
        ),
    ] {
        if present.is_empty() {
            continue;
        }
        o.head(name, help, "counter");
        for &i in &present {
            let b = &st.by_stream[i];
            let v = [b.prompt_tokens, b.generation_tokens, b.requests][get];
            o.sample(name, &sl(i), v as f64);
        }
    }
    if !present.is_empty() {
        o.head(
            "sglang:time_to_first_token_seconds",
            "Histogram of time to first token in seconds.",
            "histogram",
        );
        for &i in &present {
            render(
                &mut o.s,
                "sglang:time_to_first_token_seconds",
                &sl(i),
                &st.by_stream[i].ttft,
                true,
            );
        }
        o.head(
            "sglang:e2e_request_latency_seconds",
            "Histogram of End-to-end request latency in seconds",
            "histogram",
        );
        for &i in &present {
            render(
                &mut o.s,
                "sglang:e2e_request_latency_seconds",
                &sl(i),
                &st.by_stream[i].e2e,
                true,
            );
        }
    }
    o.hist(
        "sglang:queue_time_seconds",
        "Histogram of queueing time in seconds.",
        &rank,
        &st.queue,
        false,
    );
    o.gauge(
        "sglang:num_retracted_reqs",
        "The number of retracted requests.",
        &rank_pid,
        0.0,
    );
    o.gauge(
        "sglang:num_paused_reqs",
        "The number of paused requests by async weight sync.",
        &rank_pid,
        0.0,
    );
    o.gauge(
        "sglang:max_total_num_tokens",
        "Maximum total number of tokens in the KV cache pool.",
        &rank,
        st.total_blocks as f64,
    );
    o.gauge(
        "sglang:page_size",
        "The page size of the KV cache.",
        &rank,
        srv.engine.cfg.block_size as f64,
    );
    o.gauge(
        "sglang:context_len",
        "The context length of the model.",
        &rank,
        srv.max_model_len as f64,
    );
    o.gauge(
        "sglang:num_running_reqs",
        "The number of running requests.",
        &rank,
        st.running as f64,
    );
    o.gauge(
        "sglang:num_queue_reqs",
        "The number of requests in the waiting queue.",
        &rank,
        st.waiting as f64,
    );
    o.gauge(
        "sglang:token_usage",
        "The token usage.",
        &rank,
        (st.usage() * 100.0).round() / 100.0,
    );
    o.gauge(
        "sglang:full_token_usage",
        "The token usage for full attention layers.",
        &rank,
        (st.usage() * 100.0).round() / 100.0,
    );
    let hit_rate = if st.prefix_queries > 0 {
        st.prefix_hits as f64 / st.prefix_queries as f64
    } else {
        0.0
    };
    o.gauge(
        "sglang:cache_hit_rate",
        "The prefix cache hit rate.",
        &rank,
        hit_rate,
    );
    // Prefill tokens by where they came from: computed (`input`) or found in the cache.
    o.head(
        "sglang:prefill_effective_tokens_total",
        "Number of prefill tokens by where they came from.",
        "counter",
    );
    for (mode, v) in [
        ("input", st.live_prompt_tokens - st.prefix_hits),
        ("device_hit", st.prefix_hits),
        ("host_hit", 0),
        ("storage_hit", 0),
    ] {
        o.sample(
            "sglang:prefill_effective_tokens_total",
            &format!("engine_type=\"unified\",mode=\"{mode}\",model_name=\"{m}\",moe_ep_rank=\"0\",pp_rank=\"0\",tp_rank=\"0\""),
            v as f64,
        );
    }
    if st.prefix_hits > 0 {
        o.head(
            "sglang:cached_tokens_total",
            "Number of cached prompt tokens.",
            "counter",
        );
        o.sample(
            "sglang:cached_tokens_total",
            &format!("cache_source=\"device\",engine_type=\"unified\",model_name=\"{m}\""),
            st.prefix_hits as f64,
        );
    }
    o.gauge(
        "sglang:fwd_occupancy",
        "Forward pass GPU occupancy percentage.",
        &rank,
        f64::NAN,
    );
    if st.preemptions > 0 {
        o.head(
            "sglang:num_retracted_requests_total",
            "Total number of retracted requests.",
            "counter",
        );
        o.sample(
            "sglang:num_retracted_requests_total",
            &rank,
            st.preemptions as f64,
        );
    }
    o.s
}

pub fn trt(srv: &Server) -> String {
    let st = srv.engine.stats.lock().unwrap().clone();
    let mut o = Out::new(srv.start_unix);
    let info = srv.server_info.clone();
    if !info
        .get("return_perf_metrics")
        .and_then(|v| v.as_bool())
        .unwrap_or(false)
    {
        // Without return_perf_metrics the exporter has nothing of the engine's.
        process_block(&mut o, srv.start_unix);
        return o.s;
    }
    let m = &srv.served_name;
    let l = format!("engine_type=\"pytorch\",model_name=\"{m}\"");
    let lp = format!(
        "engine_type=\"pytorch\",model_name=\"{m}\",pid=\"{}\"",
        srv.pid
    );
    let finished: u64 = st.finished_by_reason.values().sum();
    if finished > 0 {
        o.head(
            "trtllm_request_success_total",
            "Count of successfully processed requests.",
            "counter",
        );
        for (r, n) in &st.finished_by_reason {
            o.sample(
                "trtllm_request_success_total",
                &format!("engine_type=\"pytorch\",finished_reason=\"{r}\",model_name=\"{m}\""),
                *n as f64,
            );
        }
    }
    let p = st.by_stream[0].prompt_tokens + st.by_stream[1].prompt_tokens;
    let g = st.by_stream[0].generation_tokens + st.by_stream[1].generation_tokens;
    o.head(
        "trtllm_prompt_tokens_total",
        "Cumulative number of prompt (input) tokens processed.",
        "counter",
    );
    o.sample("trtllm_prompt_tokens_total", &l, p as f64);
    o.head(
        "trtllm_generation_tokens_total",
        "Cumulative number of generation (output) tokens produced.",
        "counter",
    );
    o.sample("trtllm_generation_tokens_total", &l, g as f64);
    o.head(
        "trtllm_prompt_cached_tokens_total",
        "Cumulative number of prompt tokens reused from the KV cache.",
        "counter",
    );
    o.sample(
        "trtllm_prompt_cached_tokens_total",
        &l,
        st.finished_cached as f64,
    );
    o.head(
        "trtllm_num_requests_completed_total",
        "Total number of completed requests across iterations",
        "counter",
    );
    o.sample("trtllm_num_requests_completed_total", &l, finished as f64);
    o.gauge(
        "trtllm_kv_cache_config_info",
        "KV cache configuration info",
        &format!(
            "cache_dtype=\"auto\",enable_block_reuse=\"True\",enable_partial_reuse=\"True\",engine_type=\"pytorch\",free_gpu_memory_fraction=\"{}\",model_name=\"{m}\",pid=\"{}\"",
            info.get("free_gpu_memory_fraction").and_then(|v| v.as_str()).unwrap_or("0.9"),
            srv.pid
        ),
        1.0,
    );
    if info
        .get("enable_iter_perf_stats")
        .and_then(|v| v.as_bool())
        .unwrap_or(false)
    {
        let (run, wait, used, paused) = st.at_last_completion;
        let max = st.total_blocks as f64;
        o.gauge(
            "trtllm_num_requests_running",
            "Number of active requests",
            &lp,
            run as f64,
        );
        o.gauge(
            "trtllm_num_requests_waiting",
            "Number of queued requests",
            &lp,
            wait as f64,
        );
        o.gauge(
            "trtllm_max_num_active_requests",
            "Maximum number of active requests",
            &lp,
            srv.engine.cfg.max_running as f64,
        );
        o.gauge(
            "trtllm_kv_cache_utilization",
            "KV cache utilization",
            &lp,
            if max > 0.0 { used as f64 / max } else { 0.0 },
        );
        o.gauge(
            "trtllm_kv_cache_max_blocks",
            "Maximum number of KV cache blocks",
            &lp,
            max,
        );
        o.gauge(
            "trtllm_kv_cache_free_blocks",
            "Number of free KV cache blocks",
            &lp,
            max - used as f64,
        );
        o.gauge(
            "trtllm_kv_cache_used_blocks",
            "Number of used KV cache blocks",
            &lp,
            used as f64,
        );
        o.gauge(
            "trtllm_kv_cache_tokens_per_block",
            "Number of tokens per KV cache block",
            &lp,
            srv.engine.cfg.block_size as f64,
        );
        o.gauge(
            "trtllm_num_paused_requests",
            "Number of paused requests",
            &lp,
            paused as f64,
        );
        o.gauge(
            "trtllm_num_scheduled_requests",
            "Number of scheduled requests",
            &lp,
            run as f64,
        );
    }
    o.hist(
        "trtllm_e2e_request_latency_seconds",
        "Histogram of end to end request latency in seconds.",
        &l,
        &st.e2e,
        false,
    );
    o.hist(
        "trtllm_time_to_first_token_seconds",
        "Histogram of time to first token in seconds.",
        &l,
        &st.ttft,
        false,
    );
    o.hist(
        "trtllm_time_per_output_token_seconds",
        "Histogram of time per output token in seconds.",
        &l,
        &st.tpot,
        false,
    );
    o.hist(
        "trtllm_request_queue_time_seconds",
        "Histogram of time spent in WAITING phase for request.",
        &l,
        &st.queue,
        false,
    );
    o.s
}

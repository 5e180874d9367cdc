//! The three serving engines: names, metric names, quirks, and how to tell them apart
//! (docs/run-folder.md#engines). This is the one table every other part reads metric
//! names from.

/// A serving engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Engine {
    Vllm,
    Sglang,
    Trtllm,
}

/// Metric names an engine exports, per role. `None`: no such series.
#[derive(Debug)]
pub struct Metrics {
    pub running: &'static str,
    pub waiting: &'static str,
    pub kv_usage: &'static str,
    pub evictions: Option<&'static str>,
    /// A gauge whose presence means "the eviction counter reads 0" (SGLang only).
    pub evictions_witness: Option<&'static str>,
    pub paused: Option<&'static str>,
    pub generation_tokens: &'static str,
    pub prompt_tokens: &'static str,
    pub requests_finished: &'static str,
    /// Label on the finished-requests counter giving why a request finished.
    pub finished_reason_label: Option<&'static str>,
    pub e2e_latency: &'static str,
    pub ttft: &'static str,
    pub queue_time: &'static str,
    /// The info series carrying `num_gpu_blocks` (vLLM only; T14).
    pub cache_info: Option<&'static str>,
}

const VLLM: Metrics = Metrics {
    running: "vllm:num_requests_running",
    waiting: "vllm:num_requests_waiting",
    kv_usage: "vllm:kv_cache_usage_perc",
    evictions: Some("vllm:num_preemptions_total"),
    evictions_witness: None,
    paused: None,
    generation_tokens: "vllm:generation_tokens_total",
    prompt_tokens: "vllm:prompt_tokens_total",
    requests_finished: "vllm:request_success_total",
    finished_reason_label: Some("finished_reason"),
    e2e_latency: "vllm:e2e_request_latency_seconds",
    ttft: "vllm:time_to_first_token_seconds",
    queue_time: "vllm:request_queue_time_seconds",
    cache_info: Some("vllm:cache_config_info"),
};

const SGLANG: Metrics = Metrics {
    running: "sglang:num_running_reqs",
    waiting: "sglang:num_queue_reqs",
    kv_usage: "sglang:token_usage",
    evictions: Some("sglang:num_retracted_requests_total"),
    evictions_witness: Some("sglang:num_retracted_reqs"),
    paused: None,
    generation_tokens: "sglang:generation_tokens_total",
    prompt_tokens: "sglang:prompt_tokens_total",
    requests_finished: "sglang:num_requests_total",
    finished_reason_label: None,
    e2e_latency: "sglang:e2e_request_latency_seconds",
    ttft: "sglang:time_to_first_token_seconds",
    queue_time: "sglang:queue_time_seconds",
    cache_info: None,
};

const TRTLLM: Metrics = Metrics {
    running: "trtllm_num_requests_running",
    waiting: "trtllm_num_requests_waiting",
    kv_usage: "trtllm_kv_cache_utilization",
    evictions: None,
    evictions_witness: None,
    paused: Some("trtllm_num_paused_requests"),
    generation_tokens: "trtllm_generation_tokens_total",
    prompt_tokens: "trtllm_prompt_tokens_total",
    requests_finished: "trtllm_request_success_total",
    finished_reason_label: Some("finished_reason"),
    e2e_latency: "trtllm_e2e_request_latency_seconds",
    ttft: "trtllm_time_to_first_token_seconds",
    queue_time: "trtllm_request_queue_time_seconds",
    cache_info: None,
};

/// A counter series: its name and the labels it must carry (its series are summed).
pub type Selector = (&'static str, &'static [(&'static str, &'static str)]);

/// The prefix-cache counters of an engine (T17), each a sum of counter series counted in
/// prompt tokens. `None` from [`Engine::prefix_cache`]: the engine exports none.
#[derive(Debug)]
pub struct PrefixCache {
    /// Prompt tokens served from the cache instead of computed.
    pub hits: &'static [Selector],
    /// Prompt tokens looked up in the cache (hits included).
    pub queries: &'static [Selector],
    /// The counters in words, for messages and evidence.
    pub source: &'static str,
}

const VLLM_PREFIX: PrefixCache = PrefixCache {
    hits: &[("vllm:prefix_cache_hits_total", &[])],
    queries: &[("vllm:prefix_cache_queries_total", &[])],
    source: "vllm:prefix_cache_hits_total / vllm:prefix_cache_queries_total",
};

/// SGLang counts prefill tokens by where they came from: `input` were computed, the
/// `*_hit` modes came from its radix cache (device, host memory, storage).
const SGLANG_HITS: &[Selector] = &[
    (
        "sglang:prefill_effective_tokens_total",
        &[("mode", "device_hit")],
    ),
    (
        "sglang:prefill_effective_tokens_total",
        &[("mode", "host_hit")],
    ),
    (
        "sglang:prefill_effective_tokens_total",
        &[("mode", "storage_hit")],
    ),
];

const SGLANG_PREFIX: PrefixCache = PrefixCache {
    hits: SGLANG_HITS,
    queries: &[
        (
            "sglang:prefill_effective_tokens_total",
            &[("mode", "input")],
        ),
        (
            "sglang:prefill_effective_tokens_total",
            &[("mode", "device_hit")],
        ),
        (
            "sglang:prefill_effective_tokens_total",
            &[("mode", "host_hit")],
        ),
        (
            "sglang:prefill_effective_tokens_total",
            &[("mode", "storage_hit")],
        ),
    ],
    source: "sglang:prefill_effective_tokens_total, the *_hit modes against all modes",
};

/// TensorRT-LLM counts reused prompt tokens beside all prompt tokens (KV-cache block
/// reuse, `enable_block_reuse`), both at a request's finish.
const TRTLLM_PREFIX: PrefixCache = PrefixCache {
    hits: &[("trtllm_prompt_cached_tokens_total", &[])],
    queries: &[("trtllm_prompt_tokens_total", &[])],
    source: "trtllm_prompt_cached_tokens_total / trtllm_prompt_tokens_total",
};

/// The finish reasons the report counts, in its order.
pub const FINISH_REASONS: [&str; 5] = ["length", "stop", "repetition", "abort", "error"];

impl Engine {
    pub const ALL: [Engine; 3] = [Engine::Vllm, Engine::Sglang, Engine::Trtllm];

    /// The key used in files and JSON.
    pub fn key(self) -> &'static str {
        match self {
            Engine::Vllm => "vllm",
            Engine::Sglang => "sglang",
            Engine::Trtllm => "trtllm",
        }
    }

    /// The name people use.
    pub fn display(self) -> &'static str {
        match self {
            Engine::Vllm => "vLLM",
            Engine::Sglang => "SGLang",
            Engine::Trtllm => "TensorRT-LLM",
        }
    }

    pub fn metric_prefix(self) -> &'static str {
        match self {
            Engine::Vllm => "vllm:",
            Engine::Sglang => "sglang:",
            Engine::Trtllm => "trtllm_",
        }
    }

    pub fn metrics(self) -> &'static Metrics {
        match self {
            Engine::Vllm => &VLLM,
            Engine::Sglang => &SGLANG,
            Engine::Trtllm => &TRTLLM,
        }
    }

    /// Its prefix-cache counters (T17).
    pub fn prefix_cache(self) -> &'static PrefixCache {
        match self {
            Engine::Vllm => &VLLM_PREFIX,
            Engine::Sglang => &SGLANG_PREFIX,
            Engine::Trtllm => &TRTLLM_PREFIX,
        }
    }

    /// Text that marks a boot-log line as one-time warm-up work (compilation, CUDA-graph
    /// capture, kernel JIT): logged after readiness, it happened while serving (T18).
    /// Matched case-insensitively.
    pub fn warm_up_markers(self) -> &'static [&'static str] {
        match self {
            Engine::Vllm => &[
                "compiling a graph for",
                "capturing cuda graph",
                "graph capturing finished",
                "torch.compile took",
            ],
            Engine::Sglang => &["capture cuda graph", "cuda graph begin", "compiling"],
            Engine::Trtllm => &["[warmup]", "jit warmup", "cuda graph warmup"],
        }
    }

    /// Its word for evicting a running request (noun, singular).
    pub fn eviction_word(self) -> &'static str {
        match self {
            Engine::Vllm => "preemption",
            Engine::Sglang => "retraction",
            Engine::Trtllm => "pause",
        }
    }

    /// The past-tense verb for an eviction.
    pub fn eviction_verb(self) -> &'static str {
        match self {
            Engine::Vllm => "preempted",
            Engine::Sglang => "retracted",
            Engine::Trtllm => "paused",
        }
    }

    /// Has a counter of evicted requests (TensorRT-LLM has none).
    pub fn evictions_counted(self) -> bool {
        self.metrics().evictions.is_some()
    }

    /// Gauges refresh only when a request completes (TensorRT-LLM).
    pub fn gauges_lag(self) -> bool {
        self == Engine::Trtllm
    }

    /// The generated-token counter moves only when a request finishes.
    pub fn tokens_at_finish(self) -> bool {
        self != Engine::Vllm
    }

    /// What to change when the running/waiting/KV gauges are missing.
    pub fn missing_gauges_hint(self) -> Option<&'static str> {
        match self {
            Engine::Trtllm => Some(
                "TensorRT-LLM exports the running, waiting and KV gauges only with \
                 `enable_iter_perf_stats: true` in the YAML given to `trtllm-serve --config`",
            ),
            _ => None,
        }
    }

    pub fn default_port(self) -> u16 {
        match self {
            Engine::Sglang => 30000,
            _ => 8000,
        }
    }

    /// Release series tested: another version gets a note that a changed log line or
    /// metric may explain a "can't tell".
    pub fn tested_series(self) -> &'static [&'static str] {
        match self {
            // 0.32: the CPU platform's release, recorded in fixtures/real/.
            Engine::Vllm => &["0.28", "0.29", "0.30", "0.32"],
            Engine::Sglang => &["0.5"],
            Engine::Trtllm => &["1.3"],
        }
    }

    pub fn from_key(key: &str) -> Option<Engine> {
        Engine::ALL.into_iter().find(|e| e.key() == key)
    }

    /// Parses a user-given engine name (`--engine`, `INFERLINT_ENGINE`): a key or display
    /// name, trimmed, case-insensitive.
    pub fn parse_name(name: &str) -> Option<Engine> {
        match name.trim().to_ascii_lowercase().as_str() {
            "vllm" => Some(Engine::Vllm),
            "sglang" => Some(Engine::Sglang),
            "trtllm" | "tensorrt-llm" => Some(Engine::Trtllm),
            _ => None,
        }
    }

    /// The engine of a set of distinct metric names: the prefix most names carry, ties to
    /// the first of vLLM, SGLang, TensorRT-LLM; none when no name has a prefix.
    pub fn from_metric_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<Engine> {
        let mut counts = [0usize; 3];
        for n in names {
            for (i, e) in Engine::ALL.iter().enumerate() {
                if n.starts_with(e.metric_prefix()) {
                    counts[i] += 1;
                }
            }
        }
        let mut best: Option<(usize, Engine)> = None;
        for (i, e) in Engine::ALL.iter().enumerate() {
            if counts[i] > 0 && best.is_none_or(|(c, _)| counts[i] > c) {
                best = Some((counts[i], *e));
            }
        }
        best.map(|(_, e)| e)
    }

    /// Tells whether `version` belongs to a tested release series.
    pub fn version_tested(self, version: &str) -> bool {
        self.tested_series().iter().any(|s| {
            version == *s
                || version
                    .strip_prefix(s)
                    .is_some_and(|rest| rest.starts_with('.'))
        })
    }
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Finds `needle` in `hay` at a position not preceded by a word character.
fn find_unprefixed(hay: &str, needle: &str) -> bool {
    hay.match_indices(needle)
        .any(|(i, _)| !hay[..i].chars().next_back().is_some_and(is_word))
}

/// The engine a boot log names, from its first 200,000 characters.
pub fn engine_from_log(text: &str) -> Option<Engine> {
    let head = match text.char_indices().nth(200_000) {
        Some((i, _)) => &text[..i],
        None => text,
    };
    let trt = head.contains("[TensorRT-LLM]")
        || contains_word(head, "trtllm-serve")
        || head.match_indices("tensorrt_llm/").any(|(i, m)| {
            let before_ok = !head[..i].chars().next_back().is_some_and(is_word);
            let rest = &head[i + m.len()..];
            before_ok
                && ["llmapi/", "serve/", "_torch/", "commands/"]
                    .iter()
                    .any(|s| rest.starts_with(s))
        });
    if trt {
        return Some(Engine::Trtllm);
    }
    if find_unprefixed(head, "server_args={")
        || find_unprefixed(head, "sglang.")
        || find_unprefixed(head, "sglang/")
        || head.contains("sglang::")
    {
        return Some(Engine::Sglang);
    }
    if head.contains("Initializing a V1 LLM engine")
        || find_unprefixed(head, "vllm.")
        || find_unprefixed(head, "vllm/")
        || head.contains("VLLM::")
        || head.contains("(EngineCore pid=")
    {
        return Some(Engine::Vllm);
    }
    None
}

/// `word` occurring with no word character (letters, digits, `_`, and `-` for a
/// hyphenated name) on either side.
fn contains_word(hay: &str, word: &str) -> bool {
    hay.match_indices(word).any(|(i, m)| {
        let before = hay[..i].chars().next_back();
        let after = hay[i + m.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

/// Splits a command line with POSIX shell quoting; `None` on unbalanced quotes.
pub fn shell_split(cmd: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = cmd.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(ch) => cur.push(ch),
                        None => return None,
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(ch @ ('"' | '\\' | '$' | '`')) => cur.push(ch),
                            Some('\n') => {}
                            Some(ch) => {
                                cur.push('\\');
                                cur.push(ch);
                            }
                            None => return None,
                        },
                        Some(ch) => cur.push(ch),
                        None => return None,
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some('\n') => {}
                    Some(ch) => cur.push(ch),
                    None => return None,
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    Some(out)
}

/// The engine a server command starts: the program or module it runs.
pub fn engine_from_command(cmd: &str) -> Option<Engine> {
    let tokens = shell_split(cmd)?;
    engine_from_argv(&tokens)
}

/// The same rule on an argument vector.
pub fn engine_from_argv(tokens: &[String]) -> Option<Engine> {
    let component = |t: &str| {
        let t = t.replace('\\', "/");
        t.rsplit('/').next().unwrap_or("").to_string()
    };
    for (i, tok) in tokens.iter().enumerate() {
        let comp = component(tok);
        let next = tokens.get(i + 1).map(String::as_str);
        if comp == "trtllm-serve" {
            return Some(Engine::Trtllm);
        }
        if next == Some("serve") {
            if comp == "vllm" {
                return Some(Engine::Vllm);
            }
            if comp == "sglang" {
                return Some(Engine::Sglang);
            }
        }
        if tok == "-m" {
            if let Some(m) = next {
                for (name, e) in [
                    ("vllm", Engine::Vllm),
                    ("sglang", Engine::Sglang),
                    ("tensorrt_llm", Engine::Trtllm),
                ] {
                    if m == name || m.strip_prefix(name).is_some_and(|r| r.starts_with('.')) {
                        return Some(e);
                    }
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_names() {
        assert_eq!(Engine::parse_name(" TensorRT-LLM "), Some(Engine::Trtllm));
        assert_eq!(Engine::parse_name("vLLM"), Some(Engine::Vllm));
        assert_eq!(Engine::parse_name("SGLang"), Some(Engine::Sglang));
        assert_eq!(Engine::parse_name("tgi"), None);
    }

    #[test]
    fn metric_name_votes() {
        assert_eq!(Engine::from_metric_names(["http_x", "process_y"]), None);
        assert_eq!(
            Engine::from_metric_names(["vllm:a", "sglang:b"]),
            Some(Engine::Vllm)
        );
        assert_eq!(
            Engine::from_metric_names(["vllm:a", "trtllm_b", "trtllm_c"]),
            Some(Engine::Trtllm)
        );
    }

    #[test]
    fn commands() {
        let e = |c| engine_from_command(c);
        assert_eq!(e("vllm serve m --port 9000"), Some(Engine::Vllm));
        assert_eq!(e("/opt/venv/bin/vllm serve m"), Some(Engine::Vllm));
        assert_eq!(
            e("env X=1 sglang serve --model-path m"),
            Some(Engine::Sglang)
        );
        assert_eq!(
            e("python -m sglang.launch_server --model-path m"),
            Some(Engine::Sglang)
        );
        assert_eq!(
            e("python -m tensorrt_llm.commands.serve m"),
            Some(Engine::Trtllm)
        );
        assert_eq!(
            e("trtllm-serve serve m --config x.yaml"),
            Some(Engine::Trtllm)
        );
        assert_eq!(e("vllm bench serve --model m"), None);
        assert_eq!(e("vllm serve 'unbalanced"), None);
    }

    #[test]
    fn log_markers() {
        assert_eq!(
            engine_from_log("[TensorRT-LLM] TensorRT LLM version: 1.3.0rc29"),
            Some(Engine::Trtllm)
        );
        assert_eq!(
            engine_from_log("x server_args={'model_path': 'm'}"),
            Some(Engine::Sglang)
        );
        assert_eq!(
            engine_from_log("(EngineCore pid=949) INFO Initializing a V1 LLM engine (v0.30.0)"),
            Some(Engine::Vllm)
        );
        // FlashInfer keeps kernels under a bare tensorrt_llm/ folder: not enough.
        assert_eq!(
            engine_from_log("/site-packages/flashinfer/data/tensorrt_llm/kernels"),
            None
        );
        assert_eq!(engine_from_log("a mysglang.x"), None);
    }

    #[test]
    fn versions() {
        assert!(Engine::Vllm.version_tested("0.30.1"));
        assert!(Engine::Trtllm.version_tested("1.3.0rc29"));
        assert!(!Engine::Vllm.version_tested("0.31.0"));
        assert!(Engine::Vllm.version_tested("0.32.0"));
        assert!(!Engine::Sglang.version_tested("0.50.1"));
    }

    #[test]
    fn splitting() {
        assert_eq!(
            shell_split(r#"a 'b c' "d \"e\"" f\ g"#).unwrap(),
            vec!["a", "b c", "d \"e\"", "f g"]
        );
    }
}

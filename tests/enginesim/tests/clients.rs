//! The simulated vLLM against the exact requests the load tools and the router send
//! (captured through a logging proxy: GuideLLM 0.8.1, AIPerf 0.13.0, vllm-router
//! 0.1.17): reply shapes as vLLM 0.32 sends them, and the engine's counters in /metrics
//! agreeing with what the reply says.

mod common;
use common::*;
use serde_json::{json, Value};

/// GuideLLM's chat request: content as a list of typed parts, usage on every chunk.
const GUIDELLM_CHAT: &str = r#"{"model": "m", "stream": true, "stream_options": {"include_usage": true, "continuous_usage_stats": true}, "max_completion_tokens": 20, "ignore_eos": true, "messages": [{"role": "user", "content": [{"type": "text", "text": "1 0 m0 Finish medical want almost away until. Its culture song reveal return finally affect. Push page seem quickly actually memory than. Them business subject media audience executive everybody. Off to message interview. Yes way plan prepare dinner whom out. General sit hold. Prove adult science people. Beautiful different plan common student thousand. Same leave bank history them. Lose situation little quickly ability economy ever price. He trip theory daughter rich. Doctor red prove require national theory. Generation energy environmental body industry reveal. Section when read discussion"}]}]}"#;

/// AIPerf's chat request: plain-string content, usage only at the end.
const AIPERF_CHAT: &str = r#"{"messages": [{"role": "user", "content": "army and full of purpose Music of the [UNK] under the stage SECOND SOLDIER Peace what noise FIRST SOLDIER List list SECOND SOLDIER Hark FIRST SOLDIER Music i th air THIRD SOLDIER Under the earth FOURTH SOLDIER It signs well does it not THIRD SOLDIER No FIRST SOLDIER Peace I say What should this mean SECOND SOLDIER Tis the god Hercules whom Antony loved Now leaves him FIRST SOLDIER Walk Lets see if other [UNK] Do hear what we do They advance to another post SECOND SOLDIER How"}], "model": "m", "stream": true, "max_completion_tokens": 20, "stream_options": {"include_usage": true}}"#;

/// The router's rewrite of a chat request (its added defaults and all).
const ROUTER_CHAT: &str = r#"{"model":"m","messages":[{"role":"user","content":"alpha"}],"temperature":0.0,"stream":true,"stream_options":{"include_usage":true},"max_completion_tokens":8,"logprobs":false,"no_stop_trim":false,"ignore_eos":true,"continue_final_message":false,"skip_special_tokens":true,"separate_reasoning":true,"stream_reasoning":true,"return_hidden_states":false,"include_reasoning":true}"#;
const ROUTER_COMPLETION: &str = r#"{"model":"m","prompt":"alpha bravo","max_tokens":8,"temperature":0.0,"stream":true,"stream_options":{"include_usage":true},"echo":false,"no_stop_trim":false,"ignore_eos":true,"skip_special_tokens":true,"return_hidden_states":false,"x_custom":1}"#;
const ROUTER_TOKENIZE_CHAT: &str = r#"{"model":"m","continue_final_message":false,"messages":[{"role":"user","content":"alpha"}]}"#;
const ROUTER_TOKENIZE_PROMPT: &str = r#"{"model":"m","prompt":"alpha bravo"}"#;

/// Both captured chat prompts are 88 words; the ChatML template adds 8 tokens.
const CHAT_PROMPT_TOKENS: u64 = 88 + 8;

fn vllm(name: &str, extra: &[&str]) -> Sim {
    let port = free_port();
    let p = port.to_string();
    let mut args = vec![
        "serve",
        "m",
        "--port",
        &p,
        "--max-model-len",
        "4096",
        "--sim-speed",
        "50",
    ];
    args.extend_from_slice(extra);
    let mut s = Sim::start(name, "vllm", &args, port);
    s.wait_ready("/health");
    s
}

fn parse(events: &[String]) -> Vec<Value> {
    assert_eq!(
        events.last().map(String::as_str),
        Some("[DONE]"),
        "{events:?}"
    );
    events[..events.len() - 1]
        .iter()
        .map(|e| serde_json::from_str(e).unwrap_or_else(|err| panic!("{err}: {e}")))
        .collect()
}

fn counter_delta(before: &analyzer::prom::Exposition, port: u16, name: &str) -> f64 {
    total(&metrics(port, "/metrics"), name) - total(before, name)
}

#[test]
fn guidellm_chat_parts_stream_with_usage_on_every_chunk() {
    let s = vllm("cl-guidellm", &[]);
    let before = metrics(s.port, "/metrics");
    let r = call(s.port, "POST", "/v1/chat/completions", &[], GUIDELLM_CHAT);
    assert_eq!(r.status, 200);
    assert!(r
        .header("content-type")
        .unwrap()
        .starts_with("text/event-stream"));
    let chunks = parse(&r.events());
    // Role chunk, 20 token chunks, usage chunk.
    assert_eq!(chunks.len(), 22, "{chunks:?}");
    let first = &chunks[0];
    assert_eq!(first["object"], "chat.completion.chunk");
    assert_eq!(
        first["choices"][0]["delta"],
        json!({"role": "assistant", "content": ""})
    );
    assert_eq!(first["usage"]["prompt_tokens"], CHAT_PROMPT_TOKENS);
    assert_eq!(first["usage"]["completion_tokens"], 0);
    for (i, c) in chunks[1..21].iter().enumerate() {
        assert_eq!(c["id"], first["id"]);
        assert!(c["choices"][0]["delta"]["content"].as_str().unwrap().len() > 1);
        assert_eq!(c["usage"]["completion_tokens"], i as u64 + 1, "{c}");
        assert_eq!(
            c["usage"]["total_tokens"],
            CHAT_PROMPT_TOKENS + i as u64 + 1
        );
        let finish = &c["choices"][0]["finish_reason"];
        if i < 19 {
            assert!(finish.is_null(), "{c}");
        } else {
            assert_eq!(finish, "length");
        }
    }
    let last = &chunks[21];
    assert_eq!(last["choices"], json!([]));
    assert_eq!(
        last["usage"],
        json!({"prompt_tokens": CHAT_PROMPT_TOKENS, "total_tokens": CHAT_PROMPT_TOKENS + 20, "completion_tokens": 20})
    );
    // The engine counted what the reply says.
    assert_eq!(
        counter_delta(&before, s.port, "vllm:prompt_tokens_total"),
        CHAT_PROMPT_TOKENS as f64
    );
    assert_eq!(
        counter_delta(&before, s.port, "vllm:generation_tokens_total"),
        20.0
    );
    assert_eq!(
        counter_delta(&before, s.port, "vllm:request_success_total"),
        1.0
    );
    assert_eq!(
        counter_delta(&before, s.port, "vllm:request_prompt_tokens_sum"),
        CHAT_PROMPT_TOKENS as f64
    );
}

#[test]
fn aiperf_chat_keeps_its_request_id_and_gets_usage_once() {
    let s = vllm("cl-aiperf", &[]);
    let before = metrics(s.port, "/metrics");
    let rid = "88f334c6-a1a6-46d3-b83b-44d1dc42ab19";
    let r = call(
        s.port,
        "POST",
        "/v1/chat/completions",
        &[("X-Request-ID", rid), ("Accept", "text/event-stream")],
        AIPERF_CHAT,
    );
    assert_eq!(r.status, 200);
    let chunks = parse(&r.events());
    assert_eq!(chunks.len(), 22);
    for c in &chunks {
        assert_eq!(c["id"], format!("chatcmpl-{rid}"));
    }
    // Without continuous_usage_stats only the last chunk has usage.
    assert!(chunks[..21].iter().all(|c| c.get("usage").is_none()));
    assert_eq!(chunks[20]["choices"][0]["finish_reason"], "length");
    let u = &chunks[21]["usage"];
    assert_eq!(u["prompt_tokens"], CHAT_PROMPT_TOKENS);
    assert_eq!(u["completion_tokens"], 20);
    // Under the 10% gap at which AIPerf warns (its own count is the 88 words).
    assert!((CHAT_PROMPT_TOKENS as f64 - 88.0) / 88.0 < 0.10);
    assert_eq!(
        counter_delta(&before, s.port, "vllm:prompt_tokens_total"),
        CHAT_PROMPT_TOKENS as f64
    );
    assert_eq!(
        counter_delta(&before, s.port, "vllm:generation_tokens_total"),
        20.0
    );
}

#[test]
fn head_answers_like_get_where_the_real_server_does() {
    let s = vllm("cl-head", &[]);
    let get = call(s.port, "GET", "/metrics", &[], "");
    let head = call(s.port, "HEAD", "/metrics", &[], "");
    assert_eq!((get.status, head.status), (200, 200));
    assert_eq!(head.header("content-type"), get.header("content-type"));
    let len: usize = head.header("content-length").unwrap().parse().unwrap();
    assert!(len > 1000, "{len}");
    assert_eq!(head.body, "");
    // FastAPI routes are GET-only: HEAD is 405 there, as in vLLM.
    for path in ["/health", "/v1/models", "/version", "/load"] {
        let r = call(s.port, "HEAD", path, &[], "");
        assert_eq!((r.status, r.header("allow")), (405, Some("GET")), "{path}");
    }
    let r = call(s.port, "GET", "/tokenize", &[], "");
    assert_eq!((r.status, r.header("allow")), (405, Some("POST")));
    assert_eq!(call(s.port, "GET", "/nowhere", &[], "").status, 404);
    assert!(s.log_text().contains("\"HEAD /metrics HTTP/1.1\" 200 OK"));
}

#[test]
fn tokenize_and_render_agree_with_what_generation_counts() {
    let s = vllm("cl-tokenize", &[]);
    let chat = call(s.port, "POST", "/tokenize", &[], ROUTER_TOKENIZE_CHAT).json();
    assert_eq!(chat["count"], 1 + 8);
    assert_eq!(chat["max_model_len"], 4096);
    assert_eq!(chat["tokens"].as_array().unwrap().len(), 9);
    assert!(chat["token_strs"].is_null());
    let prompt = call(s.port, "POST", "/tokenize", &[], ROUTER_TOKENIZE_PROMPT).json();
    assert_eq!(prompt["count"], 2);
    let back = call(
        s.port,
        "POST",
        "/detokenize",
        &[],
        &json!({"model": "m", "tokens": prompt["tokens"]}).to_string(),
    )
    .json();
    assert_eq!(back, json!({"prompt": "alpha bravo"}));
    let strs = call(
        s.port,
        "POST",
        "/tokenize",
        &[],
        r#"{"prompt": "alpha bravo", "return_token_strs": true}"#,
    )
    .json();
    assert_eq!(strs["token_strs"], json!(["alpha", "bravo"]));
    assert_eq!(strs["tokens"], prompt["tokens"]);
    assert_eq!(
        call(s.port, "POST", "/tokenize", &[], r#"{"model":"m"}"#).status,
        400
    );

    // Render: the same ids, in vLLM's GenerateRequest shape.
    let r = call(
        s.port,
        "POST",
        "/v1/completions/render",
        &[("X-Request-Id", "abc")],
        ROUTER_COMPLETION,
    );
    assert_eq!(r.status, 200);
    let reqs = r.json();
    assert_eq!(reqs.as_array().unwrap().len(), 1);
    assert_eq!(reqs[0]["request_id"], "cmpl-abc");
    assert_eq!(reqs[0]["token_ids"], prompt["tokens"]);
    assert_eq!(reqs[0]["sampling_params"]["max_tokens"], 8);
    assert_eq!(reqs[0]["sampling_params"]["ignore_eos"], true);
    assert_eq!(reqs[0]["stream"], true);
    let one = call(
        s.port,
        "POST",
        "/v1/chat/completions/render",
        &[],
        ROUTER_CHAT,
    )
    .json();
    assert_eq!(one["token_ids"], chat["tokens"]);
    assert!(one["request_id"].as_str().unwrap().starts_with("chatcmpl-"));

    // Generation counts the same prompt the same way.
    let before = metrics(s.port, "/metrics");
    let c = parse(&call(s.port, "POST", "/v1/chat/completions", &[], ROUTER_CHAT).events());
    assert_eq!(c.last().unwrap()["usage"]["prompt_tokens"], chat["count"]);
    let p = parse(&call(s.port, "POST", "/v1/completions", &[], ROUTER_COMPLETION).events());
    assert_eq!(p.last().unwrap()["usage"]["prompt_tokens"], prompt["count"]);
    assert_eq!(
        counter_delta(&before, s.port, "vllm:prompt_tokens_total"),
        11.0
    );
    // Tokenizer calls are counted by the HTTP instrumentator, not by the engine.
    let m = metrics(s.port, "/metrics");
    assert!(
        m.total(
            "http_requests_total",
            &[("handler", "/tokenize"), ("status", "2xx")]
        )
        .unwrap()
            >= 3.0
    );
    assert_eq!(
        counter_delta(&before, s.port, "vllm:request_success_total"),
        2.0
    );
}

#[test]
fn completion_stream_chunks_whole_replies_and_usage_flags() {
    let s = vllm("cl-shapes", &["--enable-prompt-tokens-details"]);
    let chunks = parse(&call(s.port, "POST", "/v1/completions", &[], ROUTER_COMPLETION).events());
    assert_eq!(chunks.len(), 9);
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        keys(&chunks[0]["choices"][0]),
        [
            "index",
            "text",
            "logprobs",
            "finish_reason",
            "stop_reason",
            "prompt_token_ids",
            "token_ids"
        ]
    );
    assert_eq!(chunks[7]["choices"][0]["finish_reason"], "length");
    // With --enable-prompt-tokens-details the usage names the (zero) cached tokens.
    assert_eq!(
        chunks[8]["usage"]["prompt_tokens_details"],
        json!({"cached_tokens": 0})
    );
    let whole = call(
        s.port,
        "POST",
        "/v1/chat/completions",
        &[],
        r#"{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a b"},{"type":"text","text":"c"}]}],"max_tokens":3}"#,
    )
    .json();
    assert_eq!(whole["object"], "chat.completion");
    assert_eq!(whole["choices"][0]["message"]["role"], "assistant");
    assert_eq!(whole["choices"][0]["finish_reason"], "length");
    assert_eq!(whole["usage"]["prompt_tokens"], 3 + 8);
    assert_eq!(whole["usage"]["completion_tokens"], 3);
    assert_eq!(whole["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
    assert!(whole["usage"]["completion_tokens_details"].is_null());
    drop(s);

    // --enable-force-include-usage: usage on every chunk though the client asked none.
    let s = vllm("cl-force", &["--enable-force-include-usage"]);
    let plain = r#"{"model":"m","prompt":"a b","max_tokens":2,"stream":true}"#;
    let chunks = parse(&call(s.port, "POST", "/v1/completions", &[], plain).events());
    assert_eq!(chunks.len(), 3);
    assert_eq!(chunks[0]["usage"]["completion_tokens"], 1);
    assert_eq!(chunks[2]["usage"]["total_tokens"], 4);
    assert!(chunks[2]["usage"].get("prompt_tokens_details").is_none());
}

#[test]
fn load_counts_requests_in_flight_only_when_tracked() {
    use std::io::Write;
    let untracked = vllm("cl-load0", &[]);
    assert_eq!(
        call(untracked.port, "GET", "/load", &[], "").json(),
        json!({"server_load": 0})
    );
    drop(untracked);
    let s = vllm(
        "cl-load",
        &["--enable-server-load-tracking", "--sim-speed", "2"],
    );
    let load = || call(s.port, "GET", "/load", &[], "").json()["server_load"].clone();
    assert_eq!(load(), 0);
    // A long stream left unread stays in flight; closing it aborts it.
    let mut c = std::net::TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    let body =
        r#"{"model":"m","prompt":"a b c","max_tokens":2000,"ignore_eos":true,"stream":true}"#;
    write!(
        c,
        "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    assert!(wait_until(10, || load() == 1), "never in flight");
    drop(c);
    assert!(wait_until(10, || load() == 0), "still in flight");
    // /load is left out of http_requests_total, as vLLM's instrumentator does.
    let m = metrics(s.port, "/metrics");
    assert!(m
        .total("http_requests_total", &[("handler", "/load")])
        .is_none());
}

#[test]
fn num_gpu_blocks_override_sizes_the_pool_as_vllm_does() {
    let s = vllm(
        "cl-override",
        &["--num-gpu-blocks-override", "64", "--max-model-len", "1024"],
    );
    let log = s.log_text();
    assert!(log.contains("with num_gpu_blocks_override=64"), "{log}");
    assert!(log.contains("GPU KV cache size: 1,024 tokens"), "{log}");
    assert!(log.contains("'num_gpu_blocks_override': 64"), "{log}");
    let m = metrics(s.port, "/metrics");
    let info = m.info("vllm:cache_config_info", &[]).unwrap();
    let label = |k: &str| info.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    assert_eq!(label("num_gpu_blocks").as_deref(), Some("64"));
    assert_eq!(label("num_gpu_blocks_override").as_deref(), Some("64"));
    assert_eq!(label("kv_cache_size_tokens").as_deref(), Some("1024"));
    // The pool really is that small: 63 usable blocks of 16 tokens. 900 + 20 tokens
    // fit; 1000 + 20 outgrow it while decoding and fail.
    let ask = |words: usize| {
        call(
            s.port,
            "POST",
            "/v1/completions",
            &[],
            &json!({"model": "m", "prompt": "w ".repeat(words), "max_tokens": 20}).to_string(),
        )
    };
    assert_eq!(ask(900).status, 200);
    let r = ask(1000);
    assert_eq!(r.status, 500, "{}", r.body);
    assert!(
        r.body.contains("more KV cache than the pool holds"),
        "{}",
        r.body
    );
}

#[test]
fn sglang_serves_its_load_and_model_info_and_head_metrics() {
    let port = free_port();
    let p = port.to_string();
    let mut s = Sim::start(
        "cl-sgl",
        "sglang",
        &[
            "serve",
            "--model-path",
            "/root/models/Qwen3-8B",
            "--port",
            &p,
            "--enable-metrics",
            "--sim-speed",
            "50",
        ],
        port,
    );
    s.wait_ready("/health");
    let load = call(port, "GET", "/get_load", &[], "").json();
    assert_eq!(
        load,
        json!([{"dp_rank": 0, "num_reqs": 0, "num_waiting_reqs": 0, "num_tokens": 0}])
    );
    let info = call(port, "GET", "/get_model_info", &[], "").json();
    assert_eq!(info["model_path"], "/root/models/Qwen3-8B");
    assert_eq!(call(port, "HEAD", "/metrics", &[], "").status, 200);
    assert_eq!(call(port, "HEAD", "/get_load", &[], "").status, 405);
    // The chat stream opens with the role there too.
    let c = parse(&call(port, "POST", "/v1/chat/completions", &[], AIPERF_CHAT).events());
    assert_eq!(c[0]["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(
        c.last().unwrap()["usage"]["prompt_tokens"],
        CHAT_PROMPT_TOKENS
    );
}

//! The HTTP face shared by the three engines: OpenAI completions (streamed and not),
//! models, health, version, metrics, and each engine's extra routes. What differs per
//! engine (metric text, access-log format, health during warm-up, admission control,
//! injected crashes) comes in through `Server`.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use crate::body::SimBody;
use crate::log::{self, Style};
use crate::sched::{Event, Shared, Submit};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Vllm,
    Sglang,
    Trt,
}

/// One HTTP outcome counted for the engines' `http_*` metrics.
#[derive(Debug, Clone)]
pub struct HttpCount {
    pub count: u64,
    pub created: f64,
}

pub type MetricsFn = Box<dyn Fn(&Server) -> String + Send + Sync>;
pub type CrashFn = Box<dyn Fn(u64) + Send + Sync>;
pub type RejectFn = Box<dyn Fn(&str, usize, usize) + Send + Sync>;

pub struct Server {
    pub kind: Kind,
    pub style: Style,
    pub engine: Arc<Shared>,
    pub served_name: String,
    pub model_path: String,
    pub max_model_len: usize,
    pub version: String,
    pub start_unix: f64,
    pub metrics: MetricsFn,
    /// Extra JSON for SGLang's `/get_server_info`.
    pub server_info: Value,
    /// Prometheus text served at all (SGLang needs --enable-metrics).
    pub metrics_enabled: bool,
    /// SGLang answers /health 503 until its own warm-up request is through.
    pub healthy: AtomicBool,
    pub max_queued: Option<usize>,
    pub on_reject: Option<RejectFn>,
    /// Fault: the engine dies when this request number (1-based, after ready) arrives.
    pub crash_at: Option<u64>,
    pub on_crash: Option<CrashFn>,
    /// Fault: metrics stop answering after this many scrapes.
    pub metrics_stall_after: Option<u64>,
    pub scrapes: AtomicU64,
    pub requests_seen: AtomicU64,
    pub http: Mutex<BTreeMap<(String, String, u16), HttpCount>>,
    pub trt_iter_json: bool,
    pub pid: u32,
}

fn json_resp(status: u16, v: &Value) -> Response<SimBody> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(SimBody::full(v.to_string()))
        .expect("response")
}

fn text_resp(status: u16, ctype: &str, t: String) -> Response<SimBody> {
    Response::builder()
        .status(status)
        .header("content-type", ctype)
        .body(SimBody::full(t))
        .expect("response")
}

pub async fn serve(listener: TcpListener, srv: Arc<Server>) {
    loop {
        let Ok((stream, peer)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let srv = srv.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |req| {
                let srv = srv.clone();
                async move { Ok::<_, Infallible>(handle(srv, peer, req).await) }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, svc)
                .await;
        });
    }
}

impl Server {
    fn count(&self, path: &str, method: &str, status: u16) {
        let mut m = self.http.lock().unwrap();
        m.entry((path.to_string(), method.to_string(), status))
            .and_modify(|c| c.count += 1)
            .or_insert(HttpCount {
                count: 1,
                created: log::unix_now(),
            });
    }

    pub fn done(&self, peer: &SocketAddr, method: &str, path: &str, status: u16) {
        self.count(path, method, status);
        log::access(self.style, &peer.to_string(), method, path, status);
    }
}

async fn handle(srv: Arc<Server>, peer: SocketAddr, req: Request<Incoming>) -> Response<SimBody> {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let m = method.as_str().to_string();
    let resp = match (srv.kind, &method, path.as_str()) {
        (_, &Method::GET, "/health") => {
            if srv.healthy.load(Ordering::SeqCst) {
                text_resp(200, "application/json", String::new())
            } else {
                text_resp(503, "application/json", String::new())
            }
        }
        (Kind::Sglang, &Method::GET, "/health_generate") => {
            let s = if srv.healthy.load(Ordering::SeqCst) {
                200
            } else {
                503
            };
            text_resp(s, "application/json", String::new())
        }
        (_, &Method::GET, "/v1/models") => json_resp(
            200,
            &json!({"object": "list", "data": [{
                "id": srv.served_name, "object": "model", "created": srv.start_unix as u64,
                "owned_by": match srv.kind { Kind::Vllm => "vllm", Kind::Sglang => "sglang", Kind::Trt => "tensorrt_llm" },
                "root": srv.model_path, "parent": null, "max_model_len": srv.max_model_len}]}),
        ),
        (Kind::Vllm | Kind::Trt, &Method::GET, "/version") => {
            json_resp(200, &json!({"version": srv.version}))
        }
        (Kind::Sglang, &Method::GET, "/get_server_info") => {
            let mut v = srv.server_info.clone();
            if let Value::Object(o) = &mut v {
                o.insert("version".into(), json!(srv.version));
            }
            json_resp(200, &v)
        }
        (Kind::Sglang, &Method::GET, "/model_info") => json_resp(
            200,
            &json!({"model_path": srv.model_path, "tokenizer_path": srv.model_path, "is_generation": true}),
        ),
        (Kind::Vllm | Kind::Sglang, &Method::GET, "/metrics") => {
            if !srv.metrics_enabled {
                json_resp(404, &json!({"detail": "Not Found"}))
            } else {
                metrics(&srv).await
            }
        }
        (Kind::Trt, &Method::GET, "/prometheus/metrics") => metrics(&srv).await,
        (Kind::Trt, &Method::GET, "/metrics") => {
            let v = if srv.trt_iter_json {
                trt_iter_stats(&srv)
            } else {
                json!([])
            };
            json_resp(200, &v)
        }
        (_, &Method::POST, "/v1/completions") => {
            let body = read_json(req).await;
            return completion(srv, peer, &path, body, Api::Completion).await;
        }
        (_, &Method::POST, "/v1/chat/completions") => {
            let body = read_json(req).await;
            return completion(srv, peer, &path, body, Api::Chat).await;
        }
        (Kind::Sglang, &Method::POST, "/generate") => {
            let body = read_json(req).await;
            return completion(srv, peer, &path, body, Api::Generate).await;
        }
        _ => json_resp(404, &json!({"detail": "Not Found"})),
    };
    srv.done(&peer, &m, &path, resp.status().as_u16());
    resp
}

async fn metrics(srv: &Arc<Server>) -> Response<SimBody> {
    let n = srv.scrapes.fetch_add(1, Ordering::SeqCst) + 1;
    if let Some(k) = srv.metrics_stall_after {
        if n > k {
            // Fault: the endpoint hangs, as a wedged exporter does.
            std::future::pending::<()>().await;
        }
    }
    text_resp(
        200,
        "text/plain; version=0.0.4; charset=utf-8",
        (srv.metrics)(srv),
    )
}

fn trt_iter_stats(srv: &Server) -> Value {
    let st = srv.engine.stats.lock().unwrap();
    let (run, wait, used, paused) = st.at_last_completion;
    json!([{
        "iter": st.steps,
        "iterLatencyMS": srv.engine.cfg.step_base_s * 1000.0,
        "gpuMemUsage": 0,
        "numActiveRequests": run,
        "numQueuedRequests": wait,
        "numCompletedRequests": st.finished_by_reason.values().sum::<u64>(),
        "maxNumActiveRequests": srv.engine.cfg.max_running,
        "kvCacheStats": {
            "maxNumBlocks": st.total_blocks,
            "freeNumBlocks": st.total_blocks - used,
            "usedNumBlocks": used,
            "tokensPerBlock": srv.engine.cfg.block_size,
        },
        "inflightBatchingStats": {"numPausedRequests": paused, "numScheduledRequests": run},
    }])
}

async fn read_json(req: Request<Incoming>) -> Option<Value> {
    let b = req.into_body().collect().await.ok()?.to_bytes();
    serde_json::from_slice(&b).ok()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Api {
    Completion,
    Chat,
    Generate,
}

/// Tokens in a prompt: one per whitespace-separated word, or the length of a token-id list.
/// The bench personality builds prompts of exactly N words, so both sides agree.
pub fn count_tokens(v: &Value) -> usize {
    match v {
        Value::String(s) => s.split_whitespace().count().max(1),
        Value::Array(a) if a.iter().all(Value::is_number) => a.len().max(1),
        Value::Array(a) => a.first().map(count_tokens).unwrap_or(1),
        _ => 1,
    }
}

const WORDS: &[&str] = &[
    " the", " of", " and", " to", " a", " in", " is", " it", " that", " on",
];

fn rand_id() -> String {
    let n = crate::model::start_noise();
    format!("{:016x}", (n * 1e15) as u64 ^ log::unix_now().to_bits())
}

async fn completion(
    srv: Arc<Server>,
    peer: SocketAddr,
    path: &str,
    body: Option<Value>,
    api: Api,
) -> Response<SimBody> {
    let Some(body) = body else {
        let r = json_resp(
            400,
            &json!({"error": {"message": "invalid JSON body", "type": "BadRequestError", "code": 400}}),
        );
        srv.done(&peer, "POST", path, 400);
        return r;
    };
    let prompt = match api {
        Api::Completion => body.get("prompt").map(count_tokens).unwrap_or(1),
        Api::Chat => {
            let words: usize = body
                .get("messages")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|m| m.get("content"))
                        .map(|c| match c {
                            Value::String(s) => s.split_whitespace().count(),
                            other => count_tokens(other),
                        })
                        .sum()
                })
                .unwrap_or(0);
            // The chat template's own tokens.
            words + 9
        }
        Api::Generate => body
            .get("text")
            .or_else(|| body.get("input_ids"))
            .map(count_tokens)
            .unwrap_or(1),
    };
    let max_tokens = match api {
        Api::Generate => body
            .pointer("/sampling_params/max_new_tokens")
            .and_then(Value::as_u64),
        _ => body
            .get("max_tokens")
            .or_else(|| body.get("max_completion_tokens"))
            .and_then(Value::as_u64),
    }
    .unwrap_or(16)
    .max(1) as usize;
    let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let include_usage = body
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        .unwrap_or(false);

    if prompt + max_tokens > srv.max_model_len {
        let msg = format!(
            "This model's maximum context length is {} tokens. However, you requested {} tokens ({} in the messages, {} in the completion). Please reduce the length of the messages or completion.",
            srv.max_model_len, prompt + max_tokens, prompt, max_tokens
        );
        srv.done(&peer, "POST", path, 400);
        return json_resp(
            400,
            &json!({"error": {"message": msg, "type": "BadRequestError", "param": null, "code": 400}}),
        );
    }

    let req_id = match api {
        Api::Chat => format!("chatcmpl-{}", rand_id()),
        _ => format!("cmpl-{}", rand_id()),
    };
    // Admission control (vLLM --max-num-queued-reqs): turn the request away at once.
    if let Some(max) = srv.max_queued {
        let cur = srv.engine.in_queue.load(Ordering::SeqCst);
        if cur >= max {
            if let Some(f) = &srv.on_reject {
                f(&req_id, cur, max);
            }
            srv.done(&peer, "POST", path, 503);
            return json_resp(
                503,
                &json!({"error": {
                "message": "The engine is currently busy and cannot accept new requests. Please try again later or on a different instance.",
                "type": "ServiceUnavailableError", "param": null, "code": 503}}),
            );
        }
    }
    let n = srv.requests_seen.fetch_add(1, Ordering::SeqCst) + 1;
    if srv.crash_at == Some(n) {
        if let Some(f) = &srv.on_crash {
            srv.done(&peer, "POST", path, 500);
            f(n);
        }
        return json_resp(
            500,
            &json!({"error": {"message": "EngineCore encountered an issue.", "code": 500}}),
        );
    }

    let (tx, mut rx) = mpsc::unbounded_channel();
    let arrived = Instant::now();
    srv.engine.submit(Submit {
        prompt,
        max_tokens,
        streaming: stream,
        tx,
        arrived,
    });
    let created = log::unix_now() as u64;
    let model = srv.served_name.clone();

    if !stream {
        let mut text = String::new();
        let mut produced = 0usize;
        let mut reason = "length";
        loop {
            match rx.recv().await {
                Some(Event::Token) => {
                    text.push_str(WORDS[produced % WORDS.len()]);
                    produced += 1;
                }
                Some(Event::Done { reason: r }) => {
                    reason = r;
                    break;
                }
                Some(Event::Error(e)) => {
                    srv.done(&peer, "POST", path, 500);
                    return json_resp(500, &json!({"error": {"message": e, "code": 500}}));
                }
                None => break,
            }
        }
        let usage = json!({"prompt_tokens": prompt, "total_tokens": prompt + produced, "completion_tokens": produced});
        let v = match api {
            Api::Completion => {
                json!({"id": req_id, "object": "text_completion", "created": created, "model": model,
                "choices": [{"index": 0, "text": text, "logprobs": null, "finish_reason": reason, "stop_reason": null}],
                "usage": usage})
            }
            Api::Chat => {
                json!({"id": req_id, "object": "chat.completion", "created": created, "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "logprobs": null, "finish_reason": reason, "stop_reason": null}],
                "usage": usage})
            }
            Api::Generate => {
                json!({"text": text, "meta_info": {"id": req_id, "finish_reason": {"type": reason, "length": produced},
                "prompt_tokens": prompt, "completion_tokens": produced, "cached_tokens": 0}})
            }
        };
        srv.done(&peer, "POST", path, 200);
        return json_resp(200, &v);
    }

    // Streamed: uvicorn logs the 200 as soon as the response starts.
    srv.done(&peer, "POST", path, 200);
    let (btx, brx) = mpsc::unbounded_channel::<Bytes>();
    tokio::spawn(async move {
        let mut produced = 0usize;
        let mut text_so_far = String::new();
        loop {
            let ev = rx.recv().await;
            let (delta, finish) = match ev {
                Some(Event::Token) => {
                    let w = WORDS[produced % WORDS.len()];
                    produced += 1;
                    (w.to_string(), None)
                }
                Some(Event::Done { reason }) => (String::new(), Some(reason)),
                Some(Event::Error(e)) => {
                    let _ = btx.send(Bytes::from(format!(
                        "data: {}\n\n",
                        json!({"error": {"message": e, "code": 500}})
                    )));
                    break;
                }
                None => break,
            };
            let chunk = match api {
                Api::Completion => {
                    json!({"id": req_id, "object": "text_completion", "created": created, "model": model,
                    "choices": [{"index": 0, "text": delta, "logprobs": null, "finish_reason": finish, "stop_reason": null}]})
                }
                Api::Chat => {
                    json!({"id": req_id, "object": "chat.completion.chunk", "created": created, "model": model,
                    "choices": [{"index": 0, "delta": {"content": delta}, "logprobs": null, "finish_reason": finish}]})
                }
                Api::Generate => {
                    text_so_far.push_str(&delta);
                    json!({"text": text_so_far, "meta_info": {"id": req_id, "prompt_tokens": prompt, "completion_tokens": produced,
                        "finish_reason": finish.map(|r| json!({"type": r, "length": produced}))}})
                }
            };
            if btx.send(Bytes::from(format!("data: {chunk}\n\n"))).is_err() {
                // The client went away: dropping rx aborts the request in the engine.
                return;
            }
            if finish.is_some() {
                if include_usage && api != Api::Generate {
                    let u = json!({"id": req_id, "object": if api == Api::Chat {"chat.completion.chunk"} else {"text_completion"},
                        "created": created, "model": model, "choices": [],
                        "usage": {"prompt_tokens": prompt, "total_tokens": prompt + produced, "completion_tokens": produced}});
                    let _ = btx.send(Bytes::from(format!("data: {u}\n\n")));
                }
                let _ = btx.send(Bytes::from_static(b"data: [DONE]\n\n"));
                break;
            }
        }
    });
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "text/event-stream; charset=utf-8")
        .header("cache-control", "no-cache")
        .body(SimBody::Chan(brx))
        .expect("response")
}

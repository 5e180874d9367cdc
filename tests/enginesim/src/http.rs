//! The HTTP face shared by the three engines: the route table of each engine, health,
//! models, version, metrics, load, and the hand-off to the generation and tokenizer
//! routes. What differs per engine (metric text, access-log format, health during
//! warm-up, admission control, injected crashes) comes in through `Server`.
//!
//! Methods follow the real servers (FastAPI): a known path asked with another method
//! answers 405 with `allow`, an unknown path 404. Prometheus text is served by a mounted
//! ASGI app there, which answers any method, so `HEAD /metrics` is a 200 whose body
//! hyper leaves out (it knows the request was HEAD).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::{Method, Request, Response};
use serde_json::{json, Value};
use tokio::net::TcpListener;

use crate::body::SimBody;
use crate::complete;
use crate::log::{self, Style};
use crate::openai::Api;
use crate::prompt::Vocab;
use crate::sched::Shared;
use crate::tokenize;

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

/// Serving switches of the OpenAI layer (vLLM's flags of the same names).
#[derive(Debug, Clone, Copy, Default)]
pub struct ApiOptions {
    /// `--enable-prompt-tokens-details`: `usage.prompt_tokens_details.cached_tokens`.
    pub prompt_tokens_details: bool,
    /// `--enable-server-load-tracking`: `/load` counts requests in flight.
    pub load_tracking: bool,
    /// `--enable-force-include-usage`: usage on every stream, chunk by chunk.
    pub force_include_usage: bool,
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
    /// A request past the context length gets its `max_tokens` lowered to fit, and only
    /// a prompt longer than the context is refused (vLLM 0.32).
    pub lowers_max_tokens: bool,
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
    /// Fault: metrics stop answering after this many scrapes…
    pub metrics_stall_after: Option<u64>,
    /// …and answer after this many seconds each (never, when none).
    pub metrics_stall_for: Option<f64>,
    /// The engine died and the API server lives on (vLLM's
    /// `VLLM_KEEP_ALIVE_ON_ENGINE_DEATH`): every generation request fails.
    pub engine_dead: AtomicBool,
    pub scrapes: AtomicU64,
    pub requests_seen: AtomicU64,
    /// Requests admission control turned away.
    pub rejections: AtomicU64,
    pub http: Mutex<BTreeMap<(String, String, u16), HttpCount>>,
    pub trt_iter_json: bool,
    pub pid: u32,
    pub api: ApiOptions,
    /// Word ↔ id table of `/tokenize` and `/detokenize`.
    pub vocab: Mutex<Vocab>,
    /// Generation requests between arrival and their last byte (vLLM's `/load`).
    pub in_flight: AtomicUsize,
}

pub fn json_resp(status: u16, v: &Value) -> Response<SimBody> {
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

/// How a path is served: by one method, or by the mounted Prometheus app (any method).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Route {
    Get,
    Post,
    Mounted,
}

fn route(srv: &Server, path: &str) -> Option<Route> {
    use Route::*;
    let r = match (srv.kind, path) {
        (_, "/health" | "/v1/models") => Get,
        (_, "/v1/completions" | "/v1/chat/completions") => Post,
        (Kind::Vllm, "/version" | "/load") => Get,
        (Kind::Vllm, "/metrics") => Mounted,
        (
            Kind::Vllm,
            "/tokenize" | "/detokenize" | "/v1/completions/render" | "/v1/chat/completions/render",
        ) => Post,
        (
            Kind::Sglang,
            "/health_generate" | "/get_server_info" | "/model_info" | "/get_model_info"
            | "/get_load",
        ) => Get,
        (Kind::Sglang, "/metrics") if srv.metrics_enabled => Mounted,
        (Kind::Sglang, "/generate") => Post,
        (Kind::Trt, "/version" | "/metrics") => Get,
        (Kind::Trt, "/prometheus/metrics") => Mounted,
        _ => return None,
    };
    Some(r)
}

fn not_found() -> Response<SimBody> {
    json_resp(404, &json!({"detail": "Not Found"}))
}

async fn handle(srv: Arc<Server>, peer: SocketAddr, req: Request<Incoming>) -> Response<SimBody> {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let m = method.as_str().to_string();
    let resp = match route(&srv, &path) {
        None => not_found(),
        Some(Route::Mounted) => metrics(&srv).await,
        Some(Route::Get) if method == Method::GET => get(&srv, &path),
        Some(Route::Post) if method == Method::POST => {
            let request_id = req
                .headers()
                .get("x-request-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            let body = read_json(req).await;
            let api = match path.as_str() {
                "/v1/completions" => Some(Api::Completion),
                "/v1/chat/completions" => Some(Api::Chat),
                "/generate" => Some(Api::Generate),
                _ => None,
            };
            if let Some(api) = api {
                // The generation flow logs its own outcome (a stream logs at its start).
                return complete::serve(srv, peer, &path, request_id, body, api).await;
            }
            let (status, v) = tokenize::serve(&srv, &path, request_id.as_deref(), body);
            json_resp(status, &v)
        }
        Some(r) => {
            let allow = if r == Route::Get { "GET" } else { "POST" };
            let mut resp = json_resp(405, &json!({"detail": "Method Not Allowed"}));
            resp.headers_mut()
                .insert("allow", hyper::header::HeaderValue::from_static(allow));
            resp
        }
    };
    srv.done(&peer, &m, &path, resp.status().as_u16());
    resp
}

/// The engines' GET routes, all answered from state at hand.
fn get(srv: &Server, path: &str) -> Response<SimBody> {
    let healthy = srv.healthy.load(Ordering::SeqCst);
    match path {
        "/health" | "/health_generate" => text_resp(
            if healthy { 200 } else { 503 },
            "application/json",
            String::new(),
        ),
        "/v1/models" => json_resp(
            200,
            &json!({"object": "list", "data": [{
                "id": srv.served_name, "object": "model", "created": srv.start_unix as u64,
                "owned_by": match srv.kind { Kind::Vllm => "vllm", Kind::Sglang => "sglang", Kind::Trt => "tensorrt_llm" },
                "root": srv.model_path, "parent": null, "max_model_len": srv.max_model_len}]}),
        ),
        "/version" => json_resp(200, &json!({"version": srv.version})),
        // vLLM counts in-flight requests only when asked to track them.
        "/load" => {
            let n = if srv.api.load_tracking {
                srv.in_flight.load(Ordering::SeqCst)
            } else {
                0
            };
            json_resp(200, &json!({ "server_load": n }))
        }
        "/get_server_info" => {
            let mut v = srv.server_info.clone();
            if let Value::Object(o) = &mut v {
                o.insert("version".into(), json!(srv.version));
            }
            json_resp(200, &v)
        }
        "/model_info" | "/get_model_info" => json_resp(
            200,
            &json!({"model_path": srv.model_path, "tokenizer_path": srv.model_path, "is_generation": true}),
        ),
        "/get_load" => json_resp(200, &sglang_load(srv)),
        "/metrics" => {
            // TensorRT-LLM's /metrics is its iteration-stats JSON.
            let v = if srv.trt_iter_json {
                trt_iter_stats(srv)
            } else {
                json!([])
            };
            json_resp(200, &v)
        }
        _ => not_found(),
    }
}

/// SGLang's `/get_load`: one entry per data-parallel rank (`GetLoadReqOutput`).
fn sglang_load(srv: &Server) -> Value {
    let st = srv.engine.stats.lock().unwrap();
    json!([{
        "dp_rank": 0,
        "num_reqs": st.running + st.waiting,
        "num_waiting_reqs": st.waiting,
        "num_tokens": st.used_blocks * srv.engine.cfg.block_size,
    }])
}

async fn metrics(srv: &Arc<Server>) -> Response<SimBody> {
    let n = srv.scrapes.fetch_add(1, Ordering::SeqCst) + 1;
    if let Some(k) = srv.metrics_stall_after {
        if n > k {
            // Fault: the endpoint hangs, as a wedged exporter does, for good or for a while.
            match srv.metrics_stall_for {
                Some(s) => tokio::time::sleep(std::time::Duration::from_secs_f64(s)).await,
                None => std::future::pending::<()>().await,
            }
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

//! One generation request from arrival to its last byte: prompt cost, length check,
//! admission control, the injected crash, the engine, then a whole reply or a stream of
//! server-sent events in the shapes of `openai.rs` (or SGLang's `/generate`).

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use hyper::{Response, StatusCode};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::body::SimBody;
use crate::http::{json_resp, Kind, Server};
use crate::log;
use crate::openai::{self, Api, Head, Usage};
use crate::prompt::{self, ChatLayout};
use crate::sched::{Event, Submit};

const WORDS: &[&str] = &[
    " the", " of", " and", " to", " a", " in", " is", " it", " that", " on",
];

/// A request id's random part: 32 hex digits, as vLLM's `random_uuid()`.
pub fn rand_id() -> String {
    let n = crate::model::start_noise();
    let a = (n * 1e15) as u64 ^ log::unix_now().to_bits();
    let b = a.rotate_left(29) ^ u64::from(std::process::id()).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    format!("{a:016x}{b:016x}")
}

/// Counts a request in flight until dropped (when its reply's last byte is queued).
struct InFlight(Arc<Server>);

impl InFlight {
    fn new(srv: &Arc<Server>) -> InFlight {
        srv.in_flight.fetch_add(1, Ordering::SeqCst);
        InFlight(srv.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What the request asks for, read once.
struct Ask {
    prompt: usize,
    prefix_blocks: Vec<u64>,
    max_tokens: usize,
    /// Where the answer ends on its own: the model's end-of-sequence token, unless the
    /// request asks to ignore it (`ignore_eos`).
    eos_at: Option<usize>,
    stream: bool,
    include_usage: bool,
    continuous_usage: bool,
}

fn read_ask(body: &Value, api: Api, srv: &Server) -> Ask {
    let pieces = match api {
        Api::Completion => body
            .get("prompt")
            .map(prompt::completion_pieces)
            .unwrap_or_default(),
        Api::Chat => prompt::chat_pieces(
            body.get("messages").unwrap_or(&Value::Null),
            ChatLayout::from_request(body),
        ),
        Api::Generate => body
            .get("text")
            .or_else(|| body.get("input_ids"))
            .map(prompt::completion_pieces)
            .unwrap_or_default(),
    };
    let prompt = prompt::cost(&pieces);
    let prefix_blocks = if srv.engine.cfg.prefix_caching {
        prompt::block_hashes(&pieces, srv.engine.cfg.block_size)
    } else {
        Vec::new()
    };
    // Chat prefers the newer `max_completion_tokens`, as vLLM does.
    let keys: &[&str] = match api {
        Api::Generate => &["/sampling_params/max_new_tokens"],
        Api::Chat => &["/max_completion_tokens", "/max_tokens"],
        Api::Completion => &["/max_tokens", "/max_completion_tokens"],
    };
    let max_tokens = keys
        .iter()
        .find_map(|k| body.pointer(k).and_then(Value::as_u64))
        .unwrap_or(16)
        .max(1) as usize;
    // SGLang's native API names its sampling switches under `sampling_params`.
    let sampling = |k: &str| match api {
        Api::Generate => body.pointer(&format!("/sampling_params/{k}")),
        _ => body.get(k),
    };
    let ignore_eos = sampling("ignore_eos")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let min_tokens = sampling(if api == Api::Generate {
        "min_new_tokens"
    } else {
        "min_tokens"
    })
    .and_then(Value::as_u64)
    .unwrap_or(0) as usize;
    let opt = |k: &str| {
        body.pointer(&format!("/stream_options/{k}"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    };
    let force = srv.api.force_include_usage;
    let include_usage = force || opt("include_usage");
    Ask {
        prompt,
        prefix_blocks,
        max_tokens,
        eos_at: (!ignore_eos).then(|| natural_length(&pieces).max(min_tokens)),
        stream: body.get("stream").and_then(Value::as_bool).unwrap_or(false),
        include_usage,
        continuous_usage: force || (include_usage && opt("continuous_usage_stats")),
    }
}

/// The shortest answer the simulated model writes on its own, and how far past it
/// answers spread: a fixed function of the prompt, so a run is repeatable.
const NATURAL_MIN: usize = 32;
const NATURAL_SPREAD: u64 = 96;

/// Where the simulated model ends its answer on its own (its end-of-sequence token):
/// between 32 and 127 tokens, by a hash of the prompt (FNV-1a).
fn natural_length(pieces: &[prompt::Piece]) -> usize {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
    };
    for p in pieces {
        match p {
            prompt::Piece::Word(w) => eat(w.as_bytes()),
            prompt::Piece::Special(id) | prompt::Piece::Id(id) => eat(&id.to_le_bytes()),
        }
        eat(b" ");
    }
    NATURAL_MIN + (h % NATURAL_SPREAD) as usize
}

/// A prompt with prompt and answer past the context length. vLLM 0.32 refuses only a
/// prompt that fills the context by itself, and lowers `max_tokens` to fit the rest
/// (`get_max_tokens`); earlier releases refuse the request whole. The refusal, if any.
fn fit_context(ask: &mut Ask, srv: &Server) -> Option<Value> {
    let limit = srv.max_model_len;
    if ask.prompt + ask.max_tokens <= limit {
        return None;
    }
    if !srv.lowers_max_tokens {
        let msg = format!(
            "This model's maximum context length is {} tokens. However, you requested {} tokens ({} in the messages, {} in the completion). Please reduce the length of the messages or completion.",
            limit, ask.prompt + ask.max_tokens, ask.prompt, ask.max_tokens
        );
        return Some(openai::error(&msg, "BadRequestError", 400));
    }
    // A prompt of the whole context leaves no token to generate: refused too.
    if ask.prompt >= limit {
        let msg = format!(
            "This model's maximum context length is {limit} tokens. However, your prompt contains {} input tokens, which exceeds this limit even without any output tokens. Please reduce the length of the input prompt.",
            ask.prompt
        );
        return Some(openai::error_param(
            &msg,
            "BadRequestError",
            400,
            "input_tokens",
        ));
    }
    ask.max_tokens = limit - ask.prompt;
    None
}

pub async fn serve(
    srv: Arc<Server>,
    peer: SocketAddr,
    path: &str,
    request_id: Option<String>,
    body: Option<Value>,
    api: Api,
) -> Response<SimBody> {
    let reply = |status: u16, v: Value| {
        srv.done(&peer, "POST", path, status);
        json_resp(status, &v)
    };
    let Some(body) = body else {
        return reply(
            400,
            openai::error("invalid JSON body", "BadRequestError", 400),
        );
    };
    let mut ask = read_ask(&body, api, &srv);
    if let Some(refused) = fit_context(&mut ask, &srv) {
        return reply(400, refused);
    }
    // vLLM takes the id from the X-Request-Id header when there is one.
    let rid = request_id.unwrap_or_else(rand_id);
    let req_id = match api {
        Api::Chat => format!("chatcmpl-{rid}"),
        _ => format!("cmpl-{rid}"),
    };
    // Admission control (vLLM --max-num-queued-reqs): turn the request away at once.
    if let Some(max) = srv.max_queued {
        let cur = srv.engine.in_queue.load(Ordering::SeqCst);
        if cur >= max {
            srv.rejections.fetch_add(1, Ordering::SeqCst);
            if let Some(f) = &srv.on_reject {
                f(&req_id, cur, max);
            }
            return reply(503, openai::error(
                "The engine is currently busy and cannot accept new requests. Please try again later or on a different instance.",
                "ServiceUnavailableError", 503));
        }
    }
    let n = srv.requests_seen.fetch_add(1, Ordering::SeqCst) + 1;
    // An API server kept alive after its engine died fails every request it gets.
    if srv.engine_dead.load(Ordering::SeqCst) {
        return reply(
            500,
            json!({"error": {"message": "EngineCore encountered an issue. See stack trace (above) for the root cause.", "code": 500}}),
        );
    }
    if srv.crash_at == Some(n) {
        if let Some(f) = &srv.on_crash {
            // A dead engine fails vLLM's health check at once (the API server lives on for
            // a moment); the request's access line comes after the crash's lines.
            if srv.kind == Kind::Vllm {
                srv.healthy.store(false, Ordering::SeqCst);
            }
            srv.engine_dead.store(true, Ordering::SeqCst);
            f(n);
            srv.done(&peer, "POST", path, 500);
        }
        return json_resp(
            500,
            &json!({"error": {"message": "EngineCore encountered an issue.", "code": 500}}),
        );
    }

    let in_flight = InFlight::new(&srv);
    let (tx, rx) = mpsc::unbounded_channel();
    srv.engine.submit(Submit {
        prompt: ask.prompt,
        prefix_blocks: std::mem::take(&mut ask.prefix_blocks),
        max_tokens: ask.max_tokens,
        eos_at: ask.eos_at,
        streaming: ask.stream,
        tx,
        arrived: Instant::now(),
    });
    let head = Head {
        id: req_id,
        created: log::unix_now() as u64,
        model: srv.served_name.clone(),
    };
    let cached = srv.api.prompt_tokens_details.then_some(0);

    if !ask.stream {
        let out = whole(rx, &head, api, ask.prompt, cached).await;
        drop(in_flight);
        return match out {
            Ok(v) => reply(200, v),
            Err(e) => reply(500, json!({"error": {"message": e, "code": 500}})),
        };
    }

    // Streamed: uvicorn logs the 200 as soon as the response starts.
    srv.done(&peer, "POST", path, 200);
    let (btx, brx) = mpsc::unbounded_channel::<Bytes>();
    tokio::spawn(async move {
        stream(rx, btx, head, api, &ask, cached).await;
        drop(in_flight);
    });
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "text/event-stream; charset=utf-8")
        .header("cache-control", "no-cache")
        .body(SimBody::Chan(brx))
        .expect("response")
}

/// Collect the whole answer.
async fn whole(
    mut rx: mpsc::UnboundedReceiver<Event>,
    head: &Head,
    api: Api,
    prompt: usize,
    cached: Option<usize>,
) -> Result<Value, String> {
    let mut text = String::new();
    let mut produced = 0usize;
    let mut reason = "length";
    while let Some(ev) = rx.recv().await {
        match ev {
            Event::Token { finish } => {
                text.push_str(WORDS[produced % WORDS.len()]);
                produced += 1;
                if let Some(r) = finish {
                    reason = r;
                    break;
                }
            }
            Event::Error(e) => return Err(e),
        }
    }
    let usage = Usage {
        prompt,
        completion: produced,
        cached,
    };
    Ok(match api {
        Api::Generate => json!({"text": text, "meta_info": {"id": head.id,
            "finish_reason": {"type": reason, "length": produced},
            "prompt_tokens": prompt, "completion_tokens": produced, "cached_tokens": 0}}),
        _ => openai::response(head, api, &text, reason, usage),
    })
}

/// Send the answer as server-sent events, one chunk per token, then the usage chunk
/// if asked for and `[DONE]`. Stops early when the client goes away (dropping `rx`
/// aborts the request in the engine).
async fn stream(
    mut rx: mpsc::UnboundedReceiver<Event>,
    out: mpsc::UnboundedSender<Bytes>,
    head: Head,
    api: Api,
    ask: &Ask,
    cached: Option<usize>,
) {
    let send = |v: &Value| out.send(Bytes::from(format!("data: {v}\n\n"))).is_ok();
    let mut produced = 0usize;
    let mut text_so_far = String::new();
    while let Some(ev) = rx.recv().await {
        let finish = match ev {
            Event::Token { finish } => finish,
            Event::Error(e) => {
                // vLLM sends the error as an event, then still ends the stream.
                send(
                    &json!({"error": {"message": e, "type": "InternalServerError", "param": null, "code": 500}}),
                );
                break;
            }
        };
        let word = WORDS[produced % WORDS.len()];
        produced += 1;
        let usage = Usage {
            prompt: ask.prompt,
            completion: produced,
            cached,
        };
        let running = |n: usize| {
            ask.continuous_usage.then(|| {
                Usage {
                    completion: n,
                    ..usage
                }
                .running(api)
            })
        };
        // The chat's first chunk names the role; it goes out with the first token.
        if api == Api::Chat && produced == 1 && !send(&openai::role_chunk(&head, running(0))) {
            return;
        }
        let chunk = match api {
            Api::Generate => {
                text_so_far.push_str(word);
                json!({"text": text_so_far, "meta_info": {"id": head.id, "prompt_tokens": ask.prompt,
                    "completion_tokens": produced,
                    "finish_reason": finish.map(|r| json!({"type": r, "length": produced}))}})
            }
            _ => openai::token_chunk(&head, api, word, finish, running(produced)),
        };
        if !send(&chunk) {
            return;
        }
        if finish.is_some() {
            if ask.include_usage && api != Api::Generate {
                send(&openai::usage_chunk(&head, api, usage));
            }
            break;
        }
    }
    let _ = out.send(Bytes::from_static(b"data: [DONE]\n\n"));
}

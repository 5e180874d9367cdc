//! vLLM's tokenizer-facing routes: `/tokenize`, `/detokenize`, and the render routes
//! (`/v1/completions/render`, `/v1/chat/completions/render`) that return a request's
//! token ids without running it; vllm-router's cache_aware policy calls them on every
//! worker. Shapes as vLLM 0.32 dumps them (`serve/tokenize/protocol.py`,
//! `scale_out/token_in_token_out/protocol.py`); the render reply's `sampling_params`
//! holds only the fields this simulator reads from a request, not vLLM's full set.

use serde_json::{json, Value};

use crate::complete::rand_id;
use crate::http::Server;
use crate::openai;
use crate::prompt::{self, ChatLayout, Piece};

fn bad_request(msg: &str) -> (u16, Value) {
    (400, openai::error(msg, "BadRequestError", 400))
}

/// Answer one of the routes above: (status, JSON body).
pub fn serve(
    srv: &Server,
    path: &str,
    request_id: Option<&str>,
    body: Option<Value>,
) -> (u16, Value) {
    let Some(body) = body else {
        return bad_request("invalid JSON body");
    };
    match path {
        "/tokenize" => tokenize(srv, &body),
        "/detokenize" => detokenize(srv, &body),
        "/v1/completions/render" => render(srv, &body, false, request_id),
        "/v1/chat/completions/render" => render(srv, &body, true, request_id),
        _ => (404, json!({"detail": "Not Found"})),
    }
}

/// The prompt of a tokenize request: `messages` (chat) or `prompt` (completion).
fn tokenize_pieces(body: &Value) -> Option<Vec<Piece<'_>>> {
    if let Some(m) = body.get("messages") {
        return Some(prompt::chat_pieces(m, ChatLayout::from_request(body)));
    }
    match body.get("prompt") {
        Some(p @ Value::String(_)) => Some(prompt::completion_pieces(p)),
        _ => None,
    }
}

fn tokenize(srv: &Server, body: &Value) -> (u16, Value) {
    let Some(pieces) = tokenize_pieces(body) else {
        return bad_request("either 'prompt' (a string) or 'messages' is required");
    };
    let mut vocab = srv.vocab.lock().unwrap();
    let ids = vocab.ids(&pieces);
    let strs = body
        .get("return_token_strs")
        .and_then(Value::as_bool)
        .unwrap_or(false)
        .then(|| ids.iter().map(|i| vocab.token_str(*i)).collect::<Vec<_>>());
    (
        200,
        json!({"count": ids.len(), "max_model_len": srv.max_model_len, "tokens": ids, "token_strs": strs}),
    )
}

fn detokenize(srv: &Server, body: &Value) -> (u16, Value) {
    let ids: Option<Vec<u32>> = body.get("tokens").and_then(Value::as_array).and_then(|a| {
        a.iter()
            .map(|t| t.as_u64().and_then(|n| u32::try_from(n).ok()))
            .collect()
    });
    let Some(ids) = ids else {
        return bad_request("'tokens' must be a list of non-negative token ids");
    };
    let text = srv.vocab.lock().unwrap().decode(&ids);
    (200, json!({ "prompt": text }))
}

/// The sampling settings the simulator reads, under vLLM's names and defaults.
fn sampling_params(body: &Value, chat: bool) -> Value {
    let f = |k: &str, d: f64| body.get(k).and_then(Value::as_f64).unwrap_or(d);
    let keys: &[&str] = if chat {
        &["max_completion_tokens", "max_tokens"]
    } else {
        &["max_tokens"]
    };
    let max_tokens = keys
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_u64))
        .unwrap_or(16);
    json!({
        "n": body.get("n").and_then(Value::as_u64).unwrap_or(1),
        "temperature": f("temperature", 1.0),
        "top_p": f("top_p", 1.0),
        "seed": body.get("seed").cloned().unwrap_or(Value::Null),
        "stop": [],
        "stop_token_ids": [],
        "ignore_eos": body.get("ignore_eos").and_then(Value::as_bool).unwrap_or(false),
        "max_tokens": max_tokens,
        "skip_special_tokens": true,
    })
}

/// A `GenerateRequest` as `/render` returns it: the request's token ids and settings.
fn render(srv: &Server, body: &Value, chat: bool, request_id: Option<&str>) -> (u16, Value) {
    let pieces = if chat {
        match body.get("messages") {
            Some(m) => prompt::chat_pieces(m, ChatLayout::from_request(body)),
            None => return bad_request("'messages' is required"),
        }
    } else {
        match body.get("prompt") {
            Some(p) => prompt::completion_pieces(p),
            None => return bad_request("'prompt' is required"),
        }
    };
    if pieces.is_empty() {
        return bad_request("the prompt is empty");
    }
    let ids = srv.vocab.lock().unwrap().ids(&pieces);
    let rid = request_id.map(str::to_string).unwrap_or_else(rand_id);
    let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let req = json!({
        "request_id": if chat { format!("chatcmpl-{rid}") } else { format!("cmpl-{rid}") },
        "token_ids": ids,
        "token_offsets": null,
        "features": null,
        "content_parts": null,
        "sampling_params": sampling_params(body, chat),
        "model": body.get("model").cloned().unwrap_or(Value::Null),
        "reasoning_ended": null,
        "reasoning_parser_kwargs": null,
        "return_token_ids": null,
        "output_mode": "tokens",
        "stream": stream,
        "stream_options": if stream { body.get("stream_options").cloned().unwrap_or(Value::Null) } else { Value::Null },
        "cache_salt": null,
        "priority": 0,
        "kv_transfer_params": null,
        "ec_transfer_params": null,
    });
    // Completions render to one request per prompt; the simulator serves one prompt.
    (200, if chat { req } else { json!([req]) })
}

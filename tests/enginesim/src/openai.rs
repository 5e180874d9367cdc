//! The OpenAI-style bodies the servers send, shaped as vLLM 0.32 serialises them
//! (`vllm/entrypoints/openai/*/protocol.py`): whole responses are full pydantic dumps
//! (every field, nulls included), stream chunks dump only the fields the server set,
//! and the final usage chunk drops nulls. Key order follows the pydantic models.

use serde_json::{json, Map, Value};

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Api {
    Completion,
    Chat,
    /// SGLang's native `/generate`.
    Generate,
}

/// One request's identity as every chunk repeats it.
pub struct Head {
    pub id: String,
    pub created: u64,
    pub model: String,
}

/// Token counts for `usage`. `cached` is the prompt's prefix-cache hit, reported only
/// when the server runs with `--enable-prompt-tokens-details`.
#[derive(Clone, Copy)]
pub struct Usage {
    pub prompt: usize,
    pub completion: usize,
    pub cached: Option<usize>,
}

impl Usage {
    fn counts(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("prompt_tokens".into(), json!(self.prompt));
        m.insert("total_tokens".into(), json!(self.prompt + self.completion));
        m.insert("completion_tokens".into(), json!(self.completion));
        m
    }

    /// `usage` of a whole response: the full dump.
    pub fn full(&self) -> Value {
        let mut m = self.counts();
        m.insert(
            "prompt_tokens_details".into(),
            match self.cached {
                Some(c) => {
                    json!({"cached_tokens": c, "created_cache_tokens": null, "multimodal_tokens": null})
                }
                None => Value::Null,
            },
        );
        m.insert("completion_tokens_details".into(), Value::Null);
        Value::Object(m)
    }

    /// `usage` of the stream's last chunk (`stream_options.include_usage`): nulls dropped.
    pub fn final_chunk(&self) -> Value {
        let mut m = self.counts();
        if let Some(c) = self.cached {
            m.insert("prompt_tokens_details".into(), json!({"cached_tokens": c}));
        }
        Value::Object(m)
    }

    /// `usage` on every chunk (`stream_options.continuous_usage_stats`).
    pub fn running(&self, api: Api) -> Value {
        let mut m = self.counts();
        if api == Api::Chat {
            m.insert("completion_tokens_details".into(), Value::Null);
        }
        Value::Object(m)
    }
}

fn object(api: Api, chunk: bool) -> &'static str {
    match (api, chunk) {
        (Api::Chat, true) => "chat.completion.chunk",
        (Api::Chat, false) => "chat.completion",
        _ => "text_completion",
    }
}

fn envelope(h: &Head, api: Api, chunk: bool, choices: Value) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("id".into(), json!(h.id));
    m.insert("object".into(), json!(object(api, chunk)));
    m.insert("created".into(), json!(h.created));
    m.insert("model".into(), json!(h.model));
    m.insert("choices".into(), choices);
    m
}

/// A whole (non-streamed) completion or chat response.
pub fn response(h: &Head, api: Api, text: &str, finish: &str, usage: Usage) -> Value {
    let choice = match api {
        Api::Chat => json!({"index": 0,
            "message": {"role": "assistant", "content": text, "refusal": null, "annotations": null,
                        "audio": null, "function_call": null, "reasoning": null},
            "logprobs": null, "finish_reason": finish, "stop_reason": null, "token_ids": null,
            "routed_experts": null}),
        _ => json!({"index": 0, "text": text, "logprobs": null, "finish_reason": finish,
            "stop_reason": null, "token_ids": null, "prompt_logprobs": null,
            "prompt_token_ids": null, "routed_experts": null}),
    };
    let mut m = envelope(h, api, false, json!([choice]));
    m.insert("service_tier".into(), Value::Null);
    m.insert("system_fingerprint".into(), Value::Null);
    m.insert("usage".into(), usage.full());
    if api == Api::Chat {
        m.insert("prompt_logprobs".into(), Value::Null);
        m.insert("prompt_token_ids".into(), Value::Null);
        m.insert("prompt_text".into(), Value::Null);
    }
    m.insert("kv_transfer_params".into(), Value::Null);
    m.insert("ec_transfer_params".into(), Value::Null);
    m.insert("metrics".into(), Value::Null);
    Value::Object(m)
}

/// The chat stream's first chunk: the assistant role, sent with the first token.
pub fn role_chunk(h: &Head, running: Option<Value>) -> Value {
    let choice = json!({"index": 0, "delta": {"role": "assistant", "content": ""},
        "logprobs": null, "finish_reason": null});
    let mut m = envelope(h, Api::Chat, true, json!([choice]));
    if let Some(u) = running {
        m.insert("usage".into(), u);
    }
    m.insert("prompt_token_ids".into(), Value::Null);
    m.insert("prompt_text".into(), Value::Null);
    Value::Object(m)
}

/// A chunk carrying one token's text; the request's last token also carries
/// `finish_reason` (and `stop_reason`), as vLLM sends them together.
pub fn token_chunk(
    h: &Head,
    api: Api,
    delta: &str,
    finish: Option<&str>,
    running: Option<Value>,
) -> Value {
    let mut c = Map::new();
    c.insert("index".into(), json!(0));
    match api {
        Api::Chat => {
            c.insert("delta".into(), json!({ "content": delta }));
            c.insert("logprobs".into(), Value::Null);
            c.insert("finish_reason".into(), json!(finish));
            if finish.is_some() {
                c.insert("stop_reason".into(), Value::Null);
            }
        }
        _ => {
            c.insert("text".into(), json!(delta));
            c.insert("logprobs".into(), Value::Null);
            c.insert("finish_reason".into(), json!(finish));
            c.insert("stop_reason".into(), Value::Null);
            c.insert("prompt_token_ids".into(), Value::Null);
        }
    }
    c.insert("token_ids".into(), Value::Null);
    let mut m = envelope(h, api, true, json!([Value::Object(c)]));
    if let Some(u) = running {
        m.insert("usage".into(), u);
    }
    Value::Object(m)
}

/// The stream's usage chunk after the last token (`stream_options.include_usage`).
pub fn usage_chunk(h: &Head, api: Api, usage: Usage) -> Value {
    let mut m = envelope(h, api, true, json!([]));
    m.insert("usage".into(), usage.final_chunk());
    Value::Object(m)
}

/// An error as vLLM's `ErrorResponse` dumps it.
pub fn error(message: &str, kind: &str, code: u16) -> Value {
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
}

/// An error naming the request parameter at fault (vLLM 0.32's validation errors).
pub fn error_param(message: &str, kind: &str, code: u16, param: &str) -> Value {
    json!({"error": {"message": message, "type": kind, "param": param, "code": code}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head() -> Head {
        Head {
            id: "chatcmpl-1".into(),
            created: 7,
            model: "m".into(),
        }
    }

    #[test]
    fn the_last_token_carries_the_finish_reason() {
        let u = Usage {
            prompt: 3,
            completion: 2,
            cached: None,
        };
        let c = token_chunk(
            &head(),
            Api::Chat,
            " b",
            Some("length"),
            Some(u.running(Api::Chat)),
        );
        assert_eq!(
            c.to_string(),
            r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,"model":"m","choices":[{"index":0,"delta":{"content":" b"},"logprobs":null,"finish_reason":"length","stop_reason":null,"token_ids":null}],"usage":{"prompt_tokens":3,"total_tokens":5,"completion_tokens":2,"completion_tokens_details":null}}"#
        );
    }

    #[test]
    fn usage_details_appear_only_when_enabled() {
        let mut u = Usage {
            prompt: 3,
            completion: 2,
            cached: None,
        };
        assert!(usage_chunk(&head(), Api::Chat, u)
            .pointer("/usage/prompt_tokens_details")
            .is_none());
        u.cached = Some(0);
        assert_eq!(
            usage_chunk(&head(), Api::Chat, u)["usage"]["prompt_tokens_details"],
            json!({"cached_tokens": 0})
        );
        assert_eq!(u.full()["prompt_tokens_details"]["cached_tokens"], 0);
    }
}

//! The live probe (recorder.md §6, T7): one request, then a burst all in flight together,
//! then a health check. It stores every reply and the outcome the analyzer's shared rule
//! gives on those replies, so the stored outcome always equals the rule.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use analyzer::checks::t07_probe;
use analyzer::json::{self, obj, Json};

use crate::clock;
use crate::http::{self, Client};

pub const PROMPT: &str = "Write one sentence about the weather.";

#[derive(Debug, Clone)]
pub struct ProbeOptions {
    pub model: Option<String>,
    pub concurrency: usize,
    pub max_tokens: u32,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions {
            model: None,
            concurrency: 8,
            max_tokens: 16,
        }
    }
}

/// The first model the server lists.
fn list_model(base: &str) -> Result<String, String> {
    let r = Client::new(Duration::from_secs(30))
        .get(&format!("{base}/v1/models"))
        .map_err(|e| e.0)?;
    if r.status != 200 {
        return Err(format!("HTTP {} {}", r.status, http::reason(r.status)));
    }
    let doc = json::parse(&r.text()).map_err(|e| format!("not JSON: {e}"))?;
    doc.get("data")
        .and_then(Json::as_array)
        .and_then(|d| d.first())
        .and_then(|m| m.get("id"))
        .and_then(Json::as_str)
        .map(str::to_string)
        .ok_or_else(|| "no model in the list".to_string())
}

/// One completion request and its reply record (`ok`, `status`, `seconds`,
/// `completion_tokens`, `error`), the keys the shared rule reads.
fn one_request(client: &Client, base: &str, body: &str) -> Json {
    let t0 = Instant::now();
    let r = client.post_json(&format!("{base}/v1/completions"), body);
    let seconds = t0.elapsed().as_secs_f64();
    let (ok, status, tokens, error) = match r {
        Err(e) => (false, None, None, Some(e.0)),
        Ok(reply) => judge(&reply),
    };
    obj([
        ("ok", Json::Bool(ok)),
        ("status", Json::from(status.map(i64::from))),
        ("seconds", Json::Float(analyzer::num::round_dp(seconds, 3))),
        ("completion_tokens", Json::from(tokens)),
        ("error", Json::from(error)),
    ])
}

/// A good reply: 200, a JSON body, and tokens or text (recorder.md §6 step 3).
fn judge(reply: &http::Reply) -> (bool, Option<u16>, Option<i64>, Option<String>) {
    let status = Some(reply.status);
    if reply.status != 200 {
        return (false, status, None, Some(http::reason(reply.status)));
    }
    let Ok(doc) = json::parse(&reply.text()) else {
        return (false, status, None, Some("the reply is not JSON".into()));
    };
    let tokens = doc
        .get("usage")
        .and_then(|u| u.get("completion_tokens"))
        .and_then(Json::as_i64_trunc);
    let text = doc
        .get("choices")
        .and_then(Json::as_array)
        .and_then(|c| c.first())
        .and_then(|c| c.get("text"))
        .and_then(Json::as_str)
        .unwrap_or("");
    if tokens.is_some_and(|t| t > 0) || !text.is_empty() {
        (true, status, tokens, None)
    } else {
        (false, status, tokens, Some("empty completion".into()))
    }
}

fn health(base: &str) -> bool {
    http::healthy(&format!("{base}/health"), Duration::from_secs(10))
}

/// Runs the probe and returns `probe.json` (recorder.md §9.2) with its outcome.
pub fn run(base: &str, opts: &ProbeOptions) -> Json {
    let base = base.trim_end_matches('/').to_string();
    let started = clock::wall();
    let (model, models_error) = match &opts.model {
        Some(m) => (Some(m.clone()), None),
        None => match list_model(&base) {
            Ok(m) => (Some(m), None),
            Err(e) => (None, Some(e)),
        },
    };
    let request = obj([
        ("prompt", Json::from(PROMPT)),
        ("max_tokens", Json::from(i64::from(opts.max_tokens))),
        ("temperature", Json::Float(0.0)),
        ("concurrency", Json::from(opts.concurrency)),
    ]);
    let (mut first, mut burst, mut alive) = (Json::Null, Json::Null, Json::Null);
    if let Some(m) = &model {
        let body = obj([
            ("model", Json::from(m.as_str())),
            ("prompt", Json::from(PROMPT)),
            ("max_tokens", Json::from(i64::from(opts.max_tokens))),
            ("temperature", Json::Float(0.0)),
        ])
        .to_compact();
        let client = Client::new(Duration::from_secs(300));
        first = one_request(&client, &base, &body);
        if first.get("ok").and_then(Json::as_bool) == Some(true) {
            burst = Json::Arr(send_burst(&base, &body, opts.concurrency));
        }
        alive = Json::Bool(health(&base));
    }
    let mut doc = obj([
        ("schema", Json::from("inferlint.probe/1")),
        ("url", Json::from(base.as_str())),
        ("model", Json::from(model)),
        ("models_error", Json::from(models_error)),
        ("request", request),
        ("first", first),
        ("burst", burst),
        ("alive_after", alive),
    ]);
    let (pass, message, _) = t07_probe::outcome(&doc);
    if let Json::Obj(pairs) = &mut doc {
        pairs.push((
            "outcome".into(),
            Json::from(if pass { "pass" } else { "fail" }),
        ));
        pairs.push(("message".into(), Json::from(message)));
        pairs.push(("started_wall".into(), Json::Float(started)));
        pairs.push(("ended_wall".into(), Json::Float(clock::wall())));
    }
    doc
}

/// `n` identical requests released together, each on its own connection.
fn send_burst(base: &str, body: &str, n: usize) -> Vec<Json> {
    let gate = Arc::new(Barrier::new(n.max(1)));
    let handles: Vec<_> = (0..n)
        .map(|_| {
            let (gate, base, body) = (gate.clone(), base.to_string(), body.to_string());
            std::thread::spawn(move || {
                let client = Client::new(Duration::from_secs(300));
                gate.wait();
                one_request(&client, &base, &body)
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| {
            h.join().unwrap_or_else(|_| {
                obj([
                    ("ok", Json::Bool(false)),
                    ("status", Json::Null),
                    ("seconds", Json::Null),
                    ("completion_tokens", Json::Null),
                    ("error", Json::from("the request thread failed")),
                ])
            })
        })
        .collect()
}

/// Whether the document's stored outcome passed.
pub fn passed(doc: &Json) -> bool {
    doc.get("outcome").and_then(Json::as_str) == Some("pass")
}

/// The probe as a result object (T7), through the analyzer's reading of `probe.json`.
pub fn result(doc: &Json) -> analyzer::CheckResult {
    t07_probe::from_document(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(status: u16, body: &str) -> http::Reply {
        http::Reply {
            status,
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn good_and_bad_replies() {
        assert!(
            judge(&reply(
                200,
                r#"{"choices": [{"text": "ok"}], "usage": {"completion_tokens": 16}}"#
            ))
            .0
        );
        assert!(judge(&reply(200, r#"{"choices": [{"text": "x"}]}"#)).0);
        let (ok, _, _, e) = judge(&reply(
            200,
            r#"{"choices": [{"text": ""}], "usage": {"completion_tokens": 0}}"#,
        ));
        assert!(!ok);
        assert_eq!(e.as_deref(), Some("empty completion"));
        let (ok, s, _, e) = judge(&reply(500, "oops"));
        assert!(!ok);
        assert_eq!(s, Some(500));
        assert_eq!(e.as_deref(), Some("Internal Server Error"));
        assert_eq!(
            judge(&reply(200, "<html>")).3.as_deref(),
            Some("the reply is not JSON")
        );
    }

    #[test]
    fn nothing_listening_fails_with_the_model_list_error() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        // The listener is dropped: nothing listens there now.
        let doc = run(
            &format!("http://127.0.0.1:{port}"),
            &ProbeOptions::default(),
        );
        assert!(!passed(&doc));
        let msg = doc.get("message").and_then(Json::as_str).unwrap();
        assert!(msg.starts_with("cannot list models: "), "{msg}");
        // The stored outcome equals the shared rule on the stored replies.
        assert_eq!(t07_probe::outcome(&doc).1, msg);
    }
}

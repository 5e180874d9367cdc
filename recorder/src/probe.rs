//! The live probe (T7, docs/tripwires.md#t7): one request, then a burst all in flight
//! together, then a health check. It stores every reply and the outcome the analyzer's
//! shared rule gives on those replies, so the stored outcome always equals the rule.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use analyzer::docs::probe::{Probe, ProbeOutcome, ProbeRequest, Reply};
use analyzer::json::{self, Json};
use analyzer::rules::t07_crash_after_ready as t07_probe;
use serde::Serialize;

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

/// The body of every probe request.
#[derive(Serialize)]
struct Completion<'a> {
    model: &'a str,
    prompt: &'a str,
    max_tokens: u32,
    temperature: f64,
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

/// One completion request and its reply record.
fn one_request(client: &Client, base: &str, body: &str) -> Reply {
    let t0 = Instant::now();
    let r = client.post_json(&format!("{base}/v1/completions"), body);
    let seconds = Some(analyzer::num::round_dp(t0.elapsed().as_secs_f64(), 3));
    match r {
        Err(e) => Reply {
            seconds,
            error: Some(e.0),
            ..Reply::default()
        },
        Ok(reply) => Reply {
            seconds,
            ..judge(&reply)
        },
    }
}

/// A good reply: 200, a JSON body, and tokens or text. The
/// record without its time.
fn judge(reply: &http::Reply) -> Reply {
    let failed = |error: String, completion_tokens: Option<i64>| Reply {
        ok: false,
        status: Some(reply.status),
        seconds: None,
        completion_tokens,
        error: Some(error),
    };
    if reply.status != 200 {
        return failed(http::reason(reply.status), None);
    }
    let Ok(doc) = json::parse(&reply.text()) else {
        return failed("the reply is not JSON".into(), None);
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
        Reply {
            ok: true,
            status: Some(reply.status),
            seconds: None,
            completion_tokens: tokens,
            error: None,
        }
    } else {
        failed("empty completion".into(), tokens)
    }
}

fn health(base: &str) -> bool {
    http::healthy(&format!("{base}/health"), Duration::from_secs(10))
}

/// Runs the probe and returns `probe.json` (docs/run-folder.md#probe) with the outcome
/// T7's rule gives on its replies.
pub fn run(base: &str, opts: &ProbeOptions) -> Probe {
    let base = base.trim_end_matches('/').to_string();
    let started = clock::wall();
    let (model, models_error) = match &opts.model {
        Some(m) => (Some(m.clone()), None),
        None => match list_model(&base) {
            Ok(m) => (Some(m), None),
            Err(e) => (None, Some(e)),
        },
    };
    let mut doc = Probe {
        url: base.clone(),
        model,
        models_error,
        request: Some(ProbeRequest {
            prompt: PROMPT.into(),
            max_tokens: opts.max_tokens,
            temperature: 0.0,
            concurrency: opts.concurrency,
        }),
        started_wall: Some(started),
        ..Probe::default()
    };
    if let Some(m) = &doc.model {
        let body = json::to_compact(&Completion {
            model: m,
            prompt: PROMPT,
            max_tokens: opts.max_tokens,
            temperature: 0.0,
        });
        let client = Client::new(Duration::from_secs(300));
        let first = one_request(&client, &base, &body);
        if first.ok {
            doc.burst = Some(send_burst(&base, &body, opts.concurrency));
        }
        doc.first = Some(first);
        doc.alive_after = Some(health(&base));
    }
    let outcome = t07_probe::outcome(&doc);
    doc.outcome = Some(if outcome.passed {
        ProbeOutcome::Pass
    } else {
        ProbeOutcome::Fail
    });
    doc.message = Some(outcome.message);
    doc.ended_wall = Some(clock::wall());
    doc
}

/// `n` identical requests released together, each on its own connection.
fn send_burst(base: &str, body: &str, n: usize) -> Vec<Reply> {
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
            h.join().unwrap_or_else(|_| Reply {
                error: Some("the request thread failed".into()),
                ..Reply::default()
            })
        })
        .collect()
}

/// Whether the document's stored outcome passed.
pub fn passed(doc: &Probe) -> bool {
    doc.outcome == Some(ProbeOutcome::Pass)
}

/// The probe as a result object (T7), through the analyzer's reading of `probe.json`.
pub fn result(doc: &Probe) -> analyzer::CheckResult {
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
        let good = judge(&reply(
            200,
            r#"{"choices": [{"text": "ok"}], "usage": {"completion_tokens": 16}}"#,
        ));
        assert!(good.ok);
        assert_eq!(good.completion_tokens, Some(16));
        assert!(judge(&reply(200, r#"{"choices": [{"text": "x"}]}"#)).ok);
        let empty = judge(&reply(
            200,
            r#"{"choices": [{"text": ""}], "usage": {"completion_tokens": 0}}"#,
        ));
        assert!(!empty.ok);
        assert_eq!(empty.error.as_deref(), Some("empty completion"));
        let error = judge(&reply(500, "oops"));
        assert!(!error.ok);
        assert_eq!(error.status, Some(500));
        assert_eq!(error.error.as_deref(), Some("Internal Server Error"));
        assert_eq!(
            judge(&reply(200, "<html>")).error.as_deref(),
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
        let msg = doc.message.clone().unwrap();
        assert!(msg.starts_with("cannot list models: "), "{msg}");
        assert!(doc.first.is_none() && doc.burst.is_none() && doc.alive_after.is_none());
        // The stored outcome equals the shared rule on the stored replies.
        assert_eq!(t07_probe::outcome(&doc).message, msg);
    }
}

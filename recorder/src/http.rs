//! The few HTTP calls the recorder makes, over `ureq`: a status and a body, or a transport
//! error as text. HTTP error statuses are answers, not errors: callers decide.

use std::time::Duration;

/// An answer: status and body bytes.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// A connection, timeout or protocol failure.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct HttpError(pub String);

/// Bodies are kept whole up to this size: a metrics page is tens of KiB.
const BODY_LIMIT: u64 = 256 << 20;

/// A client with one timeout for the whole call.
#[derive(Clone)]
pub struct Client {
    agent: ureq::Agent,
}

impl Client {
    pub fn new(timeout: Duration) -> Client {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            // The server is addressed directly; a proxy from the environment would stand
            // between the recorder and the server it is measuring.
            .proxy(None)
            .timeout_global(Some(timeout))
            .build()
            .into();
        Client { agent }
    }

    pub fn get(&self, url: &str) -> Result<Reply, HttpError> {
        let resp = self.agent.get(url).call().map_err(describe)?;
        read(resp)
    }

    pub fn post_json(&self, url: &str, body: &str) -> Result<Reply, HttpError> {
        let resp = self
            .agent
            .post(url)
            .header("Content-Type", "application/json")
            .send(body)
            .map_err(describe)?;
        read(resp)
    }
}

fn read(mut resp: ureq::http::Response<ureq::Body>) -> Result<Reply, HttpError> {
    let status = resp.status().as_u16();
    let body = resp
        .body_mut()
        .with_config()
        .limit(BODY_LIMIT)
        .read_to_vec()
        .map_err(describe)?;
    Ok(Reply { status, body })
}

fn describe(e: ureq::Error) -> HttpError {
    HttpError(match e {
        ureq::Error::Io(io) => io.to_string(),
        ureq::Error::Timeout(t) => format!("timed out ({t})"),
        other => other.to_string(),
    })
}

/// The reason phrase of a status (`Internal Server Error` for 500), or `HTTP N`.
pub fn reason(status: u16) -> String {
    ureq::http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .map_or_else(|| format!("HTTP {status}"), str::to_string)
}

/// `GET url` answered 200 within `timeout`.
pub fn healthy(url: &str, timeout: Duration) -> bool {
    matches!(Client::new(timeout).get(url), Ok(r) if r.status == 200)
}

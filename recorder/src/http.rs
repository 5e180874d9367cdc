//! The few HTTP calls the recorder makes, over `ureq`: a status and a body, or a transport
//! error as text. HTTP error statuses are answers, not errors: callers decide.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::NextTimeout;

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

    /// The body as text, without a copy when it is valid UTF-8 (a metrics page is read
    /// at every reading of the series).
    pub fn into_text(self) -> String {
        String::from_utf8(self.body)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
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
    timeout: Duration,
}

impl Client {
    pub fn new(timeout: Duration) -> Client {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            // The server is addressed directly; a proxy from the environment would stand
            // between the recorder and the server it is measuring.
            .proxy(None)
            .timeout_global(Some(timeout))
            .build();
        let agent = ureq::Agent::with_parts(
            config,
            ureq::unversioned::transport::DefaultConnector::default(),
            LiteralFirst::default(),
        );
        Client { agent, timeout }
    }

    pub fn get(&self, url: &str) -> Result<Reply, HttpError> {
        let resp = self.agent.get(url).call().map_err(|e| self.describe(e))?;
        read(resp).map_err(|e| self.describe(e))
    }

    pub fn post_json(&self, url: &str, body: &str) -> Result<Reply, HttpError> {
        let resp = self
            .agent
            .post(url)
            .header("Content-Type", "application/json")
            .send(body)
            .map_err(|e| self.describe(e))?;
        read(resp).map_err(|e| self.describe(e))
    }

    /// A failure in words; a timeout says how long the call waited.
    fn describe(&self, e: ureq::Error) -> HttpError {
        HttpError(match e {
            ureq::Error::Io(io) => io.to_string(),
            ureq::Error::Timeout(_) => format!(
                "timed out after {} s",
                analyzer::num::shortest(self.timeout.as_secs_f64())
            ),
            other => other.to_string(),
        })
    }
}

/// A resolver that answers an IP address written in the URL itself (the usual
/// `http://127.0.0.1:PORT` of a server the recorder started) without a lookup. ureq's own
/// resolver, under a timeout, spawns a thread per call even for an address, and the
/// series calls it at every reading; names still go to it.
#[derive(Debug, Default)]
struct LiteralFirst {
    names: DefaultResolver,
}

impl Resolver for LiteralFirst {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let literal = uri.authority().and_then(|a| {
            let ip: IpAddr = a.host().trim_matches(['[', ']']).parse().ok()?;
            let port = a.port_u16().or(match uri.scheme_str() {
                Some("http") => Some(80),
                Some("https") => Some(443),
                _ => None,
            })?;
            Some(SocketAddr::new(ip, port))
        });
        match literal {
            Some(addr) => {
                let mut out = self.empty();
                out.push(addr);
                Ok(out)
            }
            None => self.names.resolve(uri, config, timeout),
        }
    }
}

fn read(mut resp: ureq::http::Response<ureq::Body>) -> Result<Reply, ureq::Error> {
    let status = resp.status().as_u16();
    let body = resp
        .body_mut()
        .with_config()
        .limit(BODY_LIMIT)
        .read_to_vec()?;
    Ok(Reply { status, body })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_moved_when_valid_and_replaced_when_not() {
        let valid = Reply {
            status: 200,
            body: "a é\n".as_bytes().to_vec(),
        };
        assert_eq!(valid.into_text(), "a é\n");
        let invalid = Reply {
            status: 200,
            body: b"a \xff b".to_vec(),
        };
        assert_eq!(invalid.text(), "a \u{fffd} b");
        assert_eq!(invalid.into_text(), "a \u{fffd} b");
    }

    #[test]
    fn addresses_in_the_url_need_no_lookup() {
        let config = ureq::config::Config::default();
        let never = NextTimeout {
            after: ureq::unversioned::transport::time::Duration::NotHappening,
            reason: ureq::Timeout::Global,
            per_read: None,
            per_write: None,
        };
        let resolve = |url: &str| {
            let uri: ureq::http::Uri = url.parse().unwrap();
            LiteralFirst::default()
                .resolve(&uri, &config, never)
                .unwrap()
                .to_vec()
        };
        assert_eq!(
            resolve("http://127.0.0.1:8000/metrics"),
            ["127.0.0.1:8000".parse::<SocketAddr>().unwrap()]
        );
        assert_eq!(
            resolve("http://[::1]/metrics"),
            ["[::1]:80".parse::<SocketAddr>().unwrap()]
        );
    }
}

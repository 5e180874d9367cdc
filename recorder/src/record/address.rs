//! The server's address: `--url`, else the `--serve` command's `--host`
//! and `--port` with the engine's default port.

use analyzer::Engine;

use crate::load::flag_value;

/// The base URL a server started by `argv` answers at.
pub fn from_serve(argv: &[String], engine: Option<Engine>) -> String {
    let port = flag_value(argv, "--port")
        .and_then(|p| p.parse::<u16>().ok())
        .unwrap_or_else(|| engine.map_or(8000, Engine::default_port));
    let host = match flag_value(argv, "--host") {
        None | Some("") | Some("0.0.0.0") | Some("::") | Some("localhost") => {
            "127.0.0.1".to_string()
        }
        Some(h) if h.contains(':') && !h.starts_with('[') => format!("[{h}]"),
        Some(h) => h.to_string(),
    };
    format!("http://{host}:{port}")
}

/// Attach mode without `--url`.
pub fn default_url(engine: Option<Engine>) -> String {
    format!(
        "http://127.0.0.1:{}",
        engine.map_or(8000, Engine::default_port)
    )
}

/// `(host, port)` of a base URL, for the port check and the socket owner.
pub fn host_port(url: &str) -> Option<(String, u16)> {
    let rest = url.split_once("://").map_or(url, |x| x.1);
    let authority = rest.split('/').next()?;
    let (host, port) = if let Some(r) = authority.strip_prefix('[') {
        let (h, p) = r.split_once(']')?;
        (h.to_string(), p.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (authority.to_string(), None),
        }
    };
    let default = if url.starts_with("https") { 443 } else { 80 };
    let port = match port {
        Some(p) => p.parse().ok()?,
        None => default,
    };
    Some((host, port))
}

#[cfg(test)]
mod tests {
    use super::*;
    use analyzer::engine::{engine_from_argv, shell_split};

    fn url(cmd: &str) -> String {
        let a = shell_split(cmd).unwrap();
        from_serve(&a, engine_from_argv(&a))
    }

    #[test]
    fn the_address_table() {
        assert_eq!(
            url("vllm serve M --host 0.0.0.0 --port=9000"),
            "http://127.0.0.1:9000"
        );
        assert_eq!(
            url("python -m sglang.launch_server --model-path M"),
            "http://127.0.0.1:30000"
        );
        assert_eq!(
            url("sglang serve --model-path M --port 8000"),
            "http://127.0.0.1:8000"
        );
        assert_eq!(
            url("trtllm-serve serve M --host 10.0.0.5"),
            "http://10.0.0.5:8000"
        );
        assert_eq!(url("vllm serve M --host ::1"), "http://[::1]:8000");
        assert_eq!(url("vllm serve M"), "http://127.0.0.1:8000");
        assert_eq!(default_url(Some(Engine::Sglang)), "http://127.0.0.1:30000");
        assert_eq!(default_url(None), "http://127.0.0.1:8000");
    }

    #[test]
    fn host_and_port() {
        assert_eq!(host_port("http://[::1]:8000"), Some(("::1".into(), 8000)));
        assert_eq!(
            host_port("http://127.0.0.1:9000/x"),
            Some(("127.0.0.1".into(), 9000))
        );
        assert_eq!(host_port("http://h"), Some(("h".into(), 80)));
        assert_eq!(host_port("http://h:x"), None);
    }
}

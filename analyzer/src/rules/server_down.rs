//! A server that was down before the load started. The recorder's live probe ends with a
//! health check (`probe.json` `alive_after`); when it failed, nothing the load sent could
//! reach a running server, so T8 and T15 say the server was down instead of judging the
//! load: a load against a dead server "runs at most 0 at once" and "completes 0 requests",
//! which reads as a verdict on the server's concurrency or its counters but is neither.
//!
//! A real vLLM 0.32 whose engine died on the first request (the CPU kernel refusing a head
//! size) fails its health check at once, yet its API server answers `/metrics` for a
//! moment before it exits with status 0: neither the before snapshot nor the exit status
//! tells, the health check does.

use crate::docs::probe::Probe;

/// Why the server is taken to have been down before the load.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerDown {
    /// The reason, as a clause ("it did not answer its health check after the probe …").
    pub reason: String,
}

/// The server was down before the load: the probe's closing health check failed.
pub fn before_load(probe: Option<&Probe>) -> Option<ServerDown> {
    let probe = probe?;
    if probe.alive_after != Some(false) {
        return None;
    }
    let why = probe
        .message
        .as_deref()
        .filter(|m| !m.is_empty())
        .map(|m| format!(" (T7: {m})"))
        .unwrap_or_default();
    Some(ServerDown {
        reason: format!("it did not answer its health check after the probe{why}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_failed_health_check_means_down() {
        let mut p = Probe {
            alive_after: Some(true),
            message: Some("first request failed: Internal Server Error".into()),
            ..Probe::default()
        };
        assert_eq!(before_load(Some(&p)), None);
        p.alive_after = None;
        assert_eq!(before_load(Some(&p)), None);
        assert_eq!(before_load(None), None);
        p.alive_after = Some(false);
        assert_eq!(
            before_load(Some(&p)).unwrap().reason,
            "it did not answer its health check after the probe (T7: first request failed: Internal Server Error)"
        );
    }
}

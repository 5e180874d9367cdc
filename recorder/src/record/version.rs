//! Step 10, the server's version: `GET /version`, then
//! `GET /get_server_info` (5 s each); the first JSON object with a non-empty string
//! `version` wins, stored with its endpoint. The analyzer decides whether to use it.

use std::time::Duration;

use analyzer::docs::manifest::ServerVersion;
use analyzer::json::{self, Json};

use super::Run;
use crate::signals;

/// The endpoints asked, in order.
const ENDPOINTS: [&str; 2] = ["/version", "/get_server_info"];

impl Run {
    pub(super) fn version_step(&mut self) {
        let base = self.manifest.url.clone();
        let found = signals::abandonable(0, move || {
            let client = crate::http::Client::new(Duration::from_secs(5));
            ENDPOINTS.iter().find_map(|endpoint| {
                let reply = client.get(&format!("{base}{endpoint}")).ok()?;
                if reply.status != 200 {
                    return None;
                }
                let doc = json::parse(&reply.text()).ok()?;
                let version = doc.get("version").and_then(Json::as_str)?;
                (!version.is_empty()).then(|| ServerVersion {
                    version: version.to_string(),
                    endpoint: endpoint.to_string(),
                })
            })
        });
        self.manifest.server_version = found.flatten();
    }
}

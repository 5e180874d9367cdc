//! Attach mode's one step (replacing steps 3–7): a server must answer
//! `GET URL/health` with 200 within 5 s.

use std::time::Duration;

use analyzer::docs::manifest::Stage;

use super::{problem, Run, Step, Stop};
use crate::{say, signals};

impl Run {
    pub(super) fn attach_step(&mut self) -> Step<()> {
        let url = format!("{}/health", self.manifest.url);
        say(&format!("== is a server answering at {url}?"));
        let health = url.clone();
        match signals::abandonable(0, move || {
            crate::http::healthy(&health, Duration::from_secs(5))
        }) {
            None => Err(Stop::Interrupted(Stage::Attach)),
            Some(true) => Ok(()),
            Some(false) => problem(Stage::Attach, format!("no server answers at {url}")),
        }
    }
}

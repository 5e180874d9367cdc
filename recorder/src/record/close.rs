//! Step 18, close: the closing steps that still apply, the final
//! manifest (outcome, times, files), the analysis and the exit status.

use std::path::Path;

use analyzer::docs::manifest::{Outcome, Stage, State};
use analyzer::docs::{MANIFEST, REPLICAS_DIR, ROUTER_DIR};

use super::{Run, Step, Stop};
use crate::{clock, say, signals};

impl Run {
    /// Runs steps 15–18 after the sequence ended (well or not); the exit status.
    pub(super) fn close(mut self, flow: Step<()>) -> i32 {
        let mut stop = flow.err();
        self.after_load(&mut stop);
        self.stop_server(&mut stop);
        if signals::interrupted() && !matches!(stop, Some(Stop::Interrupted(_))) {
            let stage = match &stop {
                Some(Stop::Problem(stage, _)) => *stage,
                _ => Stage::Load,
            };
            stop = Some(Stop::Interrupted(stage));
        }
        self.manifest.outcome = Some(outcome(&stop));
        self.manifest.ended_wall = Some(clock::wall());
        self.manifest.files = list_files(&self.opts.dir);
        if !self.manifest.files.iter().any(|f| f == MANIFEST) {
            self.manifest.files.push(MANIFEST.into());
            self.manifest.files.sort();
        }
        self.save_manifest();
        let captured = match &stop {
            Some(Stop::Interrupted(_)) => 130,
            Some(Stop::Problem(..)) => 1,
            None if self.load_failed => 1,
            None => 0,
        };
        let analyzed = if self.opts.no_analyze {
            None
        } else {
            crate::analyze::run(
                &self.opts.dir,
                self.opts.strict,
                self.opts.json,
                self.opts.engine.map(|e| e.0.key()),
            )
        };
        say(&format!("files:  {}", self.opts.dir.display()));
        match (captured, analyzed) {
            (0, Some(status)) => status,
            (status, _) => status,
        }
    }
}

/// The manifest's outcome, printed as the run ends.
fn outcome(stop: &Option<Stop>) -> Outcome {
    match stop {
        None => Outcome {
            state: State::Completed,
            stage: None,
            problem: None,
        },
        Some(Stop::Problem(stage, text)) => {
            say(&format!("== problem ({}): {text}", stage.as_str()));
            Outcome {
                state: State::Problem,
                stage: Some(*stage),
                problem: Some(text.clone()),
            }
        }
        Some(Stop::Interrupted(stage)) => {
            say(&format!(
                "== interrupted ({})",
                signals::last_name().unwrap_or("signal")
            ));
            Outcome {
                state: State::Interrupted,
                stage: Some(*stage),
                problem: None,
            }
        }
    }
}

/// The folder's regular files, sorted, without temporaries; a fleet's replica and
/// router files as relative paths (`replicas/<id>/after.snapshot.json`).
fn list_files(dir: &Path) -> Vec<String> {
    let mut names = files_in(dir);
    for sub in [REPLICAS_DIR, ROUTER_DIR] {
        for name in files_in(&dir.join(sub)) {
            names.push(format!("{sub}/{name}"));
        }
        let folders = std::fs::read_dir(dir.join(sub))
            .into_iter()
            .flatten()
            .flatten();
        for folder in folders.filter(|e| e.file_type().is_ok_and(|t| t.is_dir())) {
            let Some(id) = folder.file_name().to_str().map(str::to_string) else {
                continue;
            };
            for name in files_in(&folder.path()) {
                names.push(format!("{sub}/{id}/{name}"));
            }
        }
    }
    names.sort();
    names
}

/// The regular files directly in `dir`, without temporaries.
fn files_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

/// A vector shell-quoted for display.
pub fn quote(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(
            quote(&["a".into(), "b c".into(), "it's".into()]),
            "a 'b c' 'it'\\''s'"
        );
    }
}

//! The live line during the load: elapsed time, running, waiting and KV use, from the
//! series' latest row. Only on a terminal, never with `--json`, plain under NO_COLOR.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::series::Latest;

pub struct Progress {
    bar: ProgressBar,
    latest: Option<Latest>,
}

fn enabled(json: bool) -> bool {
    !json && std::io::stderr().is_terminal() && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
}

impl Progress {
    pub fn new(json: bool) -> Progress {
        let bar = if enabled(json) {
            let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4));
            let colour = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
            let tpl = if colour {
                "{spinner:.cyan} load {elapsed_precise}  {msg}"
            } else {
                "{spinner} load {elapsed_precise}  {msg}"
            };
            b.set_style(
                ProgressStyle::with_template(tpl)
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            b.enable_steady_tick(Duration::from_millis(250));
            b
        } else {
            ProgressBar::hidden()
        };
        Progress { bar, latest: None }
    }

    pub fn follow(&mut self, latest: Latest) {
        self.latest = Some(latest);
    }

    /// Refreshes the message from the latest row.
    pub fn tick(&self) {
        if self.bar.is_hidden() {
            return;
        }
        let Some(l) = &self.latest else { return };
        let Ok(g) = l.lock() else { return };
        if let Some(r) = g.as_ref() {
            let n = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.0}"));
            let kv = r
                .kv_usage
                .map_or("-".to_string(), |u| format!("{:.0}%", u * 100.0));
            self.bar.set_message(format!(
                "running {}  waiting {}  KV {kv}",
                n(r.running),
                n(r.waiting)
            ));
        }
    }

    /// Prints a line above the live line (or plainly when there is none).
    pub fn printer(&self, to_stderr: bool) -> Box<dyn Fn(&str) + Send> {
        let bar = self.bar.clone();
        Box::new(move |line: &str| {
            let line = analyzer::term::escape(line);
            bar.suspend(|| {
                if to_stderr {
                    eprintln!("{line}");
                } else {
                    println!("{line}");
                }
            })
        })
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

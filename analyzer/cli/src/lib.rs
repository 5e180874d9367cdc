//! The `inferlint` command line: reads files, calls the analyzer, prints and writes the
//! report. The analyzer library itself never touches the file system; this crate does.

pub mod args;
pub mod ci_format;
mod commands;
mod compare;
pub mod disk;
mod html;
pub mod output;
pub mod render;
pub mod render_phases;
mod render_replicas;
pub mod shell;
pub mod version;

use analyzer::analysis::NamedEngine;
use analyzer::engine::Engine;
use args::{Cli, Command, Common};
use clap::{CommandFactory, Parser};

/// A failure that ends a command: the message for stderr and the exit status.
#[derive(Debug)]
pub struct Exit {
    pub code: i32,
    pub message: Option<String>,
}

impl Exit {
    pub fn usage(message: impl Into<String>) -> Exit {
        Exit {
            code: 2,
            message: Some(message.into()),
        }
    }
}

/// Runs the command line; returns the exit status.
pub fn main_with_args(argv: Vec<std::ffi::OsString>) -> i32 {
    let cli = match Cli::try_parse_from(argv) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    let Some(command) = cli.command else {
        print!("{}", START_HERE);
        return 0;
    };
    let result = match command {
        Command::Analyze(mut a) => {
            ci_format::prepare(&mut a.common, &a.format).and_then(|()| commands::analyze(a))
        }
        Command::CheckLog(a) => commands::check_log(a),
        Command::BootFacts(a) => commands::boot_facts(a),
        Command::Preemption(a) => commands::preemption(a),
        Command::Rate(a) => commands::rate(a),
        Command::Series(a) => commands::series(a),
        Command::Explain(a) => commands::explain(a),
        Command::Compare(a) => compare::compare(a),
        Command::Completions(a) => {
            shell::completions(Cli::command(), a.shell, &mut std::io::stdout())
                .map(|()| 0)
                .map_err(|e| Exit::usage(format!("cannot print the completions: {e}")))
        }
        Command::Man(a) => shell::man_pages(Cli::command(), &a.dir)
            .map(|()| 0)
            .map_err(|e| {
                Exit::usage(format!(
                    "cannot write the man pages into {}: {e}",
                    a.dir.display()
                ))
            }),
    };
    match result {
        Ok(code) => code,
        Err(exit) => {
            if let Some(m) = exit.message {
                commands::note(&m);
            }
            exit.code
        }
    }
}

const START_HERE: &str = "\
inferlint: does your LLM serving benchmark measure what it seems to?

Start here:
  inferlint analyze RUN_DIR        check a run folder (boot.log, snapshots, series, bench.json)
  inferlint check-log boot.log     what the server started with, and whether it failed
  inferlint explain                the eighteen tripwires, in plain words
  inferlint compare RUN RUN        runs side by side (--baseline OLD NEW for CI)
  inferlint --help                 every command, with examples

Record a run folder on the GPU box with inferlint-recorder record.
";

/// The engine the user named: `--engine`, else a non-blank `INFERLINT_ENGINE`.
pub fn named_engine(common: &Common) -> Result<Option<NamedEngine>, Exit> {
    if let Some(e) = &common.engine {
        return match Engine::parse_name(e) {
            Some(engine) => Ok(Some(NamedEngine {
                engine,
                by: "--engine",
            })),
            None => Err(Exit::usage(format!(
                "--engine {e}: not an engine (known: vllm, sglang, trtllm)"
            ))),
        };
    }
    match std::env::var("INFERLINT_ENGINE") {
        Ok(v) if !v.trim().is_empty() => match Engine::parse_name(&v) {
            Some(engine) => Ok(Some(NamedEngine {
                engine,
                by: "INFERLINT_ENGINE",
            })),
            None => Err(Exit::usage(format!(
                "INFERLINT_ENGINE={v} is not an engine (known: vllm, sglang, trtllm)"
            ))),
        },
        _ => Ok(None),
    }
}

/// The local time zone's offset from UTC now, in minutes east (0 when unknown).
pub fn local_utc_offset_min() -> i32 {
    #[cfg(unix)]
    {
        // SAFETY: time() with a null pointer only returns the time; localtime_r writes into
        // the zeroed struct we own and reads the process's zone settings.
        unsafe {
            let now = libc::time(std::ptr::null_mut());
            let mut tm: libc::tm = std::mem::zeroed();
            if !libc::localtime_r(&now, &mut tm).is_null() {
                return (tm.tm_gmtoff / 60) as i32;
            }
        }
    }
    0
}

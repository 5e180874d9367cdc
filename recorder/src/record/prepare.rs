//! Step 1, prepare: refuse a folder that already holds a run or a
//! command that cannot be split, create the folder, become the child subreaper, and the
//! first manifest (outcome `running`).

use std::path::Path;

use analyzer::docs::manifest::{Load, Manifest, Mode, Outcome, Recorder, Requested, Serve, State};
use analyzer::docs::{
    AIPERF_DIR, BENCH_JSON, BENCH_JSONL, BOOT_LOG, FLEET, GATE, GPU_SAMPLES, LOAD_CPU, LOAD_LOG,
    MANIFEST, PROBE, PROCESSES, REPLICAS_DIR, REPORT, RESERVE, RESULTS, ROUTER_DIR, SERIES,
    SERIES_SUFFIX, SNAPSHOT_SUFFIX, TEARDOWN,
};
use analyzer::engine::shell_split;
use analyzer::folder::{discover, Discovery};

use super::Options;
use crate::{clock, signals};

/// What the run starts from.
pub(super) struct Prepared {
    pub manifest: Manifest,
    /// The `--serve` command split (serve mode).
    pub serve_argv: Option<Vec<String>>,
}

/// A name in `dir` that the recorder would write or the analyzer would read, if any:
/// another run's file left there would be read as this run's (an old `probe.json` once
/// made a server that never started pass T7). What the analyzer reads is its own
/// discovery's answer (`analyzer::folder`), asked of each name alone: a stray `*.json`
/// is a candidate load result, a `*before*.json` a snapshot, a `*boot*.log` a log.
fn holds_run_files(dir: &Path) -> Option<String> {
    let written = [
        MANIFEST,
        BOOT_LOG,
        SERIES,
        LOAD_LOG,
        BENCH_JSON,
        BENCH_JSONL,
        FLEET,
        REPLICAS_DIR,
        ROUTER_DIR,
        GATE,
        PROBE,
        TEARDOWN,
        PROCESSES,
        GPU_SAMPLES,
        LOAD_CPU,
        RESULTS,
        REPORT,
        AIPERF_DIR,
        RESERVE,
    ];
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .collect();
    names.sort();
    names.into_iter().find(|n| {
        written.contains(&n.as_str())
            || n.ends_with(SNAPSHOT_SUFFIX)
            || n.ends_with(SERIES_SUFFIX)
            || discover(&[n.as_str()]) != Discovery::default()
    })
}

/// Usage errors (status 2) come before anything is touched; a folder that cannot be
/// created is status 1.
pub(super) fn prepare(opts: &Options) -> Result<Prepared, i32> {
    if opts.load.is_empty() {
        eprintln!("inferlint-recorder: record needs the load command after --, e.g. record -o run -- vllm bench serve ...");
        return Err(2);
    }
    if let Some(why) = crate::load::cannot_run(&opts.load) {
        eprintln!("inferlint-recorder: {why}; nothing was started");
        return Err(2);
    }
    if let Some(name) = holds_run_files(&opts.dir) {
        eprintln!(
            "inferlint-recorder: {} already holds a run ({name}: the analysis would read it as \
             this run's); choose a new folder with -o",
            opts.dir.display()
        );
        return Err(2);
    }
    let serve_argv = match &opts.serve {
        Some(cmd) => match shell_split(cmd) {
            Some(a) if !a.is_empty() => Some(a),
            _ => {
                eprintln!(
                    "inferlint-recorder: cannot split the --serve command (unbalanced quotes?)"
                );
                return Err(2);
            }
        },
        None => None,
    };
    signals::install();
    if let Err(e) = std::fs::create_dir_all(&opts.dir) {
        eprintln!(
            "inferlint-recorder: cannot create {}: {e}",
            opts.dir.display()
        );
        return Err(1);
    }
    // Orphans of the server come to us, not to init, and stay recognisably ours.
    let _ = nix::sys::prctl::set_child_subreaper(true);
    Ok(Prepared {
        manifest: first_manifest(opts, serve_argv.as_deref()),
        serve_argv,
    })
}

/// The manifest written at once: what was asked, nothing found yet.
fn first_manifest(opts: &Options, serve_argv: Option<&[String]>) -> Manifest {
    Manifest {
        recorder: Recorder {
            name: "inferlint-recorder".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        argv: opts.argv.clone(),
        mode: if opts.serve.is_some() {
            Mode::Serve
        } else {
            Mode::Attach
        },
        serve: opts.serve.as_ref().map(|command| Serve {
            command: command.clone(),
            argv: serve_argv.unwrap_or_default().to_vec(),
            ..Serve::default()
        }),
        interval_s: opts.interval,
        probe: !opts.no_probe,
        load: Load {
            argv_given: opts.load.clone(),
            ..Load::default()
        },
        requested: Requested {
            flag: opts.requested,
            from_load: crate::load::requested(&opts.load),
        },
        title: opts.title.clone(),
        started_wall: clock::wall(),
        outcome: Some(Outcome {
            state: State::Running,
            stage: None,
            problem: None,
        }),
        ..Manifest::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_folders() {
        let d = std::env::temp_dir().join(format!("rec-refuse-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        assert_eq!(holds_run_files(&d), None);
        std::fs::write(d.join("notes.txt"), "").unwrap();
        std::fs::write(d.join("serve.sh"), "").unwrap();
        assert_eq!(holds_run_files(&d), None);
        std::fs::write(d.join("x.snapshot.json"), "{}").unwrap();
        assert_eq!(holds_run_files(&d).as_deref(), Some("x.snapshot.json"));
        std::fs::remove_file(d.join("x.snapshot.json")).unwrap();
        // Another run's probe or GPU samples would be read as this run's.
        // Nor is anything the analyzer's discovery would take for part of a run: another
        // tool's result (any JSON), a snapshot or a log under a name of its own.
        for name in [
            "probe.json",
            "gpu.samples.jsonl",
            "bench-2.json",
            "results.json",
            "benchmarks.json",
            "old-result.jsonl",
            "my_server_metrics.json",
            "run-before.json",
            "server-boot.log",
            ".inferlint-reserve",
        ] {
            std::fs::write(d.join(name), "{}").unwrap();
            assert_eq!(holds_run_files(&d).as_deref(), Some(name));
            std::fs::remove_file(d.join(name)).unwrap();
        }
        let _ = std::fs::remove_dir_all(d);
    }
}

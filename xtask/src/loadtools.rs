//! The load-tools tier: the real AIPerf 0.13.0 and GuideLLM 0.8.1 in a virtual environment
//! under `target/loadtools/`, a word-level tokenizer built locally (no hub), and the
//! recorder's live load-tool tests (`recorder/tests/loadtools_live.rs`) run with them
//! against the engine simulator.
//!
//! Two pinned sets, one environment: `xtask/loadtools/aiperf.txt` (AIPerf alone, 1.2 GB)
//! and `xtask/loadtools/requirements.txt` (both tools: GuideLLM needs torch, whose PyPI
//! wheels bring CUDA: 6.5 GB in all). The first is a subset of the second at the same
//! versions, so "all" is the AIPerf set plus what GuideLLM adds.
//!
//! `cargo xtask test` (and so `ci`) installs the AIPerf set when it is missing and runs the
//! tier: AIPerf's tests run, GuideLLM's run when the environment holds it (installed with
//! `INFERLINT_LOADTOOLS=1`), and one line says which ran. `INFERLINT_LOADTOOLS=0` skips the
//! tier. `cargo xtask loadtools [--all] [--install-only]` does the same by hand.
//! `INFERLINT_LOADTOOLS_VENV` names an environment used as it is, never changed; the
//! tokenizer is still built under `target/loadtools/tok`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::real::{du, human};
use crate::tools::output;
use crate::{cargo, root, run};

/// The tools' releases on PyPI, as the tests expect them.
const GUIDELLM: &str = "0.8.1";
const AIPERF: &str = "0.13.0";
/// pip, upgraded to this before the pinned install.
const PIP: &str = "26.3";
/// The tokenizer builder, relative to the project root.
const MAKE_TOKENIZER: &str = "xtask/loadtools/make_tokenizer.py";
/// Written into the environment once an install finished: what was installed.
const STAMP: &str = ".inferlint-loadtools";

/// What an environment is asked to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Set {
    /// AIPerf alone: the default, light enough for every `cargo xtask test`.
    Aiperf,
    /// AIPerf and GuideLLM (with torch).
    All,
}

impl Set {
    /// The pinned `pip freeze` of this set, relative to the project root.
    fn pins(self) -> &'static str {
        match self {
            Set::Aiperf => "xtask/loadtools/aiperf.txt",
            Set::All => "xtask/loadtools/requirements.txt",
        }
    }

    fn size(self) -> &'static str {
        match self {
            Set::Aiperf => "about 1.2 GB and 4 minutes",
            Set::All => "about 6.5 GB and 8 minutes",
        }
    }

    /// Whether an environment holding `tools` has this set.
    fn held_by(self, tools: &Tools) -> bool {
        let aiperf = tools.aiperf.as_deref() == Some(AIPERF);
        match self {
            Set::Aiperf => aiperf,
            Set::All => aiperf && tools.guidellm.as_deref() == Some(GUIDELLM),
        }
    }
}

/// The versions of the tools an environment holds (`None`: not there, or not runnable).
#[derive(Debug, Default)]
struct Tools {
    aiperf: Option<String>,
    guidellm: Option<String>,
}

impl Tools {
    /// "AIPerf 0.13.0 and GuideLLM 0.8.1 ran", for the tier's one line.
    fn summary(&self) -> String {
        match &self.guidellm {
            Some(g) => format!("AIPerf {AIPERF} and GuideLLM {g} ran"),
            None => format!(
                "AIPerf {AIPERF} ran; GuideLLM not run: not installed, INFERLINT_LOADTOOLS=1 adds \
                 it (5.3 GB more, with torch)"
            ),
        }
    }
}

/// Where the tier keeps its environment and tokenizer.
fn home() -> PathBuf {
    crate::tools::tier_home("loadtools")
}

/// The environment the tier uses, and whether `INFERLINT_LOADTOOLS_VENV` named it.
fn venv() -> (PathBuf, bool) {
    crate::tools::tier_venv("INFERLINT_LOADTOOLS_VENV", "loadtools")
}

fn tokenizer() -> PathBuf {
    home().join("tok")
}

/// The version of one installed distribution, asked of the environment's Python.
fn version_in(venv: &Path, tool: &str) -> Option<String> {
    let python = venv.join("bin/python");
    if !python.is_file() || !venv.join("bin").join(tool).is_file() {
        return None;
    }
    output(Command::new(python).args([
        "-c",
        &format!("from importlib.metadata import version; print(version('{tool}'))"),
    ]))
    .map(|s| s.trim().to_string())
}

fn tools_in(venv: &Path) -> Tools {
    Tools {
        aiperf: version_in(venv, "aiperf"),
        guidellm: version_in(venv, "guidellm"),
    }
}

/// The environment when it holds `set` at the pins; `Err` says why not.
fn ready_venv(set: Set) -> std::result::Result<PathBuf, String> {
    let (venv, named) = venv();
    let tools = tools_in(&venv);
    if set.held_by(&tools) {
        return Ok(venv);
    }
    let held = format!(
        "aiperf {}, guidellm {}",
        tools.aiperf.as_deref().unwrap_or("missing"),
        tools.guidellm.as_deref().unwrap_or("missing")
    );
    Err(if named {
        format!("INFERLINT_LOADTOOLS_VENV={} holds {held}", venv.display())
    } else {
        format!(
            "{} holds {held} (`cargo xtask loadtools` installs it: {})",
            venv.display(),
            set.size()
        )
    })
}

/// A Python for the environment: $INFERLINT_LOADTOOLS_PYTHON, else python3.11 (the pins
/// were made with 3.11).
fn python() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("INFERLINT_LOADTOOLS_PYTHON") {
        return Ok(PathBuf::from(p));
    }
    match crate::tools::python_version("python3.11").as_deref() {
        Some("3.11") => Ok(PathBuf::from("python3.11")),
        _ => bail!(
            "the load-tools tier needs Python 3.11 (python3.11 on PATH, or \
             INFERLINT_LOADTOOLS_PYTHON)"
        ),
    }
}

/// The pip commands of an install of `set` into `venv`, in order (each idempotent: a run
/// cut short starts again where pip finds things missing).
fn pip_steps(venv: &Path, set: Set) -> Vec<Command> {
    let pip = || crate::tools::pip_install(venv);
    let mut upgrade = pip();
    upgrade.arg(format!("pip=={PIP}"));
    let mut from_pins = pip();
    from_pins
        .args(["--no-deps", "-r"])
        .arg(root().join(set.pins()));
    vec![upgrade, from_pins]
}

/// Installs the pinned `set` into `venv`.
fn install(venv: &Path, set: Set) -> Result<()> {
    let started = Instant::now();
    eprintln!(
        "== loadtools: installing {} into {}: {}",
        set.pins(),
        venv.display(),
        set.size()
    );
    if !venv.join("bin/python").is_file() {
        run(Command::new(python()?).args(["-m", "venv"]).arg(venv))?;
    }
    for mut step in pip_steps(venv, set) {
        run(&mut step)?;
    }
    let tools = tools_in(venv);
    if !set.held_by(&tools) {
        bail!("the installed tools do not run at their pins: {tools:?}");
    }
    let reqs = std::fs::read_to_string(root().join(set.pins()))
        .with_context(|| format!("cannot read {}", set.pins()))?;
    std::fs::write(venv.join(STAMP), format!("pip=={PIP}\n{reqs}"))?;
    eprintln!(
        "== loadtools: installed in {:.0} s; {} on disk",
        started.elapsed().as_secs_f64(),
        human(du(venv))
    );
    Ok(())
}

/// Builds the tokenizer with the environment's Python when it is missing.
fn ensure_tokenizer(venv: &Path) -> Result<PathBuf> {
    let dir = tokenizer();
    if dir.join("tokenizer.json").is_file() {
        return Ok(dir);
    }
    std::fs::create_dir_all(&dir)?;
    run(Command::new(venv.join("bin/python"))
        .arg(root().join(MAKE_TOKENIZER))
        .arg(&dir)
        .env("HF_HUB_OFFLINE", "1")
        .env("TRANSFORMERS_OFFLINE", "1"))?;
    Ok(dir)
}

/// The environment holding `set`, installed when it is missing.
fn ensure(set: Set) -> Result<PathBuf> {
    match ready_venv(set) {
        Ok(v) => Ok(v),
        Err(why) => {
            let (venv, named) = venv();
            if named {
                bail!("{why}");
            }
            install(&venv, set)?;
            Ok(venv)
        }
    }
}

/// The live tests (ignored in a plain `cargo test`), each with the client it drives.
const LIVE_TESTS: &[(&str, Client)] = &[
    (
        "guidellm_concurrent_run_decides_t8_and_t15",
        Client::GuideLlm,
    ),
    ("guidellm_sweep_is_judged_phase_by_phase", Client::GuideLlm),
    ("aiperf_concurrency_run_decides_t8_and_t15", Client::Aiperf),
    (
        "aiperf_concurrency_list_is_judged_phase_by_phase",
        Client::Aiperf,
    ),
    (
        "several_vllm_bench_serve_runs_are_judged_phase_by_phase",
        Client::VllmBench,
    ),
];

#[derive(Debug, Clone, Copy, PartialEq)]
enum Client {
    GuideLlm,
    Aiperf,
    VllmBench,
}

/// Runs exactly the tier's tests whose client the environment holds, and says in one line
/// which it left out and why.
fn run_tier(venv: &Path) -> Result<()> {
    let tok = ensure_tokenizer(venv)?;
    let started = Instant::now();
    // The simulator the tests serve with, beside the recorder.
    run(cargo().args(["build", "-q", "-p", "enginesim", "-p", "recorder"]))?;
    let held = tools_in(venv);
    let vllm = vllm_client();
    let runs = |c: Client| match c {
        Client::GuideLlm => held.guidellm.is_some(),
        Client::Aiperf => held.aiperf.is_some(),
        Client::VllmBench => vllm.is_some(),
    };
    let (chosen, left): (Vec<_>, Vec<_>) = LIVE_TESTS.iter().partition(|(_, c)| runs(*c));
    let mut tests = cargo();
    tests
        .args(["test", "-p", "recorder", "--test", "loadtools_live", "--"])
        .args(["--ignored", "--exact", "--test-threads=1", "--nocapture"])
        .args(chosen.iter().map(|(name, _)| *name))
        .env("INFERLINT_LOADTOOLS_VENV", venv)
        .env("INFERLINT_LOADTOOLS_TOKENIZER", &tok);
    if let Some(v) = &vllm {
        tests.env("INFERLINT_VLLM_CLIENT", v);
    }
    if !chosen.is_empty() {
        run(&mut tests)?;
    }
    let not_run: Vec<&str> = left
        .iter()
        .map(|(_, c)| match c {
            Client::GuideLlm => "GuideLLM's (not installed: cargo xtask loadtools --all)",
            Client::Aiperf => "AIPerf's (not installed)",
            Client::VllmBench => "vllm bench serve's (it comes with the real-engine tier)",
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    eprintln!(
        "== load-tools tier: {} of {} live tests passed in {:.0} s ({}){}",
        chosen.len(),
        LIVE_TESTS.len(),
        started.elapsed().as_secs_f64(),
        held.summary(),
        if not_run.is_empty() {
            String::new()
        } else {
            format!("; not run: {}", not_run.join(", "))
        }
    );
    Ok(())
}

/// The real `vllm` whose `bench serve` client the several-runs test drives: the one
/// `INFERLINT_VLLM_CLIENT` names, else the real-engine tier's when it is installed (this
/// tier never installs it: it is 6 GB).
fn vllm_client() -> Option<PathBuf> {
    if let Some(v) = std::env::var_os("INFERLINT_VLLM_CLIENT") {
        return Some(PathBuf::from(v));
    }
    let (venv, _) = crate::tools::tier_venv("INFERLINT_REAL_VENV", "real");
    let vllm = venv.join("bin/vllm");
    vllm.is_file().then_some(vllm)
}

/// `cargo xtask loadtools [--all] [--install-only]`.
pub(crate) fn loadtools(args: &[String]) -> Result<()> {
    if let Some(other) = args
        .iter()
        .find(|a| *a != "--install-only" && *a != "--all")
    {
        bail!("cargo xtask loadtools: unknown option {other} (--all, --install-only)");
    }
    let set = if args.iter().any(|a| a == "--all") {
        Set::All
    } else {
        Set::Aiperf
    };
    let venv = ensure(set)?;
    if args.iter().any(|a| a == "--install-only") {
        ensure_tokenizer(&venv).map(|_| ())
    } else {
        run_tier(&venv)
    }
}

/// What `INFERLINT_LOADTOOLS` asks of `cargo xtask test`: `0` skips the tier, `1` installs
/// both tools, anything else (or nothing) the AIPerf set.
fn asked() -> Option<Set> {
    match std::env::var("INFERLINT_LOADTOOLS").as_deref() {
        Ok("0") => None,
        Ok("1") => Some(Set::All),
        _ => Some(Set::Aiperf),
    }
}

/// The tier inside `cargo xtask test`: installs what is asked when missing and runs, or says
/// in one line why not.
pub(crate) fn in_test() -> Result<()> {
    let Some(set) = asked() else {
        eprintln!("== load-tools tier: not run: INFERLINT_LOADTOOLS=0");
        return Ok(());
    };
    // An environment that already holds more than is asked (GuideLLM too) is used whole.
    match ready_venv(set) {
        Ok(venv) => run_tier(&venv),
        Err(why) if venv().1 => {
            eprintln!("== load-tools tier: not run: {why}");
            Ok(())
        }
        Err(_) => run_tier(&ensure(set)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pinned lines of a set: `name==version`, lower-cased names.
    fn pins(set: Set) -> Vec<(String, String)> {
        let text = std::fs::read_to_string(root().join(set.pins())).unwrap();
        text.lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| {
                let (name, version) = l
                    .split_once("==")
                    .unwrap_or_else(|| panic!("{}: unpinned line {l:?}", set.pins()));
                (name.to_lowercase(), version.to_string())
            })
            .collect()
    }

    #[test]
    fn each_set_pins_its_tools_and_the_tokenizer_builder() {
        for (set, tools) in [
            (Set::Aiperf, vec![("aiperf", AIPERF)]),
            (Set::All, vec![("aiperf", AIPERF), ("guidellm", GUIDELLM)]),
        ] {
            let pins = pins(set);
            for (tool, version) in tools {
                assert!(
                    pins.contains(&(tool.into(), version.into())),
                    "{set:?} {tool}"
                );
            }
            // The tokenizer builder's imports, so both sets build the same tokenizer.
            for p in ["tokenizers", "transformers", "faker"] {
                assert!(pins.iter().any(|(n, _)| n == p), "{set:?} lacks {p}");
            }
        }
        assert!(!pins(Set::Aiperf).iter().any(|(n, _)| n == "torch"));
    }

    #[test]
    fn the_aiperf_set_is_a_subset_of_all_at_the_same_versions() {
        let all = pins(Set::All);
        for pin in pins(Set::Aiperf) {
            assert!(all.contains(&pin), "{pin:?} differs from requirements.txt");
        }
    }

    #[test]
    fn the_install_is_pip_then_the_pins_without_resolving() {
        let argv = |c: &Command| {
            std::iter::once(c.get_program())
                .chain(c.get_args())
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        };
        for set in [Set::Aiperf, Set::All] {
            let steps = pip_steps(Path::new("/v"), set);
            assert_eq!(steps.len(), 2);
            assert!(argv(&steps[0]).starts_with("/v/bin/python -m pip"));
            assert!(argv(&steps[0]).ends_with(&format!("install pip=={PIP}")));
            assert!(argv(&steps[1]).contains("install --no-deps -r"));
            assert!(argv(&steps[1]).ends_with(set.pins()));
        }
    }

    #[test]
    fn what_an_environment_holds_decides_the_set() {
        let none = tools_in(Path::new("/nonexistent"));
        assert!(!Set::Aiperf.held_by(&none));
        let aiperf = Tools {
            aiperf: Some(AIPERF.into()),
            guidellm: None,
        };
        assert!(Set::Aiperf.held_by(&aiperf) && !Set::All.held_by(&aiperf));
        assert!(aiperf.summary().contains("GuideLLM not run"));
        let both = Tools {
            aiperf: Some(AIPERF.into()),
            guidellm: Some(GUIDELLM.into()),
        };
        assert!(Set::All.held_by(&both));
        let old = Tools {
            aiperf: Some("0.12.0".into()),
            guidellm: None,
        };
        assert!(!Set::Aiperf.held_by(&old));
    }
}

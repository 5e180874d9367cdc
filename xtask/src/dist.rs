//! `cargo xtask dist`: the Python wheels, and the test that installs one as a user would.
//!
//! A wheel holds both commands (`inferlint`, `inferlint-recorder`) with the interactive
//! viewer inside, their man pages and completion scripts. maturin builds it in binary mode
//! from `packaging/` (one package whose two binaries are the two crates' own `main.rs`),
//! linked by zig against glibc 2.17 (manylinux2014), so it runs on old distributions.
//! maturin and zig come from PyPI, pinned, into `target/dist-tools/venv`; the wheels land
//! in `target/dist/`. x86_64 always; aarch64 when Rust's standard library for it is
//! installed or rustup can add it, and a plain line says so when not.
//!
//! In `cargo xtask test` only the x86_64 wheel is built, then installed and run as a user
//! would (`dist_test.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::tools::{output, pip_install};
use crate::viewer::viewer;
use crate::{cargo, root, run, target_dir};

/// maturin and zig (the `ziglang` package) from PyPI.
const MATURIN: &str = "1.16.0";
const ZIGLANG: &str = "0.15.2";
/// The newest glibc symbol version a manylinux2014 binary may need.
pub(crate) const GLIBC_MAX: (u32, u32) = (2, 17);
/// The platforms a wheel is built for: Rust's target, and the wheel tag's machine name.
const TARGETS: [(&str, &str); 2] = [
    ("x86_64-unknown-linux-gnu", "x86_64"),
    ("aarch64-unknown-linux-gnu", "aarch64"),
];
/// The workspace's version, which the wheel carries.
pub(crate) const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Where the wheels land.
fn out_dir() -> PathBuf {
    target_dir().join("dist")
}

/// `cargo xtask dist`: every wheel this machine can build, checked. `--test`: only the
/// step of `cargo xtask test` (the x86_64 wheel, installed and run; the viewer built only
/// when missing).
pub(crate) fn dist(args: &[String]) -> Result<()> {
    match args {
        [] => {}
        [t] if t == "--test" => {
            if !root().join("www/dist/report.html").is_file() {
                viewer()?;
            }
            return in_test().map(|_| ());
        }
        _ => bail!("usage: cargo xtask dist [--test]"),
    }
    viewer()?;
    let tools = ensure_tools()?;
    write_wheel_data()?;
    let mut built = Vec::new();
    let mut missing = Vec::new();
    for (triple, arch) in TARGETS {
        if let Err(why) = ensure_target(triple) {
            missing.push(format!("{arch}: not built: {why}"));
            continue;
        }
        let wheel = build_wheel(&tools, triple, arch)?;
        check_wheel(&wheel, arch)?;
        built.push(wheel);
    }
    for w in &built {
        let size = std::fs::metadata(w)?.len();
        eprintln!(
            "== dist: {} ({:.1} MB)",
            w.display(),
            size as f64 / 1_000_000.0
        );
    }
    for m in &missing {
        eprintln!("== dist: {m}");
    }
    Ok(())
}

/// The install test of `cargo xtask test`: the x86_64 wheel built (the viewer already is),
/// installed into a fresh venv, and its commands run. Returns the folder of the release
/// binaries it built, for the steps after it to use instead of building their own.
pub(crate) fn in_test() -> Result<PathBuf> {
    let t0 = Instant::now();
    let tools = ensure_tools()?;
    write_wheel_data()?;
    let (triple, arch) = TARGETS[0];
    let wheel = build_wheel(&tools, triple, arch)?;
    check_wheel(&wheel, arch)?;
    let built = t0.elapsed().as_secs_f64();
    crate::dist_test::installed_test(&wheel)?;
    eprintln!(
        "== dist: {} installed and passed in {:.0} s ({:.0} s of it building the wheel)",
        wheel.file_name().unwrap_or_default().to_string_lossy(),
        t0.elapsed().as_secs_f64(),
        built
    );
    Ok(target_dir().join(triple).join("release"))
}

/// The pinned maturin and zig in their venv, installed when missing; returns the venv.
fn ensure_tools() -> Result<PathBuf> {
    let venv = crate::tools::tier_home("dist-tools").join("venv");
    let has = |pkg: &str, version: &str| {
        output(Command::new(venv.join("bin/python")).args([
            "-c",
            &format!("from importlib.metadata import version; print(version('{pkg}'))"),
        ]))
        .is_some_and(|v| v.trim() == version)
    };
    if has("maturin", MATURIN) && has("ziglang", ZIGLANG) {
        return Ok(venv);
    }
    eprintln!(
        "== dist: installing maturin {MATURIN} and zig {ZIGLANG} from PyPI into {}",
        venv.display()
    );
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    run(pip_install(&venv).args([
        "-q",
        &format!("maturin=={MATURIN}"),
        &format!("ziglang=={ZIGLANG}"),
    ]))?;
    Ok(venv)
}

/// Whether Rust's standard library for `triple` is here, adding it with rustup if not.
fn ensure_target(triple: &str) -> Result<(), String> {
    let installed = output(Command::new("rustup").args(["target", "list", "--installed"]))
        .ok_or("rustup is not available to list the installed targets")?;
    if installed.lines().any(|l| l.trim() == triple) {
        return Ok(());
    }
    let added = Command::new("rustup")
        .args(["target", "add", triple])
        .status()
        .is_ok_and(|s| s.success());
    if added {
        Ok(())
    } else {
        Err(format!(
            "Rust's standard library for {triple} is not installed and `rustup target add \
             {triple}` failed on this machine"
        ))
    }
}

/// The man pages and completion scripts, from the commands themselves (a debug build,
/// which `cargo test` has made already), into the wheel's data folder: pip puts
/// `data/share/...` under the environment's `share/`, where pipx finds the man pages.
fn write_wheel_data() -> Result<()> {
    run(cargo().args(["build", "-q", "-p", "inferlint", "-p", "recorder"]))?;
    let data = root().join("packaging/wheel-data");
    let _ = std::fs::remove_dir_all(&data);
    let share = data.join("data/share");
    for name in ["inferlint", "inferlint-recorder"] {
        let exe = target_dir().join("debug").join(name);
        run(Command::new(&exe).arg("man").arg(share.join("man/man1")))?;
        for (shell, path) in [
            ("bash", format!("bash-completion/completions/{name}")),
            ("zsh", format!("zsh/site-functions/_{name}")),
            ("fish", format!("fish/vendor_completions.d/{name}.fish")),
        ] {
            let script = output(Command::new(&exe).args(["completions", shell]))
                .with_context(|| format!("{name} completions {shell} failed"))?;
            let file = share.join(path);
            std::fs::create_dir_all(file.parent().context("a path with a folder")?)?;
            std::fs::write(file, script)?;
        }
    }
    Ok(())
}

/// Builds the wheel for one platform into `target/dist/`; returns its path.
fn build_wheel(tools: &Path, triple: &str, arch: &str) -> Result<PathBuf> {
    let out = out_dir();
    std::fs::create_dir_all(&out)?;
    let is_ours = |p: &Path| {
        let n = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        n.starts_with("inferlint-") && n.ends_with(&format!("_{arch}.whl"))
    };
    // The wheel of this platform is found by name after the build: none may be left over.
    for e in std::fs::read_dir(&out)?.flatten() {
        if is_ours(&e.path()) {
            std::fs::remove_file(e.path())?;
        }
    }
    // maturin finds zig as `python3 -m ziglang`: the venv's python first on PATH.
    let path = std::env::join_paths(
        std::iter::once(tools.join("bin")).chain(
            std::env::var_os("PATH")
                .iter()
                .flat_map(std::env::split_paths),
        ),
    )?;
    run(Command::new(tools.join("bin/maturin"))
        .args(["build", "--release", "--zig", "--target", triple])
        .arg("--manifest-path")
        .arg(root().join("packaging/Cargo.toml"))
        .arg("--out")
        .arg(&out)
        .env("PATH", path))?;
    let wheels: Vec<PathBuf> = std::fs::read_dir(&out)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| is_ours(p))
        .collect();
    match wheels.as_slice() {
        [one] => Ok(one.clone()),
        _ => bail!(
            "maturin left {} wheels for {arch} in {}",
            wheels.len(),
            out.display()
        ),
    }
}

/// The wheel holds both commands, built for `arch`, needing no glibc newer than 2.17, and
/// their man pages.
fn check_wheel(wheel: &Path, arch: &str) -> Result<()> {
    let name = wheel
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let want = format!("inferlint-{VERSION}-");
    if !name.starts_with(&want) || !name.contains(&format!("manylinux_2_17_{arch}")) {
        bail!("{name}: expected {want}…manylinux_2_17_{arch}…");
    }
    let dir = target_dir().join(format!("dist-check-{arch}"));
    let _ = std::fs::remove_dir_all(&dir);
    run(Command::new("python3")
        .args(["-m", "zipfile", "-e"])
        .arg(wheel)
        .arg(&dir))?;
    let data = dir.join(format!("inferlint-{VERSION}.data"));
    for exe in ["inferlint", "inferlint-recorder"] {
        let bin = data.join("scripts").join(exe);
        let needed = glibc_needed(&bin)?;
        if needed > GLIBC_MAX {
            bail!(
                "{name}: {exe} needs GLIBC_{}.{}, newer than manylinux2014's {}.{}",
                needed.0,
                needed.1,
                GLIBC_MAX.0,
                GLIBC_MAX.1
            );
        }
        let machine = readelf(&["-h"], &bin)?;
        let expect = if arch == "x86_64" {
            "X86-64"
        } else {
            "AArch64"
        };
        if !machine.contains(expect) {
            bail!("{name}: {exe} is not an {arch} binary");
        }
        let page = data.join(format!("data/share/man/man1/{exe}.1"));
        if !page.is_file() {
            bail!("{name}: no man page {}", page.display());
        }
        eprintln!(
            "== dist: {name}: {exe} needs glibc {}.{} at most",
            needed.0, needed.1
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn readelf(args: &[&str], bin: &Path) -> Result<String> {
    output(Command::new("readelf").args(args).arg("-W").arg(bin))
        .with_context(|| format!("readelf {} failed (binutils missing?)", bin.display()))
}

/// The newest `GLIBC_x.y` symbol version a binary needs (its version requirements, which
/// the loader checks at start).
pub(crate) fn glibc_needed(bin: &Path) -> Result<(u32, u32)> {
    let text = readelf(&["-V"], bin)?;
    newest_glibc(&text).with_context(|| {
        format!(
            "{} names no GLIBC symbol version: not a dynamically linked glibc binary",
            bin.display()
        )
    })
}

/// The newest `GLIBC_x.y` named in readelf's text.
fn newest_glibc(text: &str) -> Option<(u32, u32)> {
    text.split(|c: char| c.is_whitespace() || c == ':')
        .filter_map(|w| w.strip_prefix("GLIBC_"))
        .filter_map(|v| {
            let mut parts = v.split('.').map(|p| p.parse::<u32>().ok());
            Some((parts.next()??, parts.next()??))
        })
        .max()
}

#[cfg(test)]
mod tests {
    use super::newest_glibc;

    #[test]
    fn the_newest_glibc_version_is_found() {
        let text = "  0x0010:   Name: GLIBC_2.2.5  Flags: none  Version: 4\n\
                    0x0020:   Name: GLIBC_2.17  Flags: none\n\
                    0x0030:   Name: GLIBC_2.3.4  Flags: none\n";
        assert_eq!(newest_glibc(text), Some((2, 17)));
        assert_eq!(newest_glibc("GLIBC_2.34 GLIBC_2.9"), Some((2, 34)));
        assert_eq!(newest_glibc("no versions here"), None);
    }
}

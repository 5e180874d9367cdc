//! A fault case's recording in a PID namespace of its own (and a mount namespace, for a
//! small tmpfs as the run folder), where this machine lets a test make one (`unshare`, as
//! root): whatever the case leaves behind dies with the namespace, and is counted before
//! that. Elsewhere the same steps run without the namespace, and say so once on stderr.
//!
//! The namespace's first process is a small shell (its init), not the recorder: the
//! recorder is its child, as under a terminal, and after the recorder exits the shell
//! writes its exit status and waits until the test has looked at what is left.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::OnceLock;

use super::{alive, wait_until, World, RECORDER};

/// The namespace's init: an optional tmpfs over the run folder, the recorder with the
/// test's scope, its exit status into a file, a copy of a tmpfs folder beside it (the test
/// reads from outside the namespace), then a wait on stdin.
const INIT: &str = r#"
set -u
if [ -n "$FAULT_TMPFS" ]; then
  mkdir -p "$FAULT_DIR" && mount -t tmpfs -o "size=$FAULT_TMPFS" tmpfs "$FAULT_DIR" || exit 97
fi
INFERLINT_RECORDER_SCOPE="$FAULT_SCOPE" "$@" &
wait $!
echo $? > "$FAULT_STATUS.part"
if [ -n "$FAULT_TMPFS" ]; then cp -a "$FAULT_DIR" "$FAULT_DIR.kept"; fi
mv "$FAULT_STATUS.part" "$FAULT_STATUS"
read -r _ || true
"#;

/// Whether `unshare` makes a PID and mount namespace here (asked once).
pub fn namespaces() -> bool {
    static ABLE: OnceLock<bool> = OnceLock::new();
    *ABLE.get_or_init(|| {
        let ok = Command::new("unshare")
            .args(["--pid", "--fork", "--mount-proc", "true"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!(
                "fault trial: no PID namespace here (unshare --pid --fork --mount-proc failed): \
                 each case runs among the test's own processes"
            );
        }
        ok
    })
}

/// A recording under way in its namespace.
pub struct Isolated {
    /// `unshare` (or the shell itself, without a namespace).
    outer: Child,
    stdin: Option<ChildStdin>,
    status_file: PathBuf,
    output: Option<std::thread::JoinHandle<(Vec<u8>, Vec<u8>)>>,
    /// The run folder as the test reads it (a tmpfs folder's copy, once finished).
    pub run: PathBuf,
    tmpfs: bool,
}

/// How a recording ended: its exit status (128 + N for a signal, as a shell says it) and
/// what it printed.
pub struct Ended {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Ended {
    /// The first line `inferlint analyze` printed after the recorder's steps: what the
    /// terminal says first about the run.
    pub fn first_verdict_line(&self) -> &str {
        first_verdict_line(&self.stdout)
    }
}

/// The first line of an analysis in `stdout`, after the recorder's last step line.
pub fn first_verdict_line(stdout: &str) -> &str {
    stdout
        .lines()
        .find(|l| l.starts_with("RUN BROKE") || l.starts_with('['))
        .unwrap_or("")
}

impl Isolated {
    /// Starts `inferlint-recorder ARGS` in `w`, its run folder `w.dir/run` (a tmpfs of
    /// `tmpfs` bytes, e.g. "100k", when given: then only in a namespace).
    pub fn record(w: &World, args: &[String], tmpfs: Option<&str>) -> Isolated {
        Isolated::record_with(w, args, tmpfs, &[])
    }

    /// As [`Isolated::record`], with environment variables for the recorder (and so for
    /// the server and the load it starts).
    pub fn record_with(
        w: &World,
        args: &[String],
        tmpfs: Option<&str>,
        env: &[(&str, &str)],
    ) -> Isolated {
        let run = w.dir.join("run");
        let status_file = w.dir.join("recorder.status");
        let mut c = if namespaces() {
            let mut c = w.cmd("unshare");
            c.args([
                "--pid",
                "--fork",
                "--mount-proc",
                "--",
                "sh",
                "-c",
                INIT,
                "sh",
            ]);
            c
        } else {
            assert!(tmpfs.is_none(), "a tmpfs needs a mount namespace");
            let mut c = w.cmd("sh");
            c.args(["-c", INIT, "sh"]);
            c
        };
        c.arg(RECORDER)
            .args(args)
            // The scope marks the run's processes only, not the harness around them.
            .env_remove("INFERLINT_RECORDER_SCOPE")
            .env("FAULT_SCOPE", &w.scope)
            .env("FAULT_STATUS", &status_file)
            .env("FAULT_DIR", &run)
            .env("FAULT_TMPFS", tmpfs.unwrap_or(""))
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut outer = c.spawn().expect("start the case");
        let (mut out, mut err) = (outer.stdout.take().unwrap(), outer.stderr.take().unwrap());
        let output = std::thread::spawn(move || {
            let errors = std::thread::spawn(move || {
                let mut b = Vec::new();
                let _ = err.read_to_end(&mut b);
                b
            });
            let mut b = Vec::new();
            let _ = out.read_to_end(&mut b);
            (b, errors.join().unwrap_or_default())
        });
        Isolated {
            stdin: outer.stdin.take(),
            outer,
            status_file,
            output: Some(output),
            run,
            tmpfs: tmpfs.is_some(),
        }
    }

    /// The recorder's PID as this test sees it (once it has started).
    pub fn recorder_pid(&self, w: &World) -> i32 {
        let mut found = None;
        let seen = wait_until(30, || {
            found = recorder_pids(w).into_iter().find(|&p| !is_guard(p));
            found.is_some()
        });
        assert!(seen, "the recorder did not start");
        found.unwrap()
    }

    /// The guard the recorder forked for its server (`recorder/src/guard.rs`).
    pub fn guard_pid(&self, w: &World) -> i32 {
        let mut found = None;
        let seen = wait_until(30, || {
            found = recorder_pids(w).into_iter().find(|&p| is_guard(p));
            found.is_some()
        });
        assert!(seen, "no guard was forked");
        found.unwrap()
    }

    /// Waits (at most `secs`) for the recorder to exit; its exit status. The namespace
    /// still lives: what the run left can be looked at.
    pub fn wait_recorder(&mut self, secs: u64) -> i32 {
        let done = wait_until(secs, || {
            self.status_file.is_file() || matches!(self.outer.try_wait(), Ok(Some(_)))
        });
        assert!(done, "the recorder did not finish in {secs} s");
        let status = std::fs::read_to_string(&self.status_file).unwrap_or_else(|_| {
            panic!(
                "the case ended before the recorder did: {:?}",
                self.outer.try_wait()
            )
        });
        if self.tmpfs {
            self.run = self.run.with_file_name("run.kept");
        }
        status.trim().parse().expect("an exit status")
    }

    /// A command inside the namespace (`nsenter` into its PID and mount namespaces), so it
    /// sees the run's processes as the recorder saw them.
    pub fn inside(&self, w: &World, prog: &str) -> Command {
        if !namespaces() {
            return w.cmd(prog);
        }
        let init = children(self.outer.id() as i32)
            .first()
            .copied()
            .expect("the namespace's init");
        let mut c = w.cmd("nsenter");
        c.args([
            "--target",
            &init.to_string(),
            "--pid",
            "--mount",
            "--",
            prog,
        ]);
        c
    }

    /// Ends the case: the namespace's init exits (and with it whatever is left in the
    /// namespace); the recorder's exit status and output.
    pub fn finish(mut self, code: i32) -> Ended {
        drop(self.stdin.take());
        let ended: Option<ExitStatus> = (0..600).find_map(|_| {
            let st = self.outer.try_wait().ok().flatten();
            if st.is_none() {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            st
        });
        if ended.is_none() {
            let _ = self.outer.kill();
        }
        let (out, err) = self.output.take().unwrap().join().unwrap_or_default();
        Ended {
            code,
            stdout: String::from_utf8_lossy(&out).into_owned(),
            stderr: String::from_utf8_lossy(&err).into_owned(),
        }
    }
}

impl Drop for Isolated {
    fn drop(&mut self) {
        drop(self.stdin.take());
        if matches!(self.outer.try_wait(), Ok(None)) {
            let _ = self.outer.kill();
            let _ = self.outer.wait();
        }
    }
}

/// The case's processes running the recorder's program: the recorder and its guard.
fn recorder_pids(w: &World) -> Vec<i32> {
    w.scoped_pids()
        .into_iter()
        .filter(|p| {
            std::fs::read_link(format!("/proc/{p}/exe")).is_ok_and(|e| e == Path::new(RECORDER))
        })
        .collect()
}

fn is_guard(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .is_ok_and(|c| c.trim_end() == "inferlint-guard")
}

/// The PID this test sees for the run's process the recorder knows as `pid` (the
/// manifest's PIDs are the namespace's own).
pub fn host_pid(w: &World, pid: i32) -> i32 {
    if !namespaces() {
        return pid;
    }
    w.scoped_pids()
        .into_iter()
        .find(|p| {
            let status = std::fs::read_to_string(format!("/proc/{p}/status")).unwrap_or_default();
            status
                .lines()
                .find_map(|l| l.strip_prefix("NSpid:"))
                .and_then(|ids| ids.split_whitespace().last())
                .is_some_and(|inner| inner == pid.to_string())
        })
        .unwrap_or_else(|| panic!("no process of the run is {pid} in its namespace"))
}

/// The live children of `pid`.
fn children(pid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
        let ppid = stat
            .rfind(')')
            .and_then(|i| stat[i + 2..].split_whitespace().nth(1))
            .and_then(|s| s.parse::<i32>().ok());
        if ppid == Some(pid) && alive(p) {
            out.push(p);
        }
    }
    out
}

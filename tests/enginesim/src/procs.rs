//! The engines' process trees. A server re-executes this binary for each child with a
//! chosen argv[0] (`VLLM::EngineCore`, `sglang::scheduler`, `prte`, `python -m
//! mpi4py.futures.server`) and the child's job in `INFERLINT_SIM_ROLE`. The child that holds
//! the card registers its memory with `gpu`, says "ready" on an inherited pipe, then waits
//! for a signal. vLLM's engine child outlives a SIGKILLed parent, as the real one does.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};

use serde_json::Value;

pub const ROLE_ENV: &str = "INFERLINT_SIM_ROLE";
const CONFIG_ENV: &str = "INFERLINT_SIM_ROLE_CONFIG";
const READY_ENV: &str = "INFERLINT_SIM_READY_FD";

pub struct Spawned {
    pub child: Child,
    ready_fd: Option<i32>,
}

impl Spawned {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Block until the child reports ready; false if it died first.
    pub fn wait_ready(&mut self) -> bool {
        let Some(fd) = self.ready_fd.take() else {
            return true;
        };
        // SAFETY: fd is the read end we created and own; File closes it.
        let mut f = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd) };
        let mut buf = String::new();
        let _ = f.read_to_string(&mut buf);
        buf.starts_with("ready")
    }
}

/// Spawn a child of this binary under `arg0` (+ `extra` arguments) in role `role`.
/// `parent_death`: the child gets SIGTERM when the server dies (SGLang, TensorRT-LLM
/// workers); vLLM's engine core does not, which is why it is left behind by a SIGKILL.
pub fn spawn(
    role: &str,
    arg0: &str,
    extra: &[&str],
    config: &Value,
    want_ready: bool,
    parent_death: bool,
) -> anyhow::Result<Spawned> {
    let exe = std::env::current_exe()?;
    let mut cmd = Command::new(exe);
    cmd.arg0(arg0)
        .args(extra)
        .env(ROLE_ENV, role)
        .env(CONFIG_ENV, config.to_string());
    let mut fds = [-1i32; 2];
    if want_ready {
        // SAFETY: plain pipe2 into a local array.
        let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
        anyhow::ensure!(rc == 0, "pipe2 failed");
        cmd.env(READY_ENV, fds[1].to_string());
    }
    let wfd = fds[1];
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if wfd >= 0 {
                libc::fcntl(wfd, libc::F_SETFD, 0);
            }
            if parent_death {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong);
            }
            Ok(())
        });
    }
    let child = cmd.spawn()?;
    if wfd >= 0 {
        // SAFETY: closing our copy of the write end so EOF arrives when the child dies.
        unsafe { libc::close(wfd) };
    }
    Ok(Spawned {
        child,
        ready_fd: if want_ready { Some(fds[0]) } else { None },
    })
}

pub fn role_config() -> Value {
    std::env::var(CONFIG_ENV)
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or(Value::Null)
}

/// Keeps this process's own ready pipe out of the children it spawns: the parent reads
/// the pipe to its end, which a grandchild holding a copy would delay until it exits.
pub fn keep_ready_fd_private() {
    if let Some(fd) = std::env::var(READY_ENV)
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
    {
        // SAFETY: setting a flag on an inherited descriptor this process owns.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
}

/// Tell the parent we are ready (closing the pipe).
pub fn signal_ready() {
    if let Some(fd) = std::env::var(READY_ENV)
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
    {
        // SAFETY: the fd was inherited for exactly this write.
        unsafe {
            libc::write(fd, b"ready\n".as_ptr() as *const libc::c_void, 6);
            libc::close(fd);
        }
    }
}

/// Set the kernel's name for this process (comm, 15 bytes), as setproctitle does.
pub fn set_comm(name: &str) {
    let mut b: Vec<u8> = name.bytes().take(15).collect();
    b.push(0);
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes.
    unsafe { libc::prctl(libc::PR_SET_NAME, b.as_ptr() as libc::c_ulong, 0, 0, 0) };
}

/// Block the usual stop signals and wait for one; returns its number. SIGINT is ignored
/// (the server in front handles Ctrl-C and stops its children with SIGTERM).
pub fn wait_signal() -> i32 {
    // SAFETY: signal-mask manipulation on this thread, then sigwait.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGUSR1);
        libc::sigaddset(&mut set, libc::SIGHUP);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        let mut sig = 0;
        libc::sigwait(&set, &mut sig);
        sig
    }
}

/// Waits up to `limit` for a process to end (gone, or a zombie not yet reaped).
pub fn wait_gone(pid: u32, limit: std::time::Duration) {
    let end = std::time::Instant::now() + limit;
    while std::time::Instant::now() < end {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let zombie = stat
            .rfind(')')
            .is_some_and(|i| stat[i + 1..].trim_start().starts_with('Z'));
        if stat.is_empty() || zombie {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

pub fn kill(pid: u32, sig: i32) {
    // SAFETY: sending a signal to a pid we spawned.
    unsafe { libc::kill(pid as i32, sig) };
}

/// A child role's whole life: register memory, print its lines, wait for the stop.
pub fn child_main(role: &str) -> i32 {
    let cfg = role_config();
    let comm = cfg
        .get("comm")
        .and_then(Value::as_str)
        .unwrap_or(role)
        .to_string();
    set_comm(&comm);
    let mib = cfg.get("gpu_mib").and_then(Value::as_u64).unwrap_or(0);
    match role {
        "vllm-engine-core" => crate::vllm::engine_core_main(&cfg),
        "vllm-worker" => crate::vllm032::worker_main(&cfg),
        _ => {
            if mib > 0 {
                let _ = crate::gpu::register(mib);
            }
            signal_ready();
            let _ = wait_signal();
            crate::gpu::unregister();
            0
        }
    }
}

//! Writing the boot log: whole lines to stdout, stamped the way each engine stamps them.
//! Engine children inherit the same stdout, so every line goes out in one write.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// vLLM 0.32 tags only its logger's lines with `(Proc pid=N)`: uvicorn's lines and
/// tracebacks go out bare (0.28 and 0.30 tagged every line).
static BARE_NON_LOGGER: AtomicBool = AtomicBool::new(false);

/// Lines that do not come from vLLM's logger go out without the process tag.
pub fn set_bare_non_logger(bare: bool) {
    BARE_NON_LOGGER.store(bare, Ordering::SeqCst);
}

/// Local time broken down (year, month, day, hour, minute, second).
pub fn local_now() -> (i32, u32, u32, u32, u32, u32) {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let t = secs as libc::time_t;
    // SAFETY: localtime_r only writes into the tm we own.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    unsafe { libc::localtime_r(&t, &mut tm) };
    (
        tm.tm_year + 1900,
        (tm.tm_mon + 1) as u32,
        tm.tm_mday as u32,
        tm.tm_hour as u32,
        tm.tm_min as u32,
        tm.tm_sec as u32,
    )
}

pub fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

pub fn raw(line: &str) {
    let mut buf = Vec::with_capacity(line.len() + 1);
    buf.extend_from_slice(line.as_bytes());
    buf.push(b'\n');
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(&buf);
    let _ = out.flush();
}

/// vLLM: `(APIServer pid=727) INFO 09-30 20:10:07 [api_utils.py:286] msg`.
pub fn vllm(proc_name: &str, pid: u32, level: &str, src: &str, msg: &str) {
    let (_, mo, d, h, mi, s) = local_now();
    raw(&format!(
        "({proc_name} pid={pid}) {level} {mo:02}-{d:02} {h:02}:{mi:02}:{s:02} [{src}] {msg}"
    ));
}

/// uvicorn's own lines (`INFO:     Application startup complete.`), under vLLM's tag
/// (bare from 0.32 on).
pub fn vllm_uvicorn(pid: u32, msg: &str) {
    vllm_raw("APIServer", pid, &format!("INFO:     {msg}"));
}

/// A line of a vLLM process that is not a logger record (a traceback line, uvicorn): tagged
/// with the process before 0.32, bare from 0.32 on.
pub fn vllm_raw(proc_name: &str, pid: u32, line: &str) {
    if BARE_NON_LOGGER.load(Ordering::SeqCst) {
        raw(line);
    } else {
        raw(&format!("({proc_name} pid={pid}) {line}"));
    }
}

/// SGLang: `[2026-10-01 01:40:36] msg`.
pub fn sglang(msg: &str) {
    let (y, mo, d, h, mi, s) = local_now();
    raw(&format!("[{y}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}] {msg}"));
}

/// TensorRT-LLM: `[10/01/2026-01:54:53] [TRT-LLM] [I] msg`.
pub fn trt(level: char, msg: &str) {
    let (y, mo, d, h, mi, s) = local_now();
    raw(&format!(
        "[{mo:02}/{d:02}/{y}-{h:02}:{mi:02}:{s:02}] [TRT-LLM] [{level}] {msg}"
    ));
}

/// Which engine's format the HTTP layer logs its access lines in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Vllm(u32),
    Sglang,
    Trt,
}

pub fn access(style: Style, peer: &str, method: &str, path: &str, status: u16) {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    };
    let msg = format!("{peer} - \"{method} {path} HTTP/1.1\" {status} {reason}");
    match style {
        Style::Vllm(pid) => vllm_uvicorn(pid, &msg),
        Style::Sglang => sglang(&format!("INFO:     {msg}")),
        Style::Trt => raw(&format!("INFO:     {msg}")),
    }
}

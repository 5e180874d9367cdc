//! Helpers for the simulator's tests: start a personality on a free loopback port in its
//! own process group, talk plain HTTP/1.1 to it, and kill the whole group on drop.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_inferlint-enginesim");

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("enginesim-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A folder with links named like the engines, pointing at the simulator.
pub fn bin_dir(dir: &Path) -> PathBuf {
    let b = dir.join("bin");
    let st = Command::new(BIN)
        .arg("install")
        .arg(&b)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
    b
}

pub struct Sim {
    pub child: Child,
    pub port: u16,
    pub dir: PathBuf,
    pub log: PathBuf,
}

impl Sim {
    /// `prog` is one of vllm, sglang, trtllm-serve; args follow it.
    pub fn start(name: &str, prog: &str, args: &[&str], port: u16) -> Sim {
        Sim::start_with(name, prog, args, port, &[])
    }

    /// As [`Sim::start`], with these environment variables set.
    pub fn start_with(
        name: &str,
        prog: &str,
        args: &[&str],
        port: u16,
        env: &[(&str, &str)],
    ) -> Sim {
        let dir = tmpdir(name);
        let bin = bin_dir(&dir);
        let log = dir.join("boot.log");
        let f = std::fs::File::create(&log).unwrap();
        let child = Command::new(bin.join(prog))
            .args(args)
            .env("INFERLINT_SIM_GPU_STATE", dir.join("gpu"))
            .envs(env.iter().copied())
            .stdout(f.try_clone().unwrap())
            .stderr(f)
            .stdin(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        Sim {
            child,
            port,
            dir,
            log,
        }
    }

    pub fn log_text(&self) -> String {
        String::from_utf8_lossy(&std::fs::read(&self.log).unwrap_or_default()).to_string()
    }

    pub fn wait_ready(&mut self, path_ok: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(Some(st)) = self.child.try_wait() {
                panic!("server exited early ({st}):\n{}", self.log_text());
            }
            if self.log_text().contains("Application startup complete") {
                if let Ok((200, _)) = get(self.port, path_ok) {
                    return;
                }
            }
            assert!(
                Instant::now() < deadline,
                "not ready in 30 s:\n{}",
                self.log_text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn nvidia_smi_used(&self) -> u64 {
        let out = Command::new(self.dir.join("bin/nvidia-smi"))
            .args(["--query-gpu=memory.used", "--format=csv,noheader,nounits"])
            .env("INFERLINT_SIM_GPU_STATE", self.dir.join("gpu"))
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
    }

    pub fn pgid(&self) -> i32 {
        self.child.id() as i32
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        // SAFETY: killing the process group we created for this test.
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn request(port: u16, raw: &str) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    s.write_all(raw.as_bytes())?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf)?;
    let text = String::from_utf8_lossy(&buf).to_string();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|x| x.1.to_string())
        .unwrap_or_default();
    Ok((status, body))
}

pub fn get(port: u16, path: &str) -> std::io::Result<(u16, String)> {
    request(
        port,
        &format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"),
    )
}

pub fn post(port: u16, path: &str, json: &str) -> std::io::Result<(u16, String)> {
    request(
        port,
        &format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{json}",
            json.len()
        ),
    )
}

/// A reply with its headers (names lower-cased) and its body, de-chunked.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    /// The `data:` payloads of a server-sent event stream, `[DONE]` included.
    pub fn events(&self) -> Vec<String> {
        self.body
            .split("\n\n")
            .filter_map(|e| e.trim().strip_prefix("data: "))
            .map(str::to_string)
            .collect()
    }
}

fn dechunk(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rest = raw;
    loop {
        let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size =
            usize::from_str_radix(String::from_utf8_lossy(&rest[..eol]).trim(), 16).unwrap_or(0);
        if size == 0 {
            return out;
        }
        let start = eol + 2;
        out.extend_from_slice(&rest[start..(start + size).min(rest.len())]);
        rest = &rest[(start + size + 2).min(rest.len())..];
    }
}

/// Send one request (`Connection: close`) and read the whole reply.
pub fn call(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if !body.is_empty() {
        req.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).unwrap();
    let split = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a header block");
    let head = String::from_utf8_lossy(&buf[..split]).to_string();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let raw = &buf[split + 4..];
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked { dechunk(raw) } else { raw.to_vec() };
    Reply {
        status,
        headers,
        body: String::from_utf8_lossy(&body).to_string(),
    }
}

pub fn metrics(port: u16, path: &str) -> analyzer::prom::Exposition {
    let (st, body) = get(port, path).unwrap();
    assert_eq!(st, 200, "{path}: {body}");
    analyzer::prom::Exposition::parse(&body)
        .unwrap_or_else(|e| panic!("bad prometheus text: {e:?}\n{body}"))
}

pub fn total(e: &analyzer::prom::Exposition, name: &str) -> f64 {
    e.total(name, &[])
        .unwrap_or_else(|| panic!("{name} missing"))
}

/// Children of a pid, from /proc.
pub fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
            continue;
        };
        if rest
            .split_whitespace()
            .nth(1)
            .and_then(|x| x.parse::<u32>().ok())
            == Some(pid)
        {
            out.push(p);
        }
    }
    out
}

pub fn cmdline(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap_or_default()
        .split(|b| *b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).to_string())
        .collect()
}

pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

pub fn wait_until(secs: u64, mut f: impl FnMut() -> bool) -> bool {
    let d = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < d {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    f()
}

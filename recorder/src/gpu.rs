//! The card (recorder.md §7): facts from `nvidia-smi`, and the clear-card rule T2 uses at
//! the gate and after the stop. The rule takes its readings and its clock from the caller,
//! so it is tested with fakes and run live with `nvidia-smi` and `/proc`.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use analyzer::json::{obj, Json};
use analyzer::num::{round_dp, thousands};

const FACTS: &str = "index,name,memory.total,memory.used,memory.free,driver_version";

/// One card as `nvidia-smi` lists it. `None`: not reported (`[N/A]`, empty).
#[derive(Debug, Clone, PartialEq)]
pub struct Gpu {
    pub index: i64,
    pub name: String,
    pub total_mib: Option<i64>,
    pub used_mib: Option<i64>,
    pub free_mib: Option<i64>,
    pub driver: Option<String>,
    pub compute_cap: Option<String>,
}

impl Gpu {
    pub fn family(&self) -> Option<&'static str> {
        family(self.compute_cap.as_deref()?)
    }

    pub fn to_json(&self) -> Json {
        obj([
            ("index", Json::Int(self.index)),
            ("name", Json::from(self.name.as_str())),
            ("memory_total_mib", Json::from(self.total_mib)),
            ("memory_used_mib", Json::from(self.used_mib)),
            ("memory_free_mib", Json::from(self.free_mib)),
            ("driver_version", Json::from(self.driver.clone())),
            ("compute_cap", Json::from(self.compute_cap.clone())),
            ("family", Json::from(self.family())),
        ])
    }

    /// The three lines `gpu-inspect` prints.
    pub fn lines(&self) -> [String; 3] {
        let mib = |v: Option<i64>| v.map_or("?".to_string(), |x| thousands(x as f64));
        let mut second = Vec::new();
        if let Some(f) = self.family() {
            second.push(f.to_string());
        }
        if let Some(c) = &self.compute_cap {
            second.push(format!("compute capability {c}"));
        }
        second.push(format!("driver {}", self.driver.as_deref().unwrap_or("?")));
        [
            format!("GPU {}   {}", self.index, self.name),
            format!("        {}", second.join(", ")),
            format!(
                "        memory: {} MiB total, {} MiB used, {} MiB free",
                mib(self.total_mib),
                mib(self.used_mib),
                mib(self.free_mib)
            ),
        ]
    }
}

/// Architecture family from the compute capability.
pub fn family(cap: &str) -> Option<&'static str> {
    let (major, minor) = cap.trim().split_once('.')?;
    let major: u32 = major.parse().ok()?;
    let minor: u32 = minor.parse().ok()?;
    Some(match (major, minor) {
        (6, _) => "Pascal",
        (7, 0) | (7, 2) => "Volta",
        (7, 5) => "Turing",
        (8, 9) => "Ada Lovelace",
        (8, _) => "Ampere",
        (9, _) => "Hopper",
        (10..=12, _) => "Blackwell",
        _ => return None,
    })
}

fn value(s: &str) -> Option<&str> {
    let s = s.trim();
    (!s.is_empty() && !s.starts_with('[')).then_some(s)
}

fn mib(s: &str) -> Option<i64> {
    value(s)?
        .parse::<f64>()
        .ok()
        .filter(|f| f.is_finite())
        .map(|f| f.trunc() as i64)
}

/// Parses the facts query's output; `with_cap` tells whether `compute_cap` was asked.
/// The fixed fields are at the end, so a comma inside a name survives.
pub fn parse_facts(out: &str, with_cap: bool) -> Vec<Gpu> {
    let fixed = if with_cap { 5 } else { 4 };
    out.lines()
        .filter_map(|line| {
            let parts: Vec<&str> = line.split(',').collect();
            if parts.len() < fixed + 2 {
                return None;
            }
            let index = parts[0].trim().parse::<i64>().ok()?;
            let tail = &parts[parts.len() - fixed..];
            let name = parts[1..parts.len() - fixed].join(",").trim().to_string();
            Some(Gpu {
                index,
                name,
                total_mib: mib(tail[0]),
                used_mib: mib(tail[1]),
                free_mib: mib(tail[2]),
                driver: value(tail[3]).map(str::to_string),
                compute_cap: if with_cap {
                    value(tail[4]).map(str::to_string)
                } else {
                    None
                },
            })
        })
        .collect()
}

/// `nvidia-smi` from PATH, else WSL's.
fn executable() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("nvidia-smi"))
        .find(|p| p.is_file())
        .or_else(|| {
            let wsl = PathBuf::from("/usr/lib/wsl/lib/nvidia-smi");
            wsl.is_file().then_some(wsl)
        })
}

/// Runs `nvidia-smi ARGS` with a timeout; its stdout when it exited 0.
fn run(args: &[&str], timeout: Duration) -> Option<String> {
    let exe = executable()?;
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = crate::reaper::spawn(&mut cmd).ok()?;
    let end = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let out = child.wait_with_output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The cards' facts; `None` when `nvidia-smi` is missing or fails. An old driver
/// rejecting `compute_cap` is asked again without it.
pub fn facts() -> Option<Vec<Gpu>> {
    let fmt = "--format=csv,noheader,nounits";
    let t = Duration::from_secs(30);
    if let Some(out) = run(&[&format!("--query-gpu={FACTS},compute_cap"), fmt], t) {
        return Some(parse_facts(&out, true));
    }
    run(&[&format!("--query-gpu={FACTS}"), fmt], t).map(|out| parse_facts(&out, false))
}

/// The largest `memory.used` over all cards; `None` when unreadable.
pub fn parse_used(out: &str) -> Option<i64> {
    let mut best = None;
    for line in out.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let v: i64 = line.parse().ok()?;
        best = Some(best.map_or(v, |b: i64| b.max(v)));
    }
    best
}

pub fn used_mib() -> Option<i64> {
    let out = run(
        &["--query-gpu=memory.used", "--format=csv,noheader,nounits"],
        Duration::from_secs(30),
    )?;
    parse_used(&out)
}

/// The clear-card rule's settings.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub max_used_mib: i64,
    pub consecutive: u32,
    pub interval_s: f64,
    pub timeout_s: f64,
}

impl Rule {
    pub fn new(max_used_mib: i64, consecutive: u32, timeout_s: f64) -> Rule {
        Rule {
            max_used_mib,
            consecutive,
            interval_s: 2.0,
            timeout_s,
        }
    }
}

/// One reading: elapsed seconds, MiB used (or unreadable), live server processes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    pub elapsed: f64,
    pub mib: Option<i64>,
    pub servers: usize,
}

impl Reading {
    pub fn to_json(&self) -> Json {
        Json::Arr(vec![
            Json::Float(round_dp(self.elapsed, 3)),
            Json::from(self.mib),
            Json::from(self.servers),
        ])
    }
}

/// The rule's result. `clear` is None when a signal cut it short.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub readings: Vec<Reading>,
    pub clear: Option<bool>,
    pub reason: String,
}

impl Verdict {
    pub fn readings_json(&self) -> Json {
        Json::Arr(self.readings.iter().map(Reading::to_json).collect())
    }

    /// The gate document (`gate.json`, recorder.md §9.2) for this verdict: `servers` are
    /// the live server processes at the last reading; `gpus` the card facts when known.
    pub fn gate_document(
        &self,
        rule: &Rule,
        servers: Vec<Json>,
        linux: bool,
        gpus: Option<Json>,
    ) -> Json {
        let mut pairs = vec![
            ("schema", Json::from("inferlint.gate/1")),
            ("max_used_mib", Json::Int(rule.max_used_mib)),
            ("consecutive", Json::from(i64::from(rule.consecutive))),
            ("interval_s", Json::Float(rule.interval_s)),
            ("timeout_s", Json::Float(rule.timeout_s)),
            ("readings", self.readings_json()),
            ("clear", Json::from(self.clear)),
            ("reason", Json::from(self.reason.as_str())),
            ("servers", Json::Arr(servers)),
            ("linux", Json::Bool(linux)),
        ];
        if let Some(g) = gpus {
            pairs.push(("gpus", g));
        }
        analyzer::json::obj(pairs)
    }
}

/// What the rule needs from the world: a reading, the time, a wait.
pub trait Probe {
    /// `(MiB used or unreadable, live server processes)`.
    fn read(&mut self) -> (Option<i64>, usize);
    fn elapsed(&mut self) -> f64;
    /// Waits; false when interrupted.
    fn wait(&mut self, seconds: f64) -> bool;
}

fn secs(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// Applies the clear-card rule (recorder.md §7.2).
pub fn clear_card(rule: &Rule, world: &mut dyn Probe) -> Verdict {
    let mut readings = Vec::new();
    let mut run = 0u32;
    loop {
        let (mib, servers) = world.read();
        let elapsed = world.elapsed();
        readings.push(Reading {
            elapsed,
            mib,
            servers,
        });
        let clear = servers == 0 && mib.is_some_and(|m| m <= rule.max_used_mib);
        run = if clear { run + 1 } else { 0 };
        if run >= rule.consecutive {
            return Verdict {
                readings,
                clear: Some(true),
                reason: format!("{} consecutive clear readings", rule.consecutive),
            };
        }
        if elapsed >= rule.timeout_s {
            let shown = mib.map_or("None".to_string(), |m| m.to_string());
            return Verdict {
                readings,
                clear: Some(false),
                reason: format!(
                    "not clear after {}s: last reading {shown} MiB used, {servers} server processes alive",
                    secs(rule.timeout_s)
                ),
            };
        }
        if !world.wait(rule.interval_s) {
            return Verdict {
                readings,
                clear: None,
                reason: "interrupted before the card was clear".into(),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixtures_card_and_made_up_ones() {
        let g = parse_facts(
            "0, NVIDIA GeForce RTX 4090, 24564, 0, 24138, 616.56, 8.9\n",
            true,
        );
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].family(), Some("Ada Lovelace"));
        assert_eq!(
            g[0].lines(),
            [
                "GPU 0   NVIDIA GeForce RTX 4090".to_string(),
                "        Ada Lovelace, compute capability 8.9, driver 616.56".to_string(),
                "        memory: 24,564 MiB total, 0 MiB used, 24,138 MiB free".to_string(),
            ]
        );
        let g = parse_facts(
            "1, NVIDIA A100-SXM4-40GB, [N/A], [N/A], [N/A], 550.54, 8.0\n",
            true,
        );
        assert_eq!(g[0].total_mib, None);
        assert_eq!(g[0].family(), Some("Ampere"));
        assert!(g[0].lines()[2].contains("? MiB total"));
        let g = parse_facts("2, Acme, Turbo Card, 100, 1, 99, 1.0, 9.0\n", true);
        assert_eq!(g[0].name, "Acme, Turbo Card");
        assert_eq!(g[0].family(), Some("Hopper"));
        // An old driver: no compute_cap asked, so no capability and no family.
        let g = parse_facts("0, Tesla P100, 16280, 0, 16280, 418.1\n", false);
        assert_eq!((g[0].compute_cap.clone(), g[0].family()), (None, None));
        // Malformed lines are skipped, never a panic.
        assert!(parse_facts("x, a, 1, 2, 3, 4, 5\n, , \n\n1,2", true).is_empty());
    }

    #[test]
    fn families() {
        for (c, f) in [
            ("6.1", Some("Pascal")),
            ("7.0", Some("Volta")),
            ("7.2", Some("Volta")),
            ("7.5", Some("Turing")),
            ("8.6", Some("Ampere")),
            ("8.9", Some("Ada Lovelace")),
            ("9.0", Some("Hopper")),
            ("10.0", Some("Blackwell")),
            ("12.0", Some("Blackwell")),
            ("7.1", None),
            ("5.2", None),
            ("x", None),
        ] {
            assert_eq!(family(c), f, "{c}");
        }
    }

    #[test]
    fn used_memory_lines() {
        assert_eq!(parse_used("300\n18500\n"), Some(18500));
        assert_eq!(parse_used(""), None);
        assert_eq!(parse_used("12\n[N/A]\n"), None);
    }

    struct Fake {
        mem: Vec<Option<i64>>,
        servers: Vec<usize>,
        i: usize,
        t: f64,
    }

    impl Probe for Fake {
        fn read(&mut self) -> (Option<i64>, usize) {
            let k = self.i.min(self.mem.len() - 1);
            self.i += 1;
            (self.mem[k], self.servers[k])
        }
        fn elapsed(&mut self) -> f64 {
            self.t
        }
        fn wait(&mut self, s: f64) -> bool {
            self.t += s;
            true
        }
    }

    fn fake(mem: &[Option<i64>], servers: &[usize]) -> Fake {
        Fake {
            mem: mem.to_vec(),
            servers: servers.to_vec(),
            i: 0,
            t: 0.0,
        }
    }

    #[test]
    fn clear_card_rule() {
        let rule = Rule::new(800, 2, 120.0);
        let mem = [18900, 300, 18500, 250, 240].map(Some);
        let v = clear_card(&rule, &mut fake(&mem, &[1, 0, 1, 0, 0]));
        assert_eq!(v.clear, Some(true));
        assert_eq!(v.readings.len(), 5);
        assert_eq!(v.reason, "2 consecutive clear readings");
        assert_eq!(v.readings[4].elapsed, 8.0);

        let v = clear_card(&Rule::new(800, 2, 10.0), &mut fake(&[Some(100)], &[1]));
        assert_eq!(v.clear, Some(false));
        assert_eq!(v.readings.len(), 6);
        assert_eq!(
            v.reason,
            "not clear after 10s: last reading 100 MiB used, 1 server processes alive"
        );
        let v = clear_card(&Rule::new(800, 2, 4.0), &mut fake(&[None], &[0]));
        assert_eq!(v.clear, Some(false));
        assert!(v.reason.contains("last reading None MiB used"));
        assert_eq!(v.readings[0].to_json().to_compact(), "[0.0, null, 0]");
    }
}

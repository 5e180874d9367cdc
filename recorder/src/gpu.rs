//! The card: facts from `nvidia-smi`, and the reading loop of the
//! clear-card rule. The rule itself (when a reading is clear, when to stop, the reason) is
//! T2's in the analyzer; the loop takes its readings and its clock from the caller, so it
//! is tested with fakes and run live with `nvidia-smi` and `/proc`.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use analyzer::docs::gate::{Gpu, Reading};
use analyzer::num::{round_dp, thousands};
use analyzer::rules::t02_orphaned_engine::{CardCheck, Rule};

const FACTS: &str = "index,name,memory.total,memory.used,memory.free,driver_version";

/// The three lines `gpu-inspect` prints for a card.
pub fn lines(gpu: &Gpu) -> [String; 3] {
    let mib = |v: Option<i64>| v.map_or("?".to_string(), |x| thousands(x as f64));
    let mut second = Vec::new();
    if let Some(f) = &gpu.family {
        second.push(f.clone());
    }
    if let Some(c) = &gpu.compute_cap {
        second.push(format!("compute capability {c}"));
    }
    second.push(format!(
        "driver {}",
        gpu.driver_version.as_deref().unwrap_or("?")
    ));
    [
        format!("GPU {}   {}", gpu.index, gpu.name),
        format!("        {}", second.join(", ")),
        format!(
            "        memory: {} MiB total, {} MiB used, {} MiB free",
            mib(gpu.memory_total_mib),
            mib(gpu.memory_used_mib),
            mib(gpu.memory_free_mib)
        ),
    ]
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

pub(crate) fn value(s: &str) -> Option<&str> {
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
            let compute_cap = if with_cap {
                value(tail[4]).map(str::to_string)
            } else {
                None
            };
            Some(Gpu {
                index,
                name,
                memory_total_mib: mib(tail[0]),
                memory_used_mib: mib(tail[1]),
                memory_free_mib: mib(tail[2]),
                driver_version: value(tail[3]).map(str::to_string),
                family: compute_cap.as_deref().and_then(family).map(str::to_string),
                compute_cap,
            })
        })
        .collect()
}

/// `nvidia-smi` from PATH, else WSL's.
pub(crate) fn executable() -> Option<PathBuf> {
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
pub(crate) fn run(args: &[&str], timeout: Duration) -> Option<String> {
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

/// Why the card's memory cannot be read at all, found with one call: `nvidia-smi` is
/// not installed (an AMD card, a CPU-only box, a container without the driver tools), or
/// it finds no driver or no card. `None` when it answers (or fails for another reason,
/// which the rule counts as an unreadable reading).
pub fn reader_missing() -> Option<String> {
    let Some(exe) = executable() else {
        return Some(
            "nvidia-smi is not on PATH, so no NVIDIA driver tools are installed here".into(),
        );
    };
    let out = Command::new(&exe)
        .args(["--query-gpu=memory.used", "--format=csv,noheader,nounits"])
        .stdin(Stdio::null())
        .output();
    match out {
        Err(e) => Some(format!("{} cannot be run: {e}", exe.display())),
        Ok(o) if o.status.success() => None,
        Ok(o) => {
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            no_card_said(&said).then(|| {
                format!(
                    "nvidia-smi finds no NVIDIA driver or card: {}",
                    said.lines().next().unwrap_or("").trim()
                )
            })
        }
    }
}

/// `nvidia-smi`'s words for "no driver" and "no card".
pub fn no_card_said(text: &str) -> bool {
    text.contains("couldn't communicate with the NVIDIA driver")
        || text.contains("No devices were found")
        || text.contains("NVIDIA driver is not loaded")
}

/// What the rule's loop needs from the world: a reading, the time, a wait.
pub trait CardReader {
    /// Why no reading can ever be taken (no reader at all); asked once, before the first.
    fn missing(&mut self) -> Option<String> {
        None
    }
    /// `(MiB used or unreadable, live server processes)`.
    fn read(&mut self) -> (Option<i64>, u32);
    /// Seconds since the rule started.
    fn elapsed(&mut self) -> f64;
    /// Waits; false when interrupted.
    fn wait(&mut self, seconds: f64) -> bool;
}

/// Reads the card at once, then every `interval_s`, until T2's rule decides or a
/// signal interrupts the wait (docs/tripwires.md#t2).
pub fn clear_card(rule: &Rule, reader: &mut dyn CardReader) -> CardCheck {
    let mut check = CardCheck::default();
    // No reader: "can't tell" at once, not "not clear" after the whole wait.
    if let Some(why) = reader.missing() {
        check.no_reader(&why);
        return check;
    }
    loop {
        let (used_mib, servers) = reader.read();
        let reading = Reading {
            elapsed_s: round_dp(reader.elapsed(), 3),
            used_mib,
            servers,
        };
        if check.add(rule, reading) {
            return check;
        }
        if !reader.wait(rule.interval_s) {
            check.interrupted();
            return check;
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
        assert_eq!(g[0].family.as_deref(), Some("Ada Lovelace"));
        assert_eq!(
            lines(&g[0]),
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
        assert_eq!(g[0].memory_total_mib, None);
        assert_eq!(g[0].family.as_deref(), Some("Ampere"));
        assert!(lines(&g[0])[2].contains("? MiB total"));
        let g = parse_facts("2, Acme, Turbo Card, 100, 1, 99, 1.0, 9.0\n", true);
        assert_eq!(g[0].name, "Acme, Turbo Card");
        assert_eq!(g[0].family.as_deref(), Some("Hopper"));
        // An old driver: no compute_cap asked, so no capability and no family.
        let g = parse_facts("0, Tesla P100, 16280, 0, 16280, 418.1\n", false);
        assert_eq!(
            (g[0].compute_cap.clone(), g[0].family.clone()),
            (None, None)
        );
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
        servers: Vec<u32>,
        i: usize,
        t: f64,
    }

    impl CardReader for Fake {
        fn read(&mut self) -> (Option<i64>, u32) {
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

    fn fake(mem: &[Option<i64>], servers: &[u32]) -> Fake {
        Fake {
            mem: mem.to_vec(),
            servers: servers.to_vec(),
            i: 0,
            t: 0.0,
        }
    }

    #[test]
    fn clear_card_loop() {
        let rule = Rule::new(800, 2, 120.0);
        let mem = [18900, 300, 18500, 250, 240].map(Some);
        let v = clear_card(&rule, &mut fake(&mem, &[1, 0, 1, 0, 0]));
        assert_eq!(v.clear, Some(true));
        assert_eq!(v.readings.len(), 5);
        assert_eq!(v.reason, "2 consecutive clear readings");
        assert_eq!(v.readings[4].elapsed_s, 8.0);

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
        assert_eq!(
            analyzer::docs::to_json(&v.readings[0]).to_compact(),
            "[0.0, null, 0]"
        );
    }

    struct Interrupted;
    impl CardReader for Interrupted {
        fn read(&mut self) -> (Option<i64>, u32) {
            (Some(20000), 1)
        }
        fn elapsed(&mut self) -> f64 {
            0.0
        }
        fn wait(&mut self, _: f64) -> bool {
            false
        }
    }

    struct NoReader;
    impl CardReader for NoReader {
        fn missing(&mut self) -> Option<String> {
            Some("nvidia-smi is not on PATH".into())
        }
        fn read(&mut self) -> (Option<i64>, u32) {
            unreachable!("no reading is taken without a reader")
        }
        fn elapsed(&mut self) -> f64 {
            0.0
        }
        fn wait(&mut self, _: f64) -> bool {
            unreachable!("no wait without a reader")
        }
    }

    #[test]
    fn no_reader_is_cant_tell_at_once() {
        let v = clear_card(&Rule::new(800, 2, 120.0), &mut NoReader);
        assert_eq!((v.clear, v.readings.len()), (None, 0));
        assert!(analyzer::rules::t02_orphaned_engine::no_reader(&v.reason));
        assert!(
            v.reason.contains("nvidia-smi is not on PATH"),
            "{}",
            v.reason
        );
        assert!(no_card_said(
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
        ));
        assert!(!no_card_said("Unknown Error"));
    }

    #[test]
    fn a_signal_leaves_the_card_unjudged() {
        let v = clear_card(&Rule::new(800, 2, 10.0), &mut Interrupted);
        assert_eq!((v.clear, v.readings.len()), (None, 1));
    }
}

//! Stopping servers (T3's rule, docs/tripwires.md#t3): SIGTERM, a bounded wait, SIGKILL,
//! each signal recorded; then the clear-card rule. The world (processes, signals, clock,
//! card) is a trait so the signalling is tested with a fake kill and clock, and runs live
//! on /proc.

use std::collections::HashSet;
use std::time::Duration;

use analyzer::docs::teardown::{Delivery, SignalRecord, StopSignal, Target};
use analyzer::num::round_dp;
use analyzer::rules::t02_orphaned_engine::{CardCheck, Rule};
use analyzer::Engine;
use nix::errno::Errno;
use nix::sys::signal::Signal;
use nix::unistd::Pid;

use crate::gpu::{self, CardReader};
use crate::procs::{self, Proc, ProcFs, Server};
use crate::signals;

/// The signal a stop sends, as the kernel knows it.
pub fn os_signal(sig: StopSignal) -> Signal {
    match sig {
        StopSignal::Term => Signal::SIGTERM,
        StopSignal::Kill => Signal::SIGKILL,
    }
}

/// Sends `sig` to `to` and records it, stamped with the world's clock.
pub fn send_recorded(world: &mut dyn World, to: Target, sig: StopSignal) -> SignalRecord {
    let result = world.signal(to, sig);
    SignalRecord {
        elapsed_s: round_dp(world.elapsed(), 3),
        to,
        signal: sig,
        result,
    }
}

/// What stopping needs from the world.
pub trait World {
    fn signal(&mut self, to: Target, sig: StopSignal) -> Delivery;
    /// Whether the process is still the same live process (PID and start time).
    fn alive(&mut self, p: &Proc) -> bool;
    fn elapsed(&mut self) -> f64;
    /// Waits; false when a signal says to stop waiting.
    fn wait(&mut self, seconds: f64) -> bool;
    /// `(MiB used, live server processes of any engine)` for the clear-card rule.
    fn card(&mut self) -> (Option<i64>, u32);
    /// Why the card cannot be read at all (no `nvidia-smi`), asked once per rule.
    fn card_reader_missing(&mut self) -> Option<String> {
        None
    }
}

/// What stopping each target did.
#[derive(Debug, Clone, PartialEq)]
pub struct Stopped {
    /// Every signal sent, in order.
    pub signals: Vec<SignalRecord>,
    /// The targets still alive at the end.
    pub left: Vec<Proc>,
}

/// SIGTERM each target by PID, poll every 0.5 s up to `grace` s, SIGKILL survivors.
pub fn stop_each(world: &mut dyn World, targets: &[Proc], grace: f64) -> Stopped {
    let mut records = Vec::new();
    let mut pending: Vec<Proc> = Vec::new();
    for p in targets {
        let record = send_recorded(world, Target::Pid(p.pid), StopSignal::Term);
        if record.result == Delivery::Sent {
            pending.push(p.clone());
        }
        records.push(record);
    }
    let start = world.elapsed();
    let mut waited = true;
    loop {
        pending.retain(|p| world.alive(p));
        if pending.is_empty() || world.elapsed() - start >= grace || !waited {
            break;
        }
        waited = world.wait(0.5);
    }
    for p in &pending {
        records.push(send_recorded(world, Target::Pid(p.pid), StopSignal::Kill));
    }
    if !pending.is_empty() {
        world.wait(0.5);
    }
    let left = pending.into_iter().filter(|p| world.alive(p)).collect();
    Stopped {
        signals: records,
        left,
    }
}

/// The clear-card rule on a world, its clock counted from the rule's own start.
pub fn card_rule(world: &mut dyn World, rule: &Rule) -> CardCheck {
    struct Reader<'a> {
        world: &'a mut dyn World,
        start: f64,
    }
    impl CardReader for Reader<'_> {
        fn missing(&mut self) -> Option<String> {
            self.world.card_reader_missing()
        }
        fn read(&mut self) -> (Option<i64>, u32) {
            self.world.card()
        }
        fn elapsed(&mut self) -> f64 {
            self.world.elapsed() - self.start
        }
        fn wait(&mut self, s: f64) -> bool {
            self.world.wait(s)
        }
    }
    let start = world.elapsed();
    gpu::clear_card(rule, &mut Reader { world, start })
}

/// The live world: real signals, `/proc`, `nvidia-smi`, and the monotonic clock.
pub struct Live {
    pub fs: ProcFs,
    start_ns: i64,
    /// Waits end when more than this many stop signals arrived.
    pub allowed_signals: usize,
}

impl Live {
    pub fn new(fs: ProcFs, allowed_signals: usize) -> Live {
        Live {
            fs,
            start_ns: crate::clock::mono_ns(),
            allowed_signals,
        }
    }
}

/// Sends a signal, telling "gone" and "not permitted" apart.
pub fn send(to: Target, sig: StopSignal) -> Delivery {
    let sig = os_signal(sig);
    let r = match to {
        Target::Group(g) => nix::sys::signal::killpg(Pid::from_raw(g), sig),
        Target::Pid(p) => nix::sys::signal::kill(Pid::from_raw(p), sig),
    };
    match r {
        Ok(()) => Delivery::Sent,
        Err(Errno::ESRCH) => Delivery::Gone,
        Err(_) => Delivery::NotPermitted,
    }
}

impl World for Live {
    fn signal(&mut self, to: Target, sig: StopSignal) -> Delivery {
        // The last line of defence: never the recorder itself, its group or an ancestor.
        let me = std::process::id() as i32;
        let table = self.fs.table();
        let never = procs::self_and_ancestors(&table, me);
        let mygroup = nix::unistd::getpgrp().as_raw();
        match to {
            Target::Pid(p) if never.contains(&p) || p <= 1 => return Delivery::NotPermitted,
            Target::Group(g) if g == mygroup || g <= 1 => return Delivery::NotPermitted,
            _ => {}
        }
        send(to, sig)
    }
    fn alive(&mut self, p: &Proc) -> bool {
        self.fs
            .read(p.pid)
            .is_some_and(|now| now.start_ticks == p.start_ticks && now.live())
    }
    fn elapsed(&mut self) -> f64 {
        crate::clock::since(self.start_ns)
    }
    fn wait(&mut self, seconds: f64) -> bool {
        signals::sleep(Duration::from_secs_f64(seconds), self.allowed_signals)
    }
    fn card(&mut self) -> (Option<i64>, u32) {
        let servers = procs::live_servers(&self.fs).len();
        (gpu::used_mib(), u32::try_from(servers).unwrap_or(u32::MAX))
    }
    fn card_reader_missing(&mut self) -> Option<String> {
        gpu::reader_missing()
    }
}

/// The `pkill -f` pattern people type for these targets.
pub fn usual_pattern(targets: &[Server]) -> &'static str {
    if targets.iter().any(|s| s.engine == Engine::Trtllm) {
        "trtllm-serve"
    } else if targets.iter().any(|s| s.engine == Engine::Sglang) {
        if targets
            .iter()
            .any(|s| s.proc.argv.iter().any(|a| a == "sglang.launch_server"))
        {
            "sglang.launch_server"
        } else {
            "sglang serve"
        }
    } else {
        "vllm serve"
    }
}

/// What a substring `pkill -f PATTERN` would do to the targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pkill {
    /// Targets it would not signal.
    pub missed: usize,
    /// Other processes it would signal.
    pub wrongly_hit: usize,
}

/// What `pkill -f PATTERN` would do here.
pub fn pkill_would(table: &[Proc], targets: &[Server], pattern: &str, me: i32) -> Pkill {
    let target_pids: HashSet<i32> = targets.iter().map(|s| s.proc.pid).collect();
    let hit = |p: &Proc| p.argv.join(" ").contains(pattern);
    let missed = targets.iter().filter(|s| !hit(&s.proc)).count();
    // pkill spares itself; everything else matching is hit.
    let wrongly_hit = table
        .iter()
        .filter(|p| p.pid != me && p.live() && !target_pids.contains(&p.pid) && hit(p))
        .count();
    Pkill {
        missed,
        wrongly_hit,
    }
}

/// `target  pid=PID CMDLINE`: PID padded to 8 columns, command line cut at 100 characters.
pub fn target_line(p: &Proc) -> String {
    let cmd: String = p.cmdline().chars().take(100).collect();
    // tidy: layout (the dry run's lines keep two spaces after "target")
    format!("target  pid={:<8}{cmd}", p.pid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// A fake world: processes that die on SIGTERM unless stubborn; a card whose memory
    /// is held while any vLLM or SGLang process lives.
    struct Fake {
        t: f64,
        alive: HashMap<i32, (Engine, bool)>,
        denied: HashSet<i32>,
        log: Vec<(i32, StopSignal)>,
    }

    impl World for Fake {
        fn signal(&mut self, to: Target, sig: StopSignal) -> Delivery {
            let Target::Pid(p) = to else {
                return Delivery::Gone;
            };
            self.log.push((p, sig));
            if self.denied.contains(&p) {
                return Delivery::NotPermitted;
            }
            match self.alive.get(&p).copied() {
                None => Delivery::Gone,
                Some((_, stubborn)) => {
                    if sig == StopSignal::Kill || !stubborn {
                        self.alive.remove(&p);
                    }
                    Delivery::Sent
                }
            }
        }
        fn alive(&mut self, p: &Proc) -> bool {
            self.alive.contains_key(&p.pid)
        }
        fn elapsed(&mut self) -> f64 {
            self.t
        }
        fn wait(&mut self, s: f64) -> bool {
            self.t += s;
            true
        }
        fn card(&mut self) -> (Option<i64>, u32) {
            let n = self.alive.len() as u32;
            (Some(if n > 0 { 18000 } else { 300 }), n)
        }
    }

    fn proc(pid: i32) -> Proc {
        Proc {
            pid,
            ppid: 1,
            sid: pid,
            start_ticks: 1,
            state: 'S',
            comm: "x".into(),
            argv: vec!["vllm".into(), "serve".into()],
        }
    }

    #[test]
    fn stubborn_engine_gets_sigterm_then_sigkill_then_card_clears() {
        let mut w = Fake {
            t: 0.0,
            alive: [(7, (Engine::Vllm, true))].into_iter().collect(),
            denied: HashSet::new(),
            log: vec![],
        };
        let Stopped { signals: rec, left } = stop_each(&mut w, &[proc(7)], 15.0);
        assert_eq!(w.log, vec![(7, StopSignal::Term), (7, StopSignal::Kill)]);
        assert!(left.is_empty());
        assert_eq!(rec[1].elapsed_s, 15.0);
        assert_eq!(
            analyzer::docs::to_json(&rec[0]).to_compact(),
            "{\"elapsed_s\": 0.0, \"pid\": 7, \"signal\": \"SIGTERM\", \"result\": \"sent\"}"
        );
        let v = card_rule(&mut w, &Rule::new(800, 2, 120.0));
        assert_eq!(v.clear, Some(true));
        assert_eq!(v.readings[0].elapsed_s, 0.0);
    }

    #[test]
    fn only_the_named_engine_is_signalled_and_the_card_stays_unclear() {
        let mut w = Fake {
            t: 0.0,
            alive: [(7, (Engine::Sglang, false)), (8, (Engine::Vllm, false))]
                .into_iter()
                .collect(),
            denied: HashSet::new(),
            log: vec![],
        };
        // --engine sglang: only 7 is a target.
        let left = stop_each(&mut w, &[proc(7)], 15.0).left;
        assert!(left.is_empty());
        assert_eq!(w.log, vec![(7, StopSignal::Term)]);
        let v = card_rule(&mut w, &Rule::new(800, 2, 10.0));
        assert_eq!(v.clear, Some(false));
        assert!(
            v.reason.ends_with("1 server processes alive"),
            "{}",
            v.reason
        );
    }

    #[test]
    fn permission_errors_are_recorded() {
        let mut w = Fake {
            t: 0.0,
            alive: [(9, (Engine::Vllm, false))].into_iter().collect(),
            denied: [9].into_iter().collect(),
            log: vec![],
        };
        let rec = stop_each(&mut w, &[proc(9), proc(10)], 15.0).signals;
        assert_eq!(rec[0].result, Delivery::NotPermitted);
        assert_eq!(rec[1].result, Delivery::Gone);
        assert!(analyzer::docs::to_json(&rec[0])
            .to_compact()
            .contains("\"not permitted\""));
    }

    #[test]
    fn pkill_comparison_on_the_table() {
        let mk = |pid: i32, argv: &[&str]| Proc {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            ..proc(pid)
        };
        let table = vec![
            mk(
                200,
                &[
                    "/opt/venv/bin/python",
                    "/opt/venv/bin/vllm",
                    "serve",
                    "/models/m",
                ],
            ),
            mk(201, &["VLLM::EngineCore"]),
            mk(300, &["python", "-m", "vllm.entrypoints.openai.api_server"]),
            mk(301, &["VLLM::Worker_TP0"]),
            mk(
                400,
                &[
                    "bash",
                    "-lc",
                    "pkill -f 'vllm serve'; inferlint-recorder teardown",
                ],
            ),
            mk(401, &["inferlint-recorder", "teardown"]),
            mk(500, &["tail", "-f", "logs/vllm serve.log"]),
            mk(600, &["vllm", "serve", "/models/other"]),
        ];
        let targets: Vec<Server> = [200, 201, 300, 301, 600]
            .iter()
            .map(|p| Server {
                proc: table.iter().find(|x| x.pid == *p).unwrap().clone(),
                engine: Engine::Vllm,
            })
            .collect();
        assert_eq!(usual_pattern(&targets), "vllm serve");
        assert_eq!(
            pkill_would(&table, &targets, "vllm serve", 401),
            Pkill {
                missed: 3,
                wrongly_hit: 2
            }
        );
        assert_eq!(
            target_line(&table[1]),
            "target  pid=201     VLLM::EngineCore"
        );
    }
}

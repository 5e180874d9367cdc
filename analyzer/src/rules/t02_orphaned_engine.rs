//! T2: an engine process left holding the GPU (docs/tripwires.md#t2). The clear-card rule
//! is decided here, over the readings the recorder takes (it only
//! reads `nvidia-smi`, `/proc` and the clock); the verdict comes from the documents the
//! rule fills: `teardown.json`, else `gate.json`, read back by the analyzer, or judged
//! live by the recorder's `gpu-inspect` and `teardown` commands before it prints them.

use serde::Serialize;

use crate::docs::gate::{Gate, Gpu, Reading};
use crate::docs::teardown::Teardown;
use crate::docs::{GATE, TEARDOWN};
use crate::rules::absent::{Absent, Input, Judged};
use crate::rules::scope::RunScope;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;

const T2: Tripwire = Tripwire::OrphanedEngine;

/// The card before the start: the gate's readings (`gate.json`, `gpu-inspect`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AtGate {
    pub readings: Vec<Reading>,
    /// The cards' facts, when `gpu-inspect -o` read them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpus: Option<Vec<Gpu>>,
}

/// The card after the stop (`teardown.json`): its readings, and the processes of the
/// server's that outlived it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AfterStop {
    pub readings: Vec<Reading>,
    /// PIDs still alive after the server's own process ended.
    pub left_after_the_server_stopped: Vec<i32>,
}

/// The card after `teardown` stopped what was left: its readings and the PIDs it
/// signalled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TornDown {
    pub readings: Vec<Reading>,
    pub signalled: Vec<i32>,
}

/// No reading after the run: the document that would hold one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NoTeardown {
    pub missing: &'static str,
}

/// The clear-card threshold: an idle card reads 0 to a few hundred MiB, an orphaned
/// engine keeps its weights and KV cache (21,768 MiB on the fixtures' card).
pub const MAX_USED_MIB: i64 = 800;
/// Clear readings needed in a row: an exiting engine can read low for a moment.
pub const CONSECUTIVE: u32 = 2;
/// Seconds between readings.
pub const INTERVAL_S: f64 = 2.0;
/// How long the GPU gate and `gpu-inspect` wait for a clear card.
pub const GATE_TIMEOUT_S: f64 = 10.0;
/// How long `teardown` and the stop after a run wait for a clear card.
pub const STOP_TIMEOUT_S: f64 = 120.0;

/// Without `/proc` the server processes cannot be listed, so the card cannot be judged.
pub const NEEDS_LINUX: &str = "Checking that the GPU is free needs Linux: it finds the server's processes in /proc. Run it where the server runs.";

/// How the reason of a card that could not be read at all begins (no `nvidia-smi`):
/// the finding is "can't tell", never "not clear" (a departure from the reference, which
/// waits out its timeout and fails; unreadable is still never clear).
pub const NO_READER: &str = "can't tell whether the GPU is free: its memory cannot be read";

/// Whether a document's reason says the card could not be read at all.
pub fn no_reader(reason: &str) -> bool {
    reason.starts_with(NO_READER)
}

/// The clear-card rule's settings, as written in `gate.json` and `teardown.json`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    pub max_used_mib: i64,
    /// At least 1 (the commands refuse less).
    pub consecutive: u32,
    pub interval_s: f64,
    /// A reading taken at or past this many seconds is the last.
    pub timeout_s: f64,
}

impl Rule {
    pub fn new(max_used_mib: i64, consecutive: u32, timeout_s: f64) -> Rule {
        Rule {
            max_used_mib,
            consecutive,
            interval_s: INTERVAL_S,
            timeout_s,
        }
    }

    /// The defaults: 800 MiB, 2 readings in a row, every 2 s, for at most `timeout_s`.
    pub fn with_timeout(timeout_s: f64) -> Rule {
        Rule::new(MAX_USED_MIB, CONSECUTIVE, timeout_s)
    }

    /// One reading is clear: no server process alive, the memory read, and at or below
    /// the threshold. Unreadable is not clear.
    pub fn is_clear(&self, r: &Reading) -> bool {
        r.servers == 0 && r.used_mib.is_some_and(|m| m <= self.max_used_mib)
    }
}

/// The rule applied reading by reading: the readings so far, and the finding once
/// decided (`clear` none: not decided, or cut short by a signal).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CardCheck {
    pub readings: Vec<Reading>,
    pub clear: Option<bool>,
    pub reason: String,
}

impl CardCheck {
    /// Adds a reading; true when the rule has decided (read no more).
    pub fn add(&mut self, rule: &Rule, reading: Reading) -> bool {
        self.readings.push(reading);
        let run = self
            .readings
            .iter()
            .rev()
            .take_while(|r| rule.is_clear(r))
            .count();
        if run >= rule.consecutive as usize {
            self.clear = Some(true);
            self.reason = format!("{} consecutive clear readings", rule.consecutive);
            return true;
        }
        if reading.elapsed_s >= rule.timeout_s {
            // `None` as the reference prints an unreadable value.
            let shown = reading
                .used_mib
                .map_or("None".to_string(), |m| m.to_string());
            self.clear = Some(false);
            self.reason = format!(
                "not clear after {}s: last reading {shown} MiB used, {} server processes alive",
                seconds(rule.timeout_s),
                reading.servers
            );
            return true;
        }
        false
    }

    /// No reader of the card exists (`why`): decided at once, and not clear.
    pub fn no_reader(&mut self, why: &str) {
        self.clear = None;
        self.reason = format!("{NO_READER} ({why})");
    }

    /// A signal ended the wait before the rule decided.
    pub fn interrupted(&mut self) {
        self.clear = None;
        self.reason = "interrupted before the card was clear".into();
    }
}

/// Whole seconds without a fraction (`10s`), others as they are (`0.5s`).
fn seconds(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// Status and message from what a document says (docs/tripwires.md#t2).
fn judge(
    linux: bool,
    abandoned: bool,
    clear: Option<bool>,
    reason: &str,
    refusal: Option<&str>,
    unchecked: &str,
) -> (Status, String) {
    if !linux {
        return (Status::Unknown, NEEDS_LINUX.to_string());
    }
    if abandoned {
        return (
            Status::Unknown,
            "the stop was cut short by a second signal, so the card was not checked".into(),
        );
    }
    match (clear, refusal) {
        (None, _) if no_reader(reason) => (Status::Unknown, reason.to_string()),
        (Some(true), _) => (Status::Pass, reason.to_string()),
        (Some(false), Some(refusal)) => (Status::Fail, format!("{refusal} {reason}")),
        (Some(false), None) => (Status::Fail, reason.to_string()),
        (None, _) => (Status::Unknown, unchecked.to_string()),
    }
}

/// The gate's result with the given refusal wording (`gate.json`, `gpu-inspect`).
fn gate_result(doc: &Gate, refusal: &str) -> CheckResult {
    let (status, message) = judge(
        doc.linux,
        false,
        doc.clear,
        &doc.reason,
        Some(refusal),
        "the card was not checked before the start",
    );
    CheckResult::new(T2, status, message).found(AtGate {
        readings: doc.readings.clone(),
        gpus: doc.gpus.clone(),
    })
}

fn teardown_judgement(doc: &Teardown) -> (Status, String) {
    judge(
        true,
        doc.abandoned,
        doc.clear,
        doc.reason.as_deref().unwrap_or(""),
        None,
        "the card was not checked after the stop",
    )
}

/// T2 from `gate.json`, when the folder has no `teardown.json`.
/// The whole run: the card after the teardown stopped the server, else at the gate
/// before the start. A server the recorder started and never stopped (it was killed) has
/// no reading after the run: can't tell, never a pass on the gate's reading.
pub fn run(cx: &RunScope<'_>) -> Judged {
    match (&cx.teardown, &cx.gate) {
        (Input::Present(doc), _) => Ok(from_teardown(doc)),
        (Input::NotGiven, _) if cx.outcome.no_teardown => Ok(no_teardown(cx.outcome.recorder_died)),
        (Input::NotGiven, gate) => Ok(from_gate(gate.need()?)),
        (teardown, _) => Err(teardown.need().err().unwrap_or(Absent::NotGiven)),
    }
}

pub fn from_gate(doc: &Gate) -> CheckResult {
    let mut r = gate_result(doc, "card not clear; refusing to start a server.");
    r.source = Some(GATE.to_string());
    r
}

/// T2 of a run whose server the recorder launched but never stopped (no `teardown.json`):
/// the gate's clear card was read before the start and says nothing of what was left.
pub fn no_teardown(recorder_died: bool) -> CheckResult {
    let why = if recorder_died {
        "the recorder was killed before it stopped the server"
    } else {
        "the recorder did not stop the server"
    };
    CheckResult::new(
        T2,
        Status::Unknown,
        format!(
            "{why}, so no reading shows whether the engine let go of the GPU (teardown.json is \
             missing; the gate's clear card was read before the start). `inferlint-recorder \
             teardown --run <folder>` stops what is left and reads the card"
        ),
    )
    .found(NoTeardown { missing: TEARDOWN })
}

/// T2 from `teardown.json`: the state the run left behind.
pub fn from_teardown(doc: &Teardown) -> CheckResult {
    let (status, message) = teardown_judgement(doc);
    let mut r = CheckResult::new(T2, status, message).found(AfterStop {
        readings: doc.readings.clone(),
        left_after_the_server_stopped: doc.left_after_the_server_stopped.clone(),
    });
    r.source = Some(TEARDOWN.to_string());
    r
}

/// T2 as `gpu-inspect` prints it, from the gate document it fills.
pub fn inspected(doc: &Gate) -> CheckResult {
    gate_result(doc, "card not clear; refusing to boot.")
}

/// T2 as `teardown` prints it: evidence the readings and the
/// PIDs it signalled.
pub fn torn_down(doc: &Teardown, signalled: &[i32]) -> CheckResult {
    let (status, message) = teardown_judgement(doc);
    CheckResult::new(T2, status, message).found(TornDown {
        readings: doc.readings.clone(),
        signalled: signalled.to_vec(),
    })
}

/// T2 where there is no `/proc`: can't tell.
pub fn needs_linux() -> CheckResult {
    CheckResult::new(T2, Status::Unknown, NEEDS_LINUX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::InputError;
    use crate::rules::absent::{settle, CantTell};
    use crate::rules::outcome::RunOutcome;
    use crate::rules::testing::{said, Folder};

    fn reading(elapsed_s: f64, used_mib: Option<i64>, servers: u32) -> Reading {
        Reading {
            elapsed_s,
            used_mib,
            servers,
        }
    }

    /// Feeds readings 2 s apart until the rule decides.
    fn run(rule: &Rule, mem: &[Option<i64>], servers: &[u32]) -> CardCheck {
        let mut check = CardCheck::default();
        for i in 0.. {
            let k = i.min(mem.len() - 1);
            if check.add(rule, reading(i as f64 * 2.0, mem[k], servers[k])) {
                return check;
            }
        }
        unreachable!()
    }

    #[test]
    fn the_clear_card_rule() {
        let rule = Rule::with_timeout(STOP_TIMEOUT_S);
        let mem = [18900, 300, 18500, 250, 240].map(Some);
        let v = run(&rule, &mem, &[1, 0, 1, 0, 0]);
        assert_eq!(v.clear, Some(true));
        assert_eq!(v.readings.len(), 5);
        assert_eq!(v.reason, "2 consecutive clear readings");
        let v = run(&Rule::with_timeout(10.0), &[Some(100)], &[1]);
        assert_eq!((v.clear, v.readings.len()), (Some(false), 6));
        assert_eq!(
            v.reason,
            "not clear after 10s: last reading 100 MiB used, 1 server processes alive"
        );
        let v = run(&Rule::with_timeout(4.0), &[None], &[0]);
        assert_eq!(v.clear, Some(false));
        assert!(v.reason.contains("last reading None MiB used"));
        assert!(!Rule::with_timeout(1.0).is_clear(&reading(0.0, Some(801), 0)));
        assert!(Rule::with_timeout(1.0).is_clear(&reading(0.0, Some(800), 0)));
        let v = run(&Rule::new(800, 1, 0.5), &[Some(900)], &[0]);
        assert!(v.reason.starts_with("not clear after 0.5s"), "{}", v.reason);
    }

    fn gate(clear: Option<bool>, linux: bool) -> Gate {
        Gate {
            readings: vec![reading(0.0, Some(21768), 1)],
            clear,
            reason: "R".into(),
            linux,
            ..Gate::default()
        }
    }

    #[test]
    fn gate_results() {
        let r = from_gate(&gate(Some(false), true));
        assert_eq!(r.status, Status::Fail);
        assert_eq!(r.message, "card not clear; refusing to start a server. R");
        assert_eq!(r.source.as_deref(), Some("gate.json"));
        assert_eq!(r.evidence()[0].1.to_compact(), "[[0.0, 21768, 1]]");
        assert_eq!(
            inspected(&gate(Some(false), true)).message,
            "card not clear; refusing to boot. R"
        );
        assert_eq!(from_gate(&gate(Some(true), true)).status, Status::Pass);
        let r = from_gate(&gate(Some(true), false));
        assert_eq!(
            (r.status, r.message.as_str()),
            (Status::Unknown, NEEDS_LINUX)
        );
        assert_eq!(from_gate(&gate(None, true)).status, Status::Unknown);
        let mut unread = CardCheck::default();
        unread.no_reader("nvidia-smi is not on PATH");
        let g = Gate {
            readings: Vec::new(),
            clear: unread.clear,
            reason: unread.reason.clone(),
            linux: true,
            ..Gate::default()
        };
        for r in [from_gate(&g), inspected(&g)] {
            assert_eq!(r.status, Status::Unknown);
            assert!(r.message.starts_with(NO_READER), "{}", r.message);
            assert!(
                r.message.ends_with("(nvidia-smi is not on PATH)"),
                "{}",
                r.message
            );
        }
    }

    #[test]
    fn teardown_results() {
        let t = Teardown {
            readings: vec![reading(0.0, Some(0), 0), reading(2.0, Some(0), 0)],
            clear: Some(true),
            reason: Some("2 consecutive clear readings".into()),
            left_after_the_server_stopped: vec![7],
            ..Teardown::default()
        };
        let r = from_teardown(&t);
        assert_eq!(
            (r.status, r.message.as_str()),
            (Status::Pass, "2 consecutive clear readings")
        );
        let keys: Vec<String> = r.evidence().into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["readings", "left_after_the_server_stopped"]);
        let r = torn_down(&t, &[5, 6]);
        assert_eq!(r.evidence()[1].1.to_compact(), "[5, 6]");
        let cut = Teardown {
            abandoned: true,
            clear: None,
            ..t.clone()
        };
        assert_eq!(from_teardown(&cut).status, Status::Unknown);
        let failed = Teardown {
            clear: Some(false),
            reason: Some("not clear".into()),
            ..t
        };
        assert_eq!(
            (
                from_teardown(&failed).status,
                from_teardown(&failed).message
            ),
            (Status::Fail, "not clear".to_string())
        );
    }

    #[test]
    fn each_document_keeps_its_own_finding() {
        let g = gate(Some(false), true);
        let r = from_gate(&g);
        let at = r.finding::<AtGate>().expect("the gate's finding");
        assert_eq!(at.readings, g.readings);
        assert_eq!(at.gpus, None);
        let t = Teardown {
            readings: vec![reading(0.0, Some(900), 0), reading(2.0, Some(900), 0)],
            clear: Some(false),
            reason: Some("not clear after 2s: last reading 900 MiB used".into()),
            left_after_the_server_stopped: vec![41, 42],
            ..Teardown::default()
        };
        let r = from_teardown(&t);
        assert_eq!(
            said(&r),
            (
                Status::Fail,
                "not clear after 2s: last reading 900 MiB used"
            )
        );
        let after = r.finding::<AfterStop>().expect("the teardown's finding");
        assert_eq!(after.readings.len(), 2);
        assert_eq!(after.left_after_the_server_stopped, [41, 42]);
        let r = torn_down(&t, &[41]);
        assert_eq!(
            r.finding::<TornDown>().map(|d| &d.signalled[..]),
            Some(&[41][..])
        );
        assert_eq!(r.source, None);
        let r = no_teardown(true);
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message
                .starts_with("the recorder was killed before it stopped the server, so no reading"),
            "{}",
            r.message
        );
        assert_eq!(
            r.finding::<NoTeardown>(),
            Some(&NoTeardown { missing: TEARDOWN })
        );
        assert!(no_teardown(false)
            .message
            .starts_with("the recorder did not stop the server"));
        assert_eq!(said(&needs_linux()), (Status::Unknown, NEEDS_LINUX));
    }

    #[test]
    fn the_run_reads_the_teardown_else_the_gate() {
        let folder = Folder::default();
        // Neither document given: no T2 at all.
        assert_eq!(settle(T2, super::run(&folder.scope())), None);
        let g = gate(Some(true), true);
        let mut cx = folder.scope();
        cx.gate = Input::Present(&g);
        let r = super::run(&cx).unwrap();
        assert_eq!((r.status, r.source.as_deref()), (Status::Pass, Some(GATE)));
        assert!(r.finding::<AtGate>().is_some());
        let t = Teardown {
            readings: vec![reading(0.0, Some(21768), 1)],
            clear: Some(false),
            reason: Some("not clear".into()),
            ..Teardown::default()
        };
        cx.teardown = Input::Present(&t);
        let r = super::run(&cx).unwrap();
        assert_eq!(
            (r.status, r.source.as_deref()),
            (Status::Fail, Some(TEARDOWN))
        );
        assert!(r.finding::<AfterStop>().is_some());
        // An unusable teardown.json is said as one, never judged from the gate.
        let bad = InputError::new(TEARDOWN, None, "not JSON");
        cx.teardown = Input::Unusable(&bad);
        let r = settle(T2, super::run(&cx)).unwrap();
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message.starts_with("unusable input: teardown.json"),
            "{}",
            r.message
        );
        assert_eq!(
            r.finding::<CantTell>()
                .and_then(|c| c.input_error.as_deref()),
            Some(bad.to_string().as_str())
        );
        let bad_gate = InputError::new(GATE, None, "not JSON");
        cx.teardown = Input::NotGiven;
        cx.gate = Input::Unusable(&bad_gate);
        let r = settle(T2, super::run(&cx)).unwrap();
        assert!(
            r.message.starts_with("unusable input: gate.json"),
            "{}",
            r.message
        );
    }

    #[test]
    fn a_server_never_stopped_cannot_pass_on_the_gate() {
        let killed = Folder {
            outcome: RunOutcome {
                no_teardown: true,
                recorder_died: true,
                ..RunOutcome::default()
            },
            ..Folder::default()
        };
        let g = gate(Some(true), true);
        let mut cx = killed.scope();
        cx.gate = Input::Present(&g);
        let r = super::run(&cx).unwrap();
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message.contains("teardown.json is missing"),
            "{}",
            r.message
        );
        assert_eq!(r.finding::<NoTeardown>().map(|n| n.missing), Some(TEARDOWN));
    }
}

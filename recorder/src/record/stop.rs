//! Step 17, stopping the server, always run in serve mode: the tree at
//! the stop into `processes.json`, then SIGTERM to the launched group with a bounded wait
//! and SIGKILL, the sweep of owned processes left, and the clear-card rule, all recorded
//! in `teardown.json`. A second signal skips every wait.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use analyzer::docs::manifest::Stage;
use analyzer::docs::processes::{Processes, When};
use analyzer::docs::teardown::{Launched, SignalRecord, StopSignal, Target, Teardown};
use analyzer::docs::{PROCESSES, TEARDOWN};
use analyzer::rules::t02_orphaned_engine::{self as t02, CardCheck, Rule};

use super::serve::{exit_of, tree_snapshot, Server};
use super::{Run, Stop};
use crate::procs::{self, ProcFs};
use crate::teardown::{self, send_recorded, Live};
use crate::{say, signals};

impl Run {
    /// Step 17. A second signal during the stop makes the run `interrupted`.
    pub(super) fn stop_server(&mut self, stop: &mut Option<Stop>) {
        let fs = self.fs.clone();
        let Some(mut taken) = self.server.take() else {
            return;
        };
        say("== stop the server");
        self.trees.push(tree_snapshot(&mut taken, &fs, When::Stop));
        let len = std::fs::metadata(&taken.log).ok().map(|m| m.len());
        if let Some(b) = self.manifest.boot_log.as_mut() {
            b.stop = len;
        }
        let processes = Processes {
            snapshots: self.trees.clone(),
        };
        self.write(PROCESSES, &processes);
        let server = self.server.insert(taken);
        // The signal that interrupted the run (if any) starts an orderly stop; any further
        // one escalates it, also when it came before the stop began (while the load was
        // being ended or the after snapshot taken): a second signal is never lost.
        let allowed = signals::count().min(1);
        let teardown = stop_launched(server, &fs, allowed, self.opts.stop_card_timeout);
        if let Some(s) = self.manifest.serve.as_mut() {
            s.exit = server.exit.and_then(exit_of);
        }
        self.write(TEARDOWN, &teardown);
        say(&format!(
            "== the card after the stop: {}",
            teardown.reason.as_deref().unwrap_or("not checked")
        ));
        if (teardown.abandoned || signals::count() > allowed) && stop.is_none() {
            *stop = Some(Stop::Interrupted(Stage::Stop));
        }
    }
}

/// Stops the launched server: SIGTERM to its group, the bounded wait, SIGKILL, the sweep of
/// owned processes left, the clear-card rule. `allowed` is the number of
/// stop signals already received: one more skips every wait. `card_timeout` is the
/// clear-card rule's limit (120 s).
fn stop_launched(server: &mut Server, fs: &ProcFs, allowed: usize, card_timeout: f64) -> Teardown {
    let me = std::process::id() as i32;
    let mut live = Live::new(fs.clone(), allowed);
    let mut signals_sent: Vec<SignalRecord> = Vec::new();
    let mut abandoned = false;
    let group = Target::Group(server.sid);
    // 2. The launched process: its group gets SIGTERM, 30 s, SIGKILL, 10 s.
    if server.exit.is_none() && matches!(server.child.try_wait(), Ok(None)) {
        signals_sent.push(send_recorded(&mut live, group, StopSignal::Term));
        if !wait_exit(server, Duration::from_secs(30), allowed) {
            abandoned = signals::count() > allowed;
            signals_sent.push(send_recorded(&mut live, group, StopSignal::Kill));
            wait_exit(server, Duration::from_secs(10), usize::MAX);
        }
    }
    if server.exit.is_none() {
        if let Ok(st) = server.child.wait() {
            server.exit = Some(st);
        }
    }
    // 3. The sweep: owned processes still alive.
    let owned: Vec<_> = server
        .own
        .owned(&fs.table(), me)
        .into_iter()
        .filter(|p| p.live())
        .collect();
    let left_after: Vec<i32> = owned.iter().map(|p| p.pid).collect();
    if abandoned || signals::count() > allowed {
        abandoned = true;
        signals_sent.push(send_recorded(&mut live, group, StopSignal::Kill));
        for p in &owned {
            signals_sent.push(send_recorded(
                &mut live,
                Target::Pid(p.pid),
                StopSignal::Kill,
            ));
        }
    } else if !owned.is_empty() {
        signals_sent.extend(teardown::stop_each(&mut live, &owned, 15.0).signals);
        abandoned = signals::count() > allowed;
    }
    let owned_now: HashSet<i32> = server
        .own
        .owned(&fs.table(), me)
        .iter()
        .map(|p| p.pid)
        .collect();
    // Stopped and swept: the guard has nothing left to stop (zombies the reaper has not
    // collected yet are no one's to stop). When something lives, it stays armed and stops
    // the group once the recorder ends.
    let live_now = server.own.owned(&fs.table(), me).iter().any(|p| p.live());
    if !live_now {
        if let Some(g) = server.guard.as_mut() {
            g.disarm();
        }
    }
    let left_alone = procs::live_servers(fs)
        .iter()
        .filter(|s| !owned_now.contains(&s.proc.pid))
        .map(|s| s.doc())
        .collect();
    // 4. The card.
    let rule = Rule::with_timeout(card_timeout);
    let check: Option<CardCheck> = (!abandoned).then(|| teardown::card_rule(&mut live, &rule));
    // A rule cut short by a signal leaves the card unjudged: the stop was abandoned. (A
    // card without a reader is unjudged too, but nothing was cut short.)
    abandoned |= check
        .as_ref()
        .is_some_and(|c| c.clear.is_none() && !t02::no_reader(&c.reason));
    Teardown {
        launched: Some(Launched {
            pid: server.pid,
            sid: server.sid,
        }),
        signals: signals_sent,
        server_exit: server.exit.and_then(exit_of),
        left_after_the_server_stopped: left_after,
        left_alone,
        max_used_mib: rule.max_used_mib,
        consecutive: rule.consecutive,
        interval_s: rule.interval_s,
        timeout_s: rule.timeout_s,
        clear: check.as_ref().and_then(|c| c.clear),
        reason: check.as_ref().map(|c| c.reason.clone()),
        readings: check.map(|c| c.readings).unwrap_or_default(),
        abandoned,
    }
}

/// Waits for the launched process to exit; false on timeout or a further signal.
fn wait_exit(server: &mut Server, wait: Duration, allowed: usize) -> bool {
    let end = Instant::now() + wait;
    loop {
        if let Ok(Some(st)) = server.child.try_wait() {
            server.exit = Some(st);
            return true;
        }
        if Instant::now() >= end || signals::count() > allowed {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

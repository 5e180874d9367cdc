//! Several load runs in one folder (`record -- A --then B`, or several `vllm bench serve`
//! results side by side): one result with a phase per run, in the order they ran. A run's
//! window is the recorder's marks of its command's start and end when the manifest has
//! them, else the result's own `date` (vLLM writes it at the run's end, to the second) less
//! its `duration`.

use super::aiperf_records::{self, Records};
use super::{from_phases, BenchResult, Phase};
use crate::input::InputError;
use crate::inputs::{BenchInput, InputFile};
use crate::manifest::Manifest;

/// Reads every run's result (`first`, then `more`, in the folder's order) and combines
/// them, each timed by the manifest's marks for its file when the manifest lists it, and
/// by its per-request export (`bench-N.requests.jsonl`) when there is one. The first
/// unreadable file is the error: a phase cannot be left out silently.
pub fn read_all(
    first: &BenchInput,
    more: &[BenchInput],
    requests: &[InputFile],
    manifest: Option<&Manifest>,
) -> Result<BenchResult, InputError> {
    let mut runs = Vec::new();
    for b in std::iter::once(first).chain(more) {
        let name = &b.file.name;
        let mut result = b
            .file
            .bytes()
            .and_then(|bytes| BenchResult::read(name, bytes))?;
        let base = name.rsplit('/').next().unwrap_or(name);
        let export = crate::docs::bench_requests_of(base).and_then(|r| {
            requests
                .iter()
                .find(|f| f.name.rsplit('/').next() == Some(r.as_str()))
        });
        if let Some(f) = export {
            let records = f
                .bytes()
                .and_then(|bytes| aiperf_records::read(&f.name, bytes))?;
            with_records(&mut result, records, &f.name);
        }
        let recorded = manifest.and_then(|m| super::asked::from_manifest(m, Some(base)));
        super::asked::fill(&mut result, recorded);
        let marks = manifest.and_then(|m| {
            let run = m
                .load_runs
                .iter()
                .find(|r| r.result_file.as_deref() == Some(base))?;
            run.started_wall.zip(run.ended_wall)
        });
        runs.push(Run {
            file: base.to_string(),
            result,
            marks,
        });
    }
    Ok(combine(runs))
}

/// One run's result and what the manifest noted of it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Run {
    /// The result file's name, for messages.
    pub file: String,
    pub result: BenchResult,
    /// The recorder's marks of the command's start and end (unix seconds, the series'
    /// clock), when it ran under the recorder.
    pub marks: Option<(f64, f64)>,
}

/// A step's per-request export: its window when the result has none (AIPerf's summary),
/// and its per-request times when the result has none (T18).
fn with_records(result: &mut BenchResult, records: Records, file: &str) {
    if let [phase] = result.phases.as_mut_slice() {
        if phase.start_wall.is_none() || phase.end_wall.is_none() {
            if let (Some(s), Some(e)) = (records.start_wall, records.end_wall) {
                phase.start_wall = Some(s);
                phase.end_wall = Some(e);
                let short = file.rsplit('/').next().unwrap_or(file);
                phase.timing = Some(format!(
                    "window: the first request's start to the last one's end in {short}"
                ));
            }
        }
    }
    if let [phase] = result.phases.as_mut_slice() {
        phase
            .requests
            .get_or_insert_with(|| records.requests.clone());
    }
    if result.requests.is_none() {
        result.requests = Some(records.requests);
    }
}

/// One result holding every run as a phase. A result that is itself a sweep keeps its
/// phases; a result of one benchmark becomes one phase, timed by the marks or its date.
/// Counts are summed, per-request figures are the first run's (T18 compares a cold
/// server's first requests with the rest), and the untimed requests are summed.
pub fn combine(mut runs: Vec<Run>) -> BenchResult {
    // Without marks the runs go in the order they ended.
    if runs.iter().all(|r| r.marks.is_none()) {
        runs.sort_by(|a, b| {
            let end = |r: &Run| r.result.date_end_wall.unwrap_or(f64::INFINITY);
            end(a).total_cmp(&end(b))
        });
    }
    let mut phases = Vec::new();
    let mut implausible = Vec::new();
    let mut untimed: Option<i64> = None;
    let tool = runs
        .first()
        .and_then(|r| r.result.tool.clone())
        .unwrap_or_else(|| "the load tool".into());
    for run in &runs {
        let r = &run.result;
        implausible.extend(r.implausible.iter().cloned());
        if let Some(n) = r.untimed {
            untimed = Some(untimed.unwrap_or(0) + n);
        }
        if r.phases.len() > 1 {
            phases.extend(r.phases.iter().cloned());
            continue;
        }
        let mut phase = r.phases.first().cloned().unwrap_or_else(|| one_phase(r));
        if phase.start_wall.is_none() || phase.end_wall.is_none() {
            timed(&mut phase, run);
        }
        phases.push(phase);
    }
    let first = runs.first().map(|r| &r.result);
    let mut out = from_phases(tool, phases, implausible);
    // `from_phases` names a tool; results without one (vLLM's) keep none.
    out.tool = first.and_then(|r| r.tool.clone());
    out.untimed = untimed;
    out.requests = first.and_then(|r| r.requests.clone());
    out.backend = first.and_then(|r| r.backend.clone());
    out.total_input_tokens = runs.iter().map(|r| r.result.total_input_tokens).sum();
    // What every run asked, when they asked the same; each phase keeps its own.
    let asked: Vec<_> = runs.iter().map(|r| r.result.asked_output.clone()).collect();
    out.asked_output = asked.first().cloned().flatten().filter(|a| {
        asked
            .iter()
            .all(|b| b.as_ref().map(|b| b.tokens) == Some(a.tokens))
    });
    out.output_shortest = runs
        .iter()
        .map(|r| r.result.output_shortest)
        .collect::<Option<Vec<i64>>>()
        .and_then(|v| v.into_iter().min());
    out.errors = super::errors::group(
        runs.iter()
            .flat_map(|r| &r.result.errors)
            .map(|g| (g.text.as_str(), g.count)),
    );
    out
}

/// The phase of a result of one benchmark: the concurrency it asked for, else its
/// request rate when finite (vLLM writes `inf` for "all at once").
fn one_phase(r: &BenchResult) -> Phase {
    Phase {
        concurrency: r.max_concurrency,
        rate: r
            .named_rate
            .filter(|x| x.is_finite() && r.max_concurrency.is_none()),
        completed: r.completed,
        failed: r.failed,
        output_tokens: r.total_output_tokens,
        start_wall: None,
        end_wall: None,
        duration: r.duration,
        timing: None,
        requests: r.requests.clone(),
        asked_output: r.asked_output.clone(),
    }
}

/// The phase's window: the recorder's marks of the command, narrowed to the result's own
/// `date` and `duration` when they lie inside them (the client's start-up and exit are
/// not the run); else the date and duration alone.
fn timed(phase: &mut Phase, run: &Run) {
    // `date` is the end to the whole second, truncated: the run ended within the second
    // after it, so the window is widened by that second at both ends.
    let dated = run
        .result
        .date_end_wall
        .zip(phase.duration)
        .map(|(end, duration)| (end - duration - 1.0, end + 1.0));
    let (window, how) = match (run.marks, dated) {
        (Some((start, end)), Some((d_start, d_end)))
            if d_start >= start - 1.0 && d_end <= end + 1.0 =>
        {
            (
                (d_start.max(start), d_end.min(end)),
                format!(
                    "the recorder's marks of the command that saved {}, narrowed to the result's \
                 own date and duration, to 1 s",
                    run.file
                ),
            )
        }
        (Some(marks), _) => (
            marks,
            format!(
                "the recorder's marks of the start and end of the command that saved {}",
                run.file
            ),
        ),
        (None, Some(dated)) => (
            dated,
            format!(
                "{}'s own date (its end, written to the second, read as UTC) less its \
                 duration, so known to 1 s and widened by 1 s",
                run.file
            ),
        ),
        (None, None) => return,
    };
    phase.start_wall = Some(window.0);
    phase.end_wall = Some(window.1);
    phase.timing = Some(format!("window: {how}"));
}

/// Unix seconds of vLLM's `date` (`YYYYMMDD-HHMMSS`, the client's local time, read as
/// UTC); none when it is not of that form or not a calendar date.
pub fn date_as_unix(date: &str) -> Option<f64> {
    let b = date.as_bytes();
    if b.len() != 15 || b[8] != b'-' {
        return None;
    }
    let digits = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = date.get(r)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())
            .flatten()
    };
    let (y, mo, d) = (digits(0..4)?, digits(4..6)?, digits(6..8)?);
    let (h, mi, s) = (digits(9..11)?, digits(11..13)?, digits(13..15)?);
    let days_in = |m: i64| match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if !(1..=12).contains(&mo) || d < 1 || d > days_in(mo) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    Some((days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s) as f64)
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vllm_dates_read_as_utc() {
        assert_eq!(date_as_unix("19700101-000000"), Some(0.0));
        // 2026-11-30 20:27:04 UTC.
        assert_eq!(date_as_unix("20261130-202704"), Some(1_796_070_424.0));
        assert_eq!(date_as_unix("20240229-000000"), Some(1_709_164_800.0));
        for bad in [
            "20230229-000000",
            "20261330-000000",
            "2026113-202704",
            "x",
            "",
        ] {
            assert_eq!(date_as_unix(bad), None, "{bad}");
        }
    }

    fn vllm(concurrency: i64, completed: i64, tokens: i64, date: Option<f64>) -> BenchResult {
        BenchResult {
            completed: Some(completed),
            failed: Some(0),
            total_output_tokens: Some(tokens),
            total_input_tokens: Some(completed * 32),
            max_concurrency: Some(concurrency),
            named_rate: Some(f64::INFINITY),
            duration: Some(4.0),
            date_end_wall: date,
            ..BenchResult::default()
        }
    }

    #[test]
    fn one_phase_per_run_timed_by_the_marks() {
        let b = combine(vec![
            Run {
                file: "bench-1.json".into(),
                result: vllm(2, 24, 384, Some(1000.0)),
                marks: Some((900.0, 1001.5)),
            },
            Run {
                file: "bench-2.json".into(),
                result: vllm(16, 40, 640, None),
                marks: Some((1002.0, 1010.0)),
            },
        ]);
        assert!(b.is_sweep());
        let p = &b.phases;
        assert_eq!((p[0].concurrency, p[1].concurrency), (Some(2), Some(16)));
        assert_eq!((p[0].rate, p[1].rate), (None, None));
        assert_eq!(
            (p[1].start_wall, p[1].end_wall),
            (Some(1002.0), Some(1010.0))
        );
        assert!(p[0].timing.as_deref().unwrap().contains("recorder's marks"));
        assert_eq!((b.completed, b.total_output_tokens), (Some(64), Some(1024)));
        assert_eq!(b.max_concurrency, Some(16));
        assert_eq!(b.total_input_tokens, Some(64 * 32));
        assert_eq!(b.tool, None);
    }

    #[test]
    fn without_marks_the_date_places_each_run_to_a_second() {
        // Given out of order: sorted by when they ended.
        let b = combine(vec![
            Run {
                file: "b.json".into(),
                result: vllm(16, 40, 640, Some(2000.0)),
                marks: None,
            },
            Run {
                file: "a.json".into(),
                result: vllm(2, 24, 384, Some(1000.0)),
                marks: None,
            },
        ]);
        let p = &b.phases;
        assert_eq!(p[0].concurrency, Some(2));
        assert_eq!(
            (p[0].start_wall, p[0].end_wall),
            (Some(995.0), Some(1001.0))
        );
        assert!(p[0].timing.as_deref().unwrap().contains("known to 1 s"));
        // No date: no window, so the phase is "can't tell".
        let b = combine(vec![
            Run {
                file: "a.json".into(),
                result: vllm(2, 24, 384, None),
                marks: None,
            },
            Run {
                file: "b.json".into(),
                result: vllm(4, 24, 384, None),
                marks: None,
            },
        ]);
        assert_eq!(b.phases[0].start_wall, None);
    }

    #[test]
    fn a_rate_limited_run_asks_for_its_rate() {
        let mut r = vllm(2, 24, 384, None);
        r.max_concurrency = None;
        r.named_rate = Some(4.0);
        assert_eq!(one_phase(&r).rate, Some(4.0));
        assert_eq!(one_phase(&r).asked(), "4 requests/s");
    }
}

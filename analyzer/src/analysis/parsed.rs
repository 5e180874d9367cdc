//! Every input of a run folder, parsed once: each `None` when not given and `Err` when
//! unusable, and the notes the analysis prints about them (refused values, skipped lines).

use crate::bench::{AiperfServer, BenchResult};
use crate::docs::{self, Gate, Probe, Teardown};
use crate::gpu_samples::GpuSamples;
use crate::input::InputError;
use crate::inputs::{InputFile, RunInput};
use crate::manifest::Manifest;
use crate::plausible::Implausible;
use crate::series::Series;
use crate::snapshot::Snapshot;
use crate::text::decode_lossy;

/// Parsed inputs, each `None` when not given and `Err` when unusable.
pub(super) struct Parsed {
    pub before: Option<Result<Snapshot, InputError>>,
    pub after: Option<Result<Snapshot, InputError>>,
    pub series: Option<Result<Series, InputError>>,
    pub bench: Option<Result<BenchResult, InputError>>,
    pub manifest: Option<Manifest>,
    pub gate: Option<Result<Gate, InputError>>,
    pub probe: Option<Result<Probe, InputError>>,
    pub teardown: Option<Result<Teardown, InputError>>,
    pub gpu: Option<Result<GpuSamples, InputError>>,
    /// AIPerf's scrape of the server's metrics.
    pub scrape: Option<Result<AiperfServer, InputError>>,
    /// The boot logs' texts, by the name given; an unreadable log is in `log_errors`.
    pub log_texts: Vec<(String, String)>,
    pub log_errors: Vec<InputError>,
}

fn parse_opt<T>(
    f: &Option<InputFile>,
    read: impl Fn(&str, &[u8]) -> Result<T, InputError>,
) -> Option<Result<T, InputError>> {
    f.as_ref().map(|f| f.bytes().and_then(|b| read(&f.name, b)))
}

impl Parsed {
    /// Parses every input; `series` is the recording, already read (a front end streams
    /// a long one). An unreadable manifest is an error of its own (`errors`).
    pub fn read(
        input: &RunInput,
        series: Option<Result<Series, InputError>>,
        errors: &mut Vec<InputError>,
    ) -> Parsed {
        let manifest = input.manifest.as_ref().and_then(|m| {
            m.bytes()
                .and_then(|b| Manifest::read(&m.name, b))
                .map_err(|e| errors.push(e))
                .ok()
        });
        let bench = match input.bench.as_ref() {
            Some(first) if !input.bench_more.is_empty() => Some(crate::bench::runs::read_all(
                first,
                &input.bench_more,
                &input.bench_requests,
                manifest.as_ref(),
            )),
            Some(b) => Some(
                b.file
                    .bytes()
                    .and_then(|bytes| BenchResult::read(&b.file.name, bytes)),
            ),
            None => None,
        };
        // Boot logs decode lossily and never fail to parse; only an unreadable file fails.
        let mut log_texts = Vec::new();
        let mut log_errors = Vec::new();
        for f in &input.boot_logs {
            match f.bytes() {
                Ok(b) => log_texts.push((f.name.clone(), decode_lossy(b).into_owned())),
                Err(e) => log_errors.push(e),
            }
        }
        Parsed {
            before: parse_opt(&input.before, Snapshot::read),
            after: parse_opt(&input.after, Snapshot::read),
            series,
            bench,
            manifest,
            gate: parse_opt(&input.gate, docs::read),
            probe: parse_opt(&input.probe, docs::read),
            teardown: parse_opt(&input.teardown, docs::read),
            gpu: parse_opt(&input.gpu, GpuSamples::read),
            scrape: parse_opt(&input.aiperf_server, AiperfServer::read),
            log_texts,
            log_errors,
        }
    }

    /// The snapshots that parsed.
    pub fn snapshots(&self) -> Vec<&Snapshot> {
        [&self.before, &self.after]
            .into_iter()
            .filter_map(|s| s.as_ref().and_then(|r| r.as_ref().ok()))
            .collect()
    }

    /// The engine the load tool's scrape names.
    pub fn scrape_engine(&self) -> Option<crate::engine::Engine> {
        match &self.scrape {
            Some(Ok(s)) => s.engine,
            _ => None,
        }
    }

    /// The first unusable snapshot's error.
    pub fn snapshot_error(&self) -> Option<&InputError> {
        [&self.before, &self.after]
            .into_iter()
            .find_map(|s| s.as_ref().and_then(|r| r.as_ref().err()))
    }

    /// Every input error, in the order the notes list them.
    pub fn errors(&self) -> Vec<InputError> {
        fn err<T>(r: &Option<Result<T, InputError>>) -> Option<InputError> {
            r.as_ref().and_then(|r| r.as_ref().err()).cloned()
        }
        [
            err(&self.before),
            err(&self.after),
            err(&self.series),
            err(&self.bench),
            err(&self.gate),
            err(&self.probe),
            err(&self.teardown),
            err(&self.gpu),
            err(&self.scrape),
        ]
        .into_iter()
        .flatten()
        .chain(self.log_errors.iter().cloned())
        .collect()
    }

    /// Whether any input could be read at all.
    pub fn any_usable(&self, input: &RunInput) -> bool {
        fn ok<T>(r: &Option<Result<T, InputError>>) -> bool {
            matches!(r, Some(Ok(_)))
        }
        !self.log_texts.is_empty()
            || ok(&self.before)
            || ok(&self.after)
            || ok(&self.series)
            || ok(&self.gate)
            || ok(&self.probe)
            || ok(&self.teardown)
            || input.fleet.is_some()
            || ok(&self.scrape)
    }

    /// Every value the plausibility gate refused, input by input.
    pub fn implausible(&self) -> Vec<Implausible> {
        let mut all = Vec::new();
        for s in [&self.before, &self.after].into_iter().flatten().flatten() {
            all.extend(s.implausible.iter().cloned());
        }
        if let Some(Ok(s)) = &self.series {
            all.extend(s.implausible.iter().cloned());
        }
        if let Some(Ok(b)) = &self.bench {
            all.extend(b.implausible.iter().cloned());
            all.extend(
                b.requests
                    .iter()
                    .flat_map(|q| q.implausible.iter().cloned()),
            );
        }
        if let Some(Ok(g)) = &self.gpu {
            all.extend(g.implausible.iter().cloned());
        }
        if let Some(Ok(s)) = &self.scrape {
            all.extend(s.implausible.iter().cloned());
        }
        all
    }
}

/// Whether the folder holds any file of a run.
pub(super) fn has_run_files(input: &RunInput) -> bool {
    !input.boot_logs.is_empty()
        || input.before.is_some()
        || input.after.is_some()
        || input.series.is_some()
        || input.gate.is_some()
        || input.probe.is_some()
        || input.teardown.is_some()
        || input.fleet.is_some()
        || input.aiperf_server.is_some()
}

/// One note per file: its first refused value and how many more (a damaged series can
/// hold thousands).
pub(super) fn implausible_notes(all: &[Implausible]) -> Vec<String> {
    let mut notes: Vec<(String, usize, String)> = Vec::new();
    for i in all {
        match notes.iter_mut().find(|(f, _, _)| *f == i.file) {
            Some(n) => n.1 += 1,
            None => notes.push((i.file.clone(), 1, i.to_string())),
        }
    }
    notes
        .into_iter()
        .map(|(_, n, first)| match n {
            1 => format!("implausible value left out: {first}"),
            n => format!(
                "implausible value left out: {first} (and {} more in that file)",
                n - 1
            ),
        })
        .collect()
}

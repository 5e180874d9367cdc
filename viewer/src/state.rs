//! What the page holds: a run (where it came from, its packed files) and its analysis as
//! the page shows it, or several runs and their comparison, made by the same analyzer as
//! the command line.

use std::sync::Arc;

use analyzer::analysis::{Analysis, AnalyzeError, Options, RunInput};
use analyzer::compare::{self, Comparison, Overlay, Run, Tolerance};
use analyzer::input::InputError;
use analyzer::insights::charts::{BarChart, TimeChart};
use analyzer::insights::replay::Replay;
use analyzer::pack::{self, Form, Pack, Packs};
use analyzer::report::Report;
use analyzer::series::Series;

/// The charts, each shared (a 24-hour run's series are large: never copied).
#[derive(Clone, Default)]
pub struct SharedCharts {
    pub note: Option<String>,
    pub cache: Option<Arc<BarChart>>,
    pub requests: Option<Arc<TimeChart>>,
    pub kv: Option<Arc<TimeChart>>,
    pub tokens: Option<Arc<TimeChart>>,
    pub levels: Option<Arc<BarChart>>,
    pub pools: Option<Arc<BarChart>>,
    pub memory: Option<Arc<BarChart>>,
    /// The cards' clocks, power and temperature (T16).
    pub gpu: Option<Arc<TimeChart>>,
    /// The prefix-cache hit share over time (T17).
    pub prefix_cache: Option<Arc<TimeChart>>,
    /// The replay's frames (moved out of the Report like the charts).
    pub replay: Option<Arc<Replay>>,
}

/// An analysis as the page shows it.
pub struct Shown {
    /// The Report without its chart and replay data (moved to `charts`).
    pub report: Arc<Report>,
    pub charts: SharedCharts,
    pub errors: Vec<analyzer::input::InputError>,
    pub notes: Vec<String>,
}

impl Shown {
    fn new(a: Analysis) -> Shown {
        let mut report = a.report;
        let c = std::mem::take(&mut report.charts);
        let replay = report.replay.take().map(Arc::new);
        Shown {
            report: Arc::new(report),
            charts: SharedCharts {
                note: c.note,
                cache: c.cache.map(Arc::new),
                requests: c.requests.map(Arc::new),
                kv: c.kv.map(Arc::new),
                tokens: c.tokens.map(Arc::new),
                levels: c.levels.map(Arc::new),
                pools: c.pools.map(Arc::new),
                memory: c.memory.map(Arc::new),
                gpu: c.gpu.map(Arc::new),
                prefix_cache: c.prefix_cache.map(Arc::new),
                replay,
            },
            errors: a.errors,
            notes: a.notes,
        }
    }
}

/// A run the page shows.
pub struct Loaded {
    /// Where it came from ("this file", "the folder live").
    pub source: String,
    pub result: Result<Shown, String>,
    /// The run's files, to save as a one-file report.
    pub pack: Pack,
    /// When the one-file report was made (else now).
    pub generated_ms: Option<f64>,
}

impl Loaded {
    /// A run that could not even be unpacked.
    pub fn unreadable(source: String, error: String) -> Loaded {
        Loaded {
            source,
            result: Err(error),
            pack: Pack::default(),
            generated_ms: None,
        }
    }

    /// The run's title, for the saved file's tab.
    pub fn title(&self) -> String {
        self.result
            .as_ref()
            .map(|a| a.report.title.clone())
            .unwrap_or_else(|_| "inferlint report".into())
    }
}

/// Minutes east of UTC in the reader's zone.
fn local_offset_min() -> i32 {
    -(js_sys::Date::new_0().get_timezone_offset() as i32)
}

/// Analyzes a pack with the same analyzer as the terminal. A pack carried by this file
/// keeps its series as columns and the analysis reads the rows straight from them (never
/// its text); a dropped folder's files are moved into the analysis and back, never copied
/// (a day's series is tens of MB).
pub fn analyze_pack(pack: Pack, source: String) -> Loaded {
    let generated_ms = pack.generated_ms;
    if pack.files.iter().any(|f| f.form != Form::Text) {
        let result = analysis_of_pack(&pack).map(Shown::new);
        return Loaded {
            generated_ms,
            source,
            result,
            pack,
        };
    }
    let (input, opts) = pack::into_input(pack);
    let result = analysis_of(&input, opts.clone(), None).map(Shown::new);
    Loaded {
        generated_ms,
        source,
        result,
        pack: pack::into_pack(input, &opts, generated_ms),
    }
}

/// The pack's analysis, or what the page says when there is none.
fn analysis_of_pack(pack: &Pack) -> Result<Analysis, String> {
    let (input, opts, series) = pack::input_reading_series(pack);
    crate::dom::mark("rows-read");
    analysis_of(&input, opts, Some(series))
}

/// The inputs' analysis, or what the page says when there is none; `series`: the series
/// already read (`Some`), else read from `input` by the analysis.
fn analysis_of(
    input: &RunInput,
    mut opts: Options,
    series: Option<Option<Result<Series, InputError>>>,
) -> Result<Analysis, String> {
    opts.utc_offset_min = local_offset_min();
    let analysis = match series {
        Some(series) => analyzer::analysis::analyze_with_series(input, &opts, series),
        None => analyzer::analyze(input, &opts),
    };
    match analysis {
        Ok(a) => Ok(a),
        Err(AnalyzeError::NothingUsable(errors)) => Err(format!(
            "No usable run file. {}",
            errors
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("; ")
        )),
        Err(AnalyzeError::NoRunFiles) => Err(
            "No run files here: a run folder holds a boot log, before/after snapshots, a series \
             (*.series.jsonl), gate.json, probe.json or teardown.json."
                .to_string(),
        ),
        Err(e) => Err(e.to_string()),
    }
}

/// Several runs shown side by side.
pub struct Compared {
    /// Each run's column label and the run as one report would show it.
    pub runs: Vec<(String, Loaded)>,
    /// `None` when fewer than two runs could be analyzed.
    pub comparison: Option<Arc<Comparison>>,
    pub overlays: Vec<Arc<Overlay>>,
    /// The runs' files and the comparison's options, to save as one file.
    pub packs: Packs,
    /// Where the runs came from ("this file", "3 dropped folders").
    pub source: String,
}

/// Analyzes every run of `packs` and compares those that could be analyzed, against the
/// first as baseline when the packs say so.
pub fn compare_packs(packs: Packs, source: String) -> Compared {
    let analyses: Vec<(String, Result<Analysis, String>, Pack)> = packs
        .runs
        .iter()
        .map(|(label, p)| (label.clone(), analysis_of_pack(p), p.clone()))
        .collect();
    let ok: Vec<Run<'_>> = analyses
        .iter()
        .filter_map(|(label, a, _)| {
            a.as_ref().ok().map(|a| Run {
                label,
                report: &a.report,
            })
        })
        .collect();
    let tolerance = Tolerance {
        fraction: packs
            .option("tolerance")
            .and_then(|t| Tolerance::parse_percent(t).ok())
            .unwrap_or(compare::RATE_TOLERANCE),
        strict: packs.option("strict") == Some("1"),
    };
    let (comparison, overlays) = match ok.len() {
        0 | 1 => (None, Vec::new()),
        2 if packs.option("baseline") == Some("1") => (
            Some(compare::compare_with_baseline(ok[0], ok[1], tolerance)),
            compare::overlays(&ok),
        ),
        _ => (Some(compare::compare(&ok)), compare::overlays(&ok)),
    };
    let runs = analyses
        .into_iter()
        .map(|(label, a, pack)| {
            let loaded = Loaded {
                source: label.clone(),
                result: a.map(Shown::new),
                generated_ms: pack.generated_ms,
                pack,
            };
            (label, loaded)
        })
        .collect();
    Compared {
        runs,
        comparison: comparison.map(Arc::new),
        overlays: overlays.into_iter().map(Arc::new).collect(),
        packs,
        source,
    }
}

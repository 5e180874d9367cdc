//! What the page holds: a run (where it came from, its packed files) and its analysis as
//! the page shows it, made by the same analyzer as the command line.

use std::sync::Arc;

use analyzer::analysis::{Analysis, AnalyzeError};
use analyzer::insights::charts::{BarChart, TimeChart};
use analyzer::pack::{self, Pack};
use analyzer::report::Report;

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
}

/// An analysis as the page shows it.
pub struct Shown {
    /// The Report without its chart data (moved to `charts`).
    pub report: Arc<Report>,
    pub charts: SharedCharts,
    pub errors: Vec<analyzer::input::InputError>,
    pub notes: Vec<String>,
}

impl Shown {
    fn new(a: Analysis) -> Shown {
        let mut report = a.report;
        let c = std::mem::take(&mut report.charts);
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

/// Analyzes a pack with the same analyzer as the terminal.
pub fn analyze_pack(pack: Pack, source: String) -> Loaded {
    let (input, mut opts) = pack::from_pack(&pack);
    opts.utc_offset_min = local_offset_min();
    let result = match analyzer::analyze(&input, &opts) {
        Ok(a) => Ok(Shown::new(a)),
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
    };
    Loaded {
        generated_ms: pack.generated_ms,
        source,
        result,
        pack,
    }
}

//! The data behind every chart of the report (the Report's `charts`): the front ends draw
//! these values and compute nothing. Each chart serializes as the Report writes it. Long
//! time charts are reduced to what a screen shows ([`TimeChart::reduce`], `super::reduce`).

use serde::{Serialize, Serializer};

use crate::blocks::ceiling;
use crate::bootlog::{BootFacts, BootLog};
use crate::chunks::each_chunk;
use crate::engine::Engine;
use crate::gpu_samples::{seconds_since, GpuSamples};
use crate::num::{fixed, shortest, thousands};
use crate::rules::t09_falling_ceiling::SATURATED;
use crate::rules::t16_gpu_throttled::{self, DEPTH};
use crate::series::{present, Field, Series};

use super::cache::CacheMath;
use super::reduce::{self, Columns};

/// One line of a time chart; `values[i]` belongs to `t[i]`, `None` is a gap.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChartLine {
    pub key: String,
    pub label: String,
    /// `line`, `step` or `area`.
    pub kind: String,
    pub values: Vec<Option<f64>>,
}

/// A marked moment, e.g. "4 preemptions at 16.2 s".
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Marker {
    pub t: f64,
    pub count: f64,
    pub label: String,
}

/// A chart over time (seconds since the first sample on x).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimeChart {
    pub key: String,
    pub title: String,
    pub caption: String,
    pub y_label: String,
    /// A fixed top of the y axis (100 for percentages), else from the data.
    pub y_max: Option<f64>,
    /// Decimals of each line's values in the data table.
    pub decimals: usize,
    /// How many samples the chart was reduced from ([`TimeChart::reduce`]); written only
    /// when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reduced_from: Option<usize>,
    pub t: Vec<f64>,
    pub lines: Vec<ChartLine>,
    pub markers: Vec<Marker>,
    /// A horizontal reference line and its label ("asked for 32"): `{value, label}`.
    #[serde(serialize_with = "reference_line")]
    pub reference: Option<(f64, String)>,
    /// Stretches of time to shade (T16's throttle episodes); written only when there are.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bands: Vec<Band>,
}

impl TimeChart {
    /// Keeps only the samples a screen shows when there are more than [`reduce::BUDGET`]:
    /// per column of [`reduce::COLUMNS`], every line's first, lowest, highest and last
    /// sample (the union over the lines, so `t` stays shared) and each marker's sample;
    /// markers in one column become one, their counts summed (`word`: what they count).
    /// The caption and `reduced_from` say so. A shorter chart stays as it is.
    pub fn reduce(&mut self, word: &str) {
        let n = self.t.len();
        let (Some(&x0), Some(&x1)) = (self.t.first(), self.t.last()) else {
            return;
        };
        if n <= reduce::BUDGET || self.reduced_from.is_some() {
            return;
        }
        let grid = Columns::new(x0, x1, reduce::COLUMNS);
        let markers = merge_markers(&self.markers, grid, word);
        let mut keep = reduce::chart_indices(
            &self.t,
            self.lines.iter().map(|l| l.values.as_slice()),
            grid,
        );
        // Each mark's own sample, so reading the chart there names it.
        keep.extend(markers.iter().filter_map(|m| {
            let k = self.t.partition_point(|&x| x < m.t);
            (self.t.get(k) == Some(&m.t)).then_some(k)
        }));
        keep.sort_unstable();
        keep.dedup();
        if keep.len() >= n {
            return;
        }
        self.t = keep.iter().map(|&i| self.t[i]).collect();
        for l in &mut self.lines {
            l.values = keep.iter().map(|&i| l.values[i]).collect();
        }
        self.caption.push_str(&format!(
            " Drawn from {} of its {} samples: in each of {} equal stretches of time, every \
             line's first, lowest, highest and last sample, so every spike and the exact \
             extremes remain.",
            thousands(keep.len() as f64),
            thousands(n as f64),
            thousands(reduce::COLUMNS as f64)
        ));
        if markers.len() < self.markers.len() {
            self.caption
                .push_str(&format!(" A mark sums the {word}s of its stretch."));
        }
        self.markers = markers;
        self.reduced_from = Some(n);
    }
}

/// Markers falling in one column of `grid` as one, at the first one's time.
fn merge_markers(markers: &[Marker], grid: Columns, word: &str) -> Vec<Marker> {
    // (column, last time, merged, whether it took in another): the label of a merged
    // mark is written once, when its column is complete.
    let mut out: Vec<(usize, f64, Marker, bool)> = Vec::new();
    for m in markers {
        let c = grid.of(m.t);
        match out.last_mut() {
            Some((col, to, merged, more)) if *col == c => {
                merged.count += m.count;
                *to = m.t;
                *more = true;
            }
            _ => out.push((c, m.t, m.clone(), false)),
        }
    }
    out.into_iter()
        .map(|(_, to, mut m, more)| {
            if more {
                m.label = format!(
                    "{} {} from {} s to {} s",
                    shortest(m.count),
                    plural(word, m.count),
                    fixed(m.t, 1),
                    fixed(to, 1)
                );
            }
            m
        })
        .collect()
}

/// `word`, with an s unless `n` is one.
fn plural(word: &str, n: f64) -> String {
    if n == 1.0 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}

/// A shaded stretch of a time chart, from `from` to `to` seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Band {
    pub from: f64,
    pub to: f64,
    pub label: String,
}

/// A bar chart; `bars` are (label, value) in display order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BarChart {
    pub key: String,
    pub title: String,
    pub caption: String,
    pub unit: String,
    /// Column headings of the data table.
    pub columns: (String, String),
    pub decimals: usize,
    /// Each bar as `{label, value}`.
    #[serde(serialize_with = "labelled_bars")]
    pub bars: Vec<(String, f64)>,
}

/// A labelled value: a bar, or a reference line.
#[derive(Serialize)]
struct Labelled<'a> {
    label: &'a str,
    value: f64,
}

/// A reference line as `{value, label}`.
#[derive(Serialize)]
struct Reference<'a> {
    value: f64,
    label: &'a str,
}

fn reference_line<S: Serializer>(r: &Option<(f64, String)>, s: S) -> Result<S::Ok, S::Error> {
    r.as_ref()
        .map(|(value, label)| Reference {
            value: *value,
            label,
        })
        .serialize(s)
}

fn labelled_bars<S: Serializer>(bars: &[(String, f64)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(bars.iter().map(|(label, value)| Labelled {
        label,
        value: *value,
    }))
}

/// Every chart the run's inputs allow, in the report's order.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Charts {
    /// Opens the section (e.g. why the tokens-per-second chart is left out).
    pub note: Option<String>,
    pub cache: Option<BarChart>,
    pub requests: Option<TimeChart>,
    pub kv: Option<TimeChart>,
    pub tokens: Option<TimeChart>,
    pub levels: Option<BarChart>,
    pub pools: Option<BarChart>,
    /// GPU memory at start-up (shown with the server's facts).
    pub memory: Option<BarChart>,
    /// Each card's SM clock, power and temperature, throttle episodes shaded (T16).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<TimeChart>,
    /// The share of prompt tokens served from the prefix cache over time (T17).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix_cache: Option<TimeChart>,
}

impl Charts {
    /// Every time chart reduced to what a screen shows ([`TimeChart::reduce`]).
    pub fn reduce(&mut self, engine: Engine) {
        let word = engine.eviction_word();
        for c in [
            &mut self.requests,
            &mut self.kv,
            &mut self.tokens,
            &mut self.gpu,
            &mut self.prefix_cache,
        ]
        .into_iter()
        .flatten()
        {
            c.reduce(word);
        }
    }
}

/// What the charts draw on.
pub struct ChartInputs<'a> {
    pub engine: Engine,
    pub series: Option<&'a Series>,
    pub cache: Option<&'a CacheMath>,
    pub logs: &'a [BootLog],
    pub requested: Option<i64>,
    pub usable_blocks: Option<u64>,
    /// The series' sample times (`Series::times`), computed once by the caller.
    pub times: &'a [f64],
    /// The recorder's GPU samples.
    pub gpu: Option<&'a GpuSamples>,
}

pub fn build(inputs: &ChartInputs<'_>) -> Charts {
    let mut c = Charts {
        cache: inputs.cache.map(cache_chart),
        pools: pools_chart(inputs.logs),
        memory: inputs.logs.first().and_then(|l| memory_chart(&l.facts)),
        ..Charts::default()
    };
    if let Some(series) = inputs.series {
        let times = inputs.times;
        if series.rows.len() >= 2 && times.len() == series.rows.len() {
            // Both charts carry the same marks: found once (a pass over every reading).
            let marks = markers(inputs.engine, series, times);
            c.kv = Some(kv_chart(inputs, series, times, marks.clone()));
            c.requests = Some(requests_chart(inputs, series, times, marks));
            if inputs.engine.tokens_at_finish() {
                c.note = Some(format!(
                    "The output-tokens-per-second chart is left out: {} counts a request's \
                     tokens only when it finishes, so readings during the run show completions, \
                     not generation. The load tool's figure and T10 cover the whole run.",
                    inputs.engine.display()
                ));
            } else {
                c.tokens = tokens_chart(series, times);
            }
        }
        c.levels = levels_chart(series, times, inputs.requested);
        if series.rows.len() >= 2 && times.len() == series.rows.len() {
            c.prefix_cache = prefix_cache_chart(inputs.engine, series, times);
        }
    }
    c.gpu = inputs.gpu.and_then(|g| gpu_chart(g, inputs.series));
    c
}

/// Each card's SM clock as a share of its maximum, power as a share of its limit and
/// temperature, on the first card's sample times; T16's episodes shaded. Seconds count
/// from the series' first reading when there is one, so it lines up with the other charts.
fn gpu_chart(gpu: &GpuSamples, series: Option<&Series>) -> Option<TimeChart> {
    let zero = series
        .and_then(|s| s.rows.first())
        .map(|r| (r.t_mono_ns, r.t_wall))
        .or_else(|| gpu.rows.first().map(|r| (r.t_mono_ns, r.t_wall)))?;
    let cards = gpu.cards();
    let first = cards.first()?;
    let t: Vec<f64> = gpu
        .rows_of(first.index)
        .map(|r| seconds_since(r, zero.0, zero.1))
        .collect();
    if t.len() < 2 {
        return None;
    }
    let several = cards.len() > 1;
    let mut lines = Vec::new();
    for card in &cards {
        let rows: Vec<_> = gpu.rows_of(card.index).collect();
        let name = |what: &str| {
            if several {
                format!("GPU {} {what}", card.index)
            } else {
                what.to_string()
            }
        };
        let share = |v: Option<f64>, of: Option<f64>| match (v, of.filter(|m| *m > 0.0)) {
            (Some(v), Some(m)) => Some(v / m * 100.0),
            _ => None,
        };
        let column = |f: &dyn Fn(&crate::docs::GpuRow) -> Option<f64>| -> Vec<Option<f64>> {
            (0..t.len())
                .map(|k| rows.get(k).and_then(|r| f(r)))
                .collect()
        };
        let key = |what: &str| format!("gpu{}-{what}", card.index);
        lines.push(line(
            &key("clock"),
            &name("SM clock, % of max"),
            "line",
            column(&|r| share(r.sm_clock_mhz, card.max_sm_clock_mhz)),
        ));
        lines.push(line(
            &key("power"),
            &name("power, % of limit"),
            "line",
            column(&|r| share(r.power_w, card.power_limit_w)),
        ));
        lines.push(line(
            &key("temp"),
            &name("temperature, °C"),
            "line",
            column(&|r| r.temp_c),
        ));
    }
    let bands = t16_gpu_throttled::per_card(gpu, zero)
        .into_iter()
        .flat_map(|run| {
            let index = run.card.index;
            run.episodes.into_iter().map(move |(from, to, _)| Band {
                from,
                to,
                label: format!(
                    "GPU {index} throttled from {} s to {} s",
                    fixed(from, 1),
                    fixed(to, 1)
                ),
            })
        })
        .collect();
    Some(TimeChart {
        key: "gpu".into(),
        title: "GPU clock, power and temperature".into(),
        caption: format!(
            "The SM clock as a share of the card's maximum, power draw as a share of its limit, \
             and temperature, read by nvidia-smi during the load. Shaded: stretches where a \
             power or thermal limit held the clock under {}% of its maximum (T16).",
            fixed(DEPTH * 100.0, 0)
        ),
        y_label: "% of maximum, °C".into(),
        y_max: None,
        decimals: 0,
        reduced_from: None,
        t,
        lines,
        markers: Vec::new(),
        reference: None,
        bands,
    })
}

/// The share of prompt tokens served from the prefix cache between consecutive readings,
/// and since the first reading (T17); none when the counters never moved.
fn prefix_cache_chart(engine: Engine, series: &Series, times: &[f64]) -> Option<TimeChart> {
    let rows = &series.rows;
    let pairs = || {
        let queries = rows.values(Field::PrefixCacheQueries);
        rows.values(Field::PrefixCacheHits).zip(queries)
    };
    let first = pairs().find_map(|(h, q)| Some((h?, q?)))?;
    let mut last = first;
    let mut per_reading = Vec::with_capacity(rows.len());
    let mut since_start = Vec::with_capacity(rows.len());
    for pair in pairs() {
        let (Some(h), Some(q)) = pair else {
            per_reading.push(None);
            since_start.push(None);
            continue;
        };
        let share = |dh: f64, dq: f64| (dq > 0.0 && dh >= 0.0).then(|| dh / dq * 100.0);
        per_reading.push(share(h - last.0, q - last.1));
        since_start.push(share(h - first.0, q - first.1));
        last = (h, q);
    }
    if since_start.iter().all(Option::is_none) {
        return None;
    }
    let mut caption = format!(
        "Of the prompt tokens the server looked up in its prefix cache, the share it found there \
         and did not compute again: between one reading and the next, and since the first \
         ({}). From {}% on, T17 warns.",
        engine.prefix_cache().source,
        fixed(crate::rules::t17_prefix_cache_hits::WARN_SHARE * 100.0, 0)
    );
    if engine.tokens_at_finish() {
        caption.push_str(&format!(
            " {} counts a request's prompt tokens when it finishes, so the share moves in steps.",
            engine.display()
        ));
    }
    Some(TimeChart {
        key: "prefix_cache".into(),
        title: "Prompt tokens served from the prefix cache".into(),
        caption,
        y_label: "% of prompt tokens".into(),
        y_max: Some(100.0),
        decimals: 1,
        reduced_from: None,
        t: times.to_vec(),
        lines: vec![
            line("prefix_cache", "between readings", "line", per_reading),
            line(
                "prefix_cache_total",
                "since the first reading",
                "line",
                since_start,
            ),
        ],
        markers: Vec::new(),
        reference: None,
        bands: Vec::new(),
    })
}

fn cache_chart(math: &CacheMath) -> BarChart {
    let mut caption = format!(
        "Each request holds its prompt and its output so far in the cache, about {} tokens at the end",
        thousands(math.per_request)
    );
    if math.at_full != math.per_request {
        if let Some(b) = math.block {
            caption.push_str(&format!(
                ", {} in whole {b}-token blocks",
                thousands(math.at_full)
            ));
        }
    }
    caption.push_str(&format!(
        ". All {} at the end of their output need {} tokens; ",
        math.n,
        thousands(math.need)
    ));
    if math.need > math.pool as f64 {
        caption.push_str(&format!("{} of them fit.", math.fit));
    } else {
        caption.push_str(&format!(
            "{} tokens to spare.",
            thousands(math.pool as f64 - math.need)
        ));
    }
    BarChart {
        key: "cache".into(),
        title: "The KV cache and the load".into(),
        caption,
        unit: "tokens".into(),
        bars: vec![
            ("KV cache".into(), math.pool as f64),
            (format!("{} requests at full length", math.n), math.need),
        ],
        columns: ("".into(), "tokens".into()),
        decimals: 0,
    }
}

/// Eviction markers: wherever the counter rises above its previous reading.
fn markers(engine: Engine, series: &Series, times: &[f64]) -> Vec<Marker> {
    let mut out = Vec::new();
    let mut last: Option<f64> = None;
    let word = engine.eviction_word();
    let counter = series.rows.column(Field::Preemptions);
    each_chunk(counter.len(), &mut |chunk| {
        for k in chunk {
            let Some(v) = present(counter[k]) else {
                continue;
            };
            if let Some(prev) = last {
                if v > prev {
                    let n = v - prev;
                    out.push(Marker {
                        t: times[k],
                        count: n,
                        label: format!(
                            "{} {} at {} s",
                            shortest(n),
                            plural(word, n),
                            fixed(times[k], 1)
                        ),
                    });
                }
            }
            last = Some(v);
        }
    });
    out
}

fn requests_chart(
    inputs: &ChartInputs<'_>,
    series: &Series,
    times: &[f64],
    markers: Vec<Marker>,
) -> TimeChart {
    // The three lines in one pass over the readings (a long run's rows are tens of MB).
    let n = series.rows.len();
    let (mut running, mut waiting, mut fit) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let rows = &series.rows;
    let (run_col, wait_col) = (rows.column(Field::Running), rows.column(Field::Waiting));
    let usage = rows.column(Field::KvUsage);
    each_chunk(n, &mut |chunk| {
        for k in chunk {
            let (r, w) = (present(run_col[k]), present(wait_col[k]));
            running.push(r);
            waiting.push(w);
            fit.push(match (r, present(usage[k])) {
                (Some(run), Some(u)) if u >= SATURATED && run > 0.0 => {
                    ceiling(run, u, inputs.usable_blocks).map(|c| c as f64)
                }
                _ => None,
            });
        }
    });
    let mut caption = format!(
        "Requests the server was working on, requests queued behind them, and how many \
         requests of their current size fit in the cache when it is full (drawn only while it \
         is at least {}% full).",
        fixed(SATURATED * 100.0, 0)
    );
    if inputs.engine.evictions_counted() {
        caption.push_str(&format!(" Marks show {}s.", inputs.engine.eviction_word()));
    }
    if inputs.engine.gauges_lag() {
        caption.push_str(&lag_note(inputs.engine));
    }
    TimeChart {
        key: "requests".into(),
        title: "Requests over time".into(),
        caption,
        y_label: "requests".into(),
        y_max: None,
        reduced_from: None,
        t: times.to_vec(),
        lines: vec![
            line("running", "running", "line", running),
            line("waiting", "waiting", "line", waiting),
            line("fit", "fit in cache", "step", fit),
        ],
        markers,
        reference: inputs
            .requested
            .map(|r| (r as f64, format!("asked for {r}"))),
        decimals: 0,
        bands: Vec::new(),
    }
}

fn lag_note(engine: Engine) -> String {
    format!(
        " {}'s readings change only when a request completes, so each line holds its last \
         value in between.",
        engine.display()
    )
}

fn line(key: &str, label: &str, kind: &str, values: Vec<Option<f64>>) -> ChartLine {
    ChartLine {
        key: key.into(),
        label: label.into(),
        kind: kind.into(),
        values,
    }
}

fn kv_chart(
    inputs: &ChartInputs<'_>,
    series: &Series,
    times: &[f64],
    markers: Vec<Marker>,
) -> TimeChart {
    let mut caption = "Share of the KV cache holding requests.".to_string();
    if let Some(n) = inputs.usable_blocks {
        caption.push_str(&format!(
            " The gauge moves in steps of 1/{n}: one block is held back (T14)."
        ));
    }
    if inputs.engine == Engine::Sglang {
        caption.push_str(
            " SGLang reports its fullest memory pool, rounded to 1%: for a hybrid model that \
             can be the per-request state slots rather than the KV cache.",
        );
    }
    if inputs.engine.gauges_lag() {
        caption.push_str(&lag_note(inputs.engine));
    }
    TimeChart {
        key: "kv".into(),
        title: "KV cache in use".into(),
        caption,
        y_label: "% in use".into(),
        y_max: Some(100.0),
        reduced_from: None,
        t: times.to_vec(),
        lines: vec![line(
            "kv",
            "% in use",
            "area",
            percent(series.rows.column(Field::KvUsage)),
        )],
        markers,
        reference: None,
        decimals: 1,
        bands: Vec::new(),
    }
}

/// Every reading of a fraction as a percentage.
fn percent(fractions: &[f64]) -> Vec<Option<f64>> {
    let mut out = Vec::with_capacity(fractions.len());
    each_chunk(fractions.len(), &mut |chunk| {
        out.extend(
            fractions[chunk]
                .iter()
                .map(|&u| present(u).map(|u| u * 100.0)),
        );
    });
    out
}

/// Output tokens per second over a sliding one-second window: for each sample i, j is
/// the earliest sample with t_i − t_j ≤ 1 s; (g_i − g_j) / (t_i − t_j).
fn tokens_chart(series: &Series, times: &[f64]) -> Option<TimeChart> {
    let tokens = series.rows.column(Field::GenerationTokens);
    let mut values = Vec::with_capacity(times.len());
    let mut j = 0;
    each_chunk(times.len(), &mut |chunk| {
        for k in chunk {
            while times[k] - times[j] > 1.0 {
                j += 1;
            }
            let v = match (present(tokens[k]), present(tokens[j])) {
                (Some(gi), Some(gj)) if j != k && gi >= gj && times[k] > times[j] => {
                    Some((gi - gj) / (times[k] - times[j]))
                }
                _ => None,
            };
            values.push(v);
        }
    });
    values.iter().any(Option::is_some).then(|| TimeChart {
        key: "tokens".into(),
        title: "Output tokens per second".into(),
        caption: "Generated tokens over a sliding one-second window, from the server's own \
                  counter."
            .into(),
        y_label: "tokens/s".into(),
        y_max: None,
        reduced_from: None,
        t: times.to_vec(),
        lines: vec![line("tokens", "tokens/s", "line", values)],
        markers: Vec::new(),
        reference: None,
        decimals: 1,
        bands: Vec::new(),
    })
}

/// Time spent at each running count: each pair's first sample's running (whole) gets dt.
fn levels_chart(series: &Series, times: &[f64], requested: Option<i64>) -> Option<BarChart> {
    // Levels below `DENSE` are summed by index (a map lookup a reading is most of this
    // loop); each level's sum is added in the same order either way.
    const DENSE: usize = 1 << 12;
    let mut dense: Vec<Option<f64>> = Vec::new();
    let mut at: std::collections::BTreeMap<i64, f64> = std::collections::BTreeMap::new();
    let running = series.rows.column(Field::Running);
    let pairs = times.len().min(running.len()).saturating_sub(1);
    each_chunk(pairs, &mut |chunk| {
        for k in chunk {
            let Some(r) = present(running[k]) else {
                continue;
            };
            let level = r.trunc() as i64;
            let dt = times[k + 1] - times[k];
            if level > 0 && dt > 0.0 {
                match usize::try_from(level).ok().filter(|&l| l < DENSE) {
                    Some(l) => {
                        if dense.len() <= l {
                            dense.resize(l + 1, None);
                        }
                        *dense[l].get_or_insert(0.0) += dt;
                    }
                    None => *at.entry(level).or_default() += dt,
                }
            }
        }
    });
    at.extend(
        dense
            .iter()
            .enumerate()
            .filter_map(|(l, sum)| Some((l as i64, (*sum)?))),
    );
    let top = *at.keys().next_back()?;
    let mut caption = "Each bar is the total time the server spent working on exactly that \
                       many requests at once."
        .to_string();
    if let Some(r) = requested {
        caption.push_str(&format!(" The load asked for {r} the whole time"));
        if top < r {
            caption.push_str(&format!(", but the server never ran more than {top}"));
        }
        caption.push('.');
    }
    Some(BarChart {
        key: "levels".into(),
        title: "How many requests ran at once, and for how long".into(),
        caption,
        unit: "seconds".into(),
        bars: at
            .iter()
            .rev()
            .map(|(level, secs)| (level.to_string(), *secs))
            .collect(),
        columns: ("running at once".into(), "seconds".into()),
        decimals: 2,
    })
}

fn pools_chart(logs: &[BootLog]) -> Option<BarChart> {
    let bars: Vec<(String, f64)> = logs
        .iter()
        .filter_map(|l| {
            let pool = l.facts.kv_pool_tokens?;
            let label = if l.label.chars().count() > 18 {
                format!("{}…", l.label.chars().take(17).collect::<String>())
            } else {
                l.label.clone()
            };
            Some((label, pool as f64))
        })
        .collect();
    (bars.len() >= 2).then(|| BarChart {
        key: "pools".into(),
        title: "KV pool per boot".into(),
        caption: "Compare results only between boots with the same pool (T4).".into(),
        unit: "tokens".into(),
        bars,
        columns: ("boot log".into(), "pool tokens".into()),
        decimals: 0,
    })
}

fn memory_chart(facts: &BootFacts) -> Option<BarChart> {
    let parts: Vec<(String, f64)> = [
        ("Model weights", facts.model_load_gib),
        ("KV cache", facts.available_kv_cache_gib),
        ("CUDA graphs", facts.cudagraph_actual_gib),
        ("Activation peak", facts.peak_activation_gib),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.filter(|&g| g != 0.0).map(|g| (k.to_string(), g)))
    .collect();
    (parts.len() >= 2).then(|| BarChart {
        key: "memory".into(),
        title: "GPU memory at start-up".into(),
        caption: "The KV cache gets what the memory setting leaves after the others, so any \
                  change to them moves it (T4, T11)."
            .into(),
        unit: "GiB".into(),
        bars: parts,
        columns: ("part".into(), "GiB".into()),
        decimals: 2,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::docs::gpu::{GpuCard, GpuHeader, GpuRow};
    use crate::series::Row;

    fn series(n: usize, hits: impl Fn(usize) -> f64) -> Series {
        Series {
            rows: (0..n)
                .map(|k| Row {
                    t_wall: 100.0 + k as f64,
                    t_mono_ns: Some(k as i64 * 1_000_000_000),
                    prefix_cache_hits: Some(hits(k)),
                    prefix_cache_queries: Some(k as f64 * 100.0),
                    ..Row::default()
                })
                .collect(),
            ..Series::default()
        }
    }

    #[test]
    fn the_gpu_chart_shades_throttle_episodes_on_the_series_clock() {
        let rows = (0..12)
            .map(|k| {
                let slow = (4..8).contains(&k);
                GpuRow {
                    // The GPU samples start half a second after the series.
                    t_wall: 100.5 + k as f64 * 0.5,
                    t_mono_ns: Some(500_000_000 + k as i64 * 500_000_000),
                    gpu: 0,
                    sm_clock_mhz: Some(if slow { 1000.0 } else { 2000.0 }),
                    power_w: Some(300.0),
                    temp_c: Some(if slow { 90.0 } else { 70.0 }),
                    util_pct: Some(99.0),
                    reasons: Some(vec!["sw_thermal_slowdown".into()]),
                }
            })
            .collect();
        let gpu = GpuSamples {
            header: Some(GpuHeader {
                interval_s: Some(0.5),
                reasons_field: None,
                gpus: vec![GpuCard {
                    index: 0,
                    name: "A".into(),
                    max_sm_clock_mhz: Some(2000.0),
                    power_limit_w: Some(400.0),
                }],
            }),
            rows,
            ..GpuSamples::default()
        };
        let s = series(5, |_| 0.0);
        let c = gpu_chart(&gpu, Some(&s)).unwrap();
        assert_eq!(c.t[0], 0.5);
        assert_eq!(c.lines.len(), 3);
        assert_eq!(c.lines[0].values[0], Some(100.0));
        assert_eq!(c.lines[0].values[4], Some(50.0));
        assert_eq!(c.lines[1].values[0], Some(75.0));
        assert_eq!(c.bands.len(), 1);
        assert_eq!((c.bands[0].from, c.bands[0].to), (2.5, 4.5));
        assert_eq!(c.bands[0].label, "GPU 0 throttled from 2.5 s to 4.5 s");
        // Bands are written only when there are some.
        let json = crate::json::to_compact(&c);
        assert!(json.contains("\"bands\": [{\"from\": 2.5"), "{json}");
        let none = TimeChart {
            bands: Vec::new(),
            ..c
        };
        assert!(!crate::json::to_compact(&none).contains("bands"));
    }

    #[test]
    fn the_prefix_cache_chart_gives_the_share_per_reading_and_since_the_first() {
        // 100 tokens looked up per second; 50 of them hits from the third second on.
        let s = series(5, |k| if k >= 2 { (k as f64 - 1.0) * 50.0 } else { 0.0 });
        let times = s.times();
        let c = prefix_cache_chart(Engine::Vllm, &s, &times).unwrap();
        assert_eq!(
            c.lines[0].values,
            vec![None, Some(0.0), Some(50.0), Some(50.0), Some(50.0)]
        );
        assert_eq!(c.lines[1].values[4], Some(37.5));
        assert!(c.caption.contains("vllm:prefix_cache_hits_total"));
        // Counters that never moved give no chart.
        let flat = Series {
            rows: s
                .rows
                .iter()
                .map(|r| Row {
                    prefix_cache_queries: Some(0.0),
                    ..r
                })
                .collect(),
            ..Series::default()
        };
        assert!(prefix_cache_chart(Engine::Vllm, &flat, &times).is_none());
    }

    fn long_chart(n: usize) -> TimeChart {
        let t: Vec<f64> = (0..n).map(|k| k as f64 * 0.25).collect();
        let markers = [10, 11, n / 2]
            .into_iter()
            .map(|k| Marker {
                t: t[k],
                count: 2.0,
                label: format!("2 preemptions at {} s", fixed(t[k], 1)),
            })
            .collect();
        TimeChart {
            key: "kv".into(),
            title: "KV".into(),
            caption: "Share.".into(),
            y_label: "%".into(),
            y_max: None,
            decimals: 1,
            reduced_from: None,
            lines: vec![line(
                "kv",
                "kv",
                "line",
                (0..n).map(|k| Some((k % 13) as f64)).collect(),
            )],
            t,
            markers,
            reference: None,
            bands: Vec::new(),
        }
    }

    #[test]
    fn a_chart_within_the_budget_stays_as_it_is() {
        let mut c = long_chart(reduce::BUDGET);
        let before = c.clone();
        c.reduce("preemption");
        assert_eq!(c, before);
        assert!(!crate::json::to_compact(&c).contains("reduced_from"));
    }

    #[test]
    fn a_long_chart_is_reduced_and_says_so() {
        let n = 100_000;
        let mut c = long_chart(n);
        c.lines[0].values[n / 3] = Some(99.0);
        c.reduce("preemption");
        assert_eq!(c.reduced_from, Some(n));
        assert!(c.t.len() <= 4 * reduce::COLUMNS + 3, "{}", c.t.len());
        assert_eq!((c.t[0], *c.t.last().unwrap()), (0.0, (n - 1) as f64 * 0.25));
        assert!(c.lines[0].values.contains(&Some(99.0)));
        assert!(
            c.caption.contains("of its 100,000 samples"),
            "{}",
            c.caption
        );
        assert!(crate::json::to_compact(&c).contains("\"reduced_from\": 100000"));
        // The two marks a column apart merge; each kept mark sits on a kept sample.
        assert_eq!(c.markers.len(), 2);
        assert_eq!(c.markers[0].count, 4.0);
        assert_eq!(c.markers[0].label, "4 preemptions from 2.5 s to 2.8 s");
        assert_eq!(
            c.markers[1].label,
            format!("2 preemptions at {} s", fixed(c.markers[1].t, 1))
        );
        assert!(c.markers.iter().all(|m| c.t.contains(&m.t)));
        assert!(c
            .caption
            .ends_with("A mark sums the preemptions of its stretch."));
        // Reducing again changes nothing.
        let once = c.clone();
        c.reduce("preemption");
        assert_eq!(c, once);
    }
}

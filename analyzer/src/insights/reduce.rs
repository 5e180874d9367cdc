//! Long charts reduced to what a screen shows, the one rule both the Report and the page
//! use: the time axis is cut into equal columns and, per column, every line keeps its
//! first, lowest, highest and last present sample, and where gaps start so a gap stays a
//! gap. Every spike, the exact extremes and the first and last samples survive; a 24-hour
//! recording of 345,600 samples keeps a few thousand. Pure arithmetic (the page runs it in
//! wasm too).

/// Columns a chart of the Report keeps data for: the width of the page's plot (784 of its
/// canvas's 880 pixels), which reduces again per pixel with [`runs`].
pub const COLUMNS: usize = 800;

/// Charts with at most this many samples are never reduced: at four samples per column
/// they would keep about as many as they have.
pub const BUDGET: usize = 4 * COLUMNS;

/// The column grid: `columns` equal columns spanning `x0..=x1`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Columns {
    x0: f64,
    span: f64,
    columns: usize,
}

impl Columns {
    pub fn new(x0: f64, x1: f64, columns: usize) -> Columns {
        Columns {
            x0,
            span: if x1 > x0 { x1 - x0 } else { 1.0 },
            columns: columns.max(1),
        }
    }

    /// The column `x` falls in; values outside `x0..=x1` go to the edge columns.
    pub fn of(&self, x: f64) -> usize {
        // No `floor`: after `max(0.0)` the cast's truncation is the floor (NaN gives 0
        // either way), and it spares a libm call per sample where `floor` is not inlined.
        let c = (x - self.x0) / self.span * self.columns as f64;
        (c.max(0.0) as usize).min(self.columns - 1)
    }
}

/// A sample's value when it is drawable: present and finite.
fn present(y: Option<f64>) -> Option<f64> {
    y.filter(|v| v.is_finite())
}

/// The stretches of consecutive samples that fall in one column of `grid`, as index
/// ranges in order: found once per chart and shared by its lines.
fn column_runs(xs: &[f64], grid: Columns) -> Vec<std::ops::Range<usize>> {
    let mut runs = Vec::with_capacity(grid.columns.min(xs.len()));
    let mut start = 0;
    let mut column = None;
    crate::chunks::each_chunk(xs.len(), &mut |chunk| {
        for i in chunk {
            let c = grid.of(xs[i]);
            if column.is_some_and(|col| col != c) {
                runs.push(start..i);
                start = i;
            }
            column = Some(c);
        }
    });
    if column.is_some() {
        runs.push(start..xs.len());
    }
    runs
}

/// Appends to `out` one column's kept indices, ascending and each once.
fn push_sorted(mut idx: [usize; 6], n: usize, out: &mut Vec<usize>) {
    let idx = &mut idx[..n];
    idx.sort_unstable();
    let mut last = None;
    for &i in idx.iter() {
        if last != Some(i) {
            out.push(i);
            last = Some(i);
        }
    }
}

/// [`line_indices`] over column runs already found ([`column_runs`]).
fn line_indices_in(runs: &[std::ops::Range<usize>], ys: &[Option<f64>], out: &mut Vec<usize>) {
    // Whether the sample before was present (an absent one then starts a gap).
    let mut in_run = false;
    for run in runs {
        column_indices(run.clone(), ys, &mut in_run, out);
    }
}

/// One column's part of [`line_indices_in`]. Not inlined: a call per column lets a
/// browser run the optimized code after the first few (`crate::chunks`).
#[inline(never)]
fn column_indices(
    run: std::ops::Range<usize>,
    ys: &[Option<f64>],
    in_run: &mut bool,
    out: &mut Vec<usize>,
) {
    // First, lowest, highest, last present sample (with the lowest and highest
    // values), and the first and last sample where a gap starts.
    let mut present_idx: Option<([usize; 4], f64, f64)> = None;
    let mut gaps: Option<(usize, usize)> = None;
    for i in run {
        let Some(y) = present(ys.get(i).copied().flatten()) else {
            if *in_run {
                gaps = Some(gaps.map_or((i, i), |(first, _)| (first, i)));
                *in_run = false;
            }
            continue;
        };
        *in_run = true;
        match &mut present_idx {
            Some((idx, low, high)) => {
                if y < *low {
                    idx[1] = i;
                    *low = y;
                }
                if y > *high {
                    idx[2] = i;
                    *high = y;
                }
                idx[3] = i;
            }
            None => present_idx = Some(([i; 4], y, y)),
        }
    }
    // At most six indices: sorted on the stack, not in a vector of their own.
    let mut idx = [0usize; 6];
    let mut n = 0;
    for i in present_idx.into_iter().flat_map(|(p, _, _)| p) {
        idx[n] = i;
        n += 1;
    }
    for i in gaps.into_iter().flat_map(|(a, b)| [a, b]) {
        idx[n] = i;
        n += 1;
    }
    push_sorted(idx, n, out);
}

/// Appends to `out` the indices of `ys` a drawing on `grid` needs, ascending: per column,
/// the first, lowest, highest and last present sample, and the first and last absent
/// sample that follows a present one (where a gap starts: the drawing breaks there, and
/// a gap across a column's edge always keeps its start). `xs` ascend; `ys[i]` belongs to
/// `xs[i]`. With at most one sample per column every sample is kept.
pub fn line_indices(xs: &[f64], ys: &[Option<f64>], grid: Columns, out: &mut Vec<usize>) {
    let n = xs.len().min(ys.len());
    line_indices_in(&column_runs(&xs[..n], grid), ys, out);
}

/// The points of one line a drawing of `columns` columns over `x0..=x1` needs, split into
/// runs wherever a value is absent (what the page draws, per pixel column).
pub fn runs(
    xs: &[f64],
    ys: &[Option<f64>],
    x0: f64,
    x1: f64,
    columns: usize,
) -> Vec<Vec<(f64, f64)>> {
    let mut idx = Vec::new();
    line_indices(xs, ys, Columns::new(x0, x1, columns), &mut idx);
    let mut out = Vec::new();
    let mut run = Vec::new();
    for i in idx {
        match present(ys[i]) {
            Some(y) => run.push((xs[i], y)),
            None if !run.is_empty() => out.push(std::mem::take(&mut run)),
            None => {}
        }
    }
    if !run.is_empty() {
        out.push(run);
    }
    out
}

/// The samples several lines sharing `xs` keep on `grid`: the union of each line's
/// [`line_indices`], and always the first and last sample (the axis keeps its span).
pub fn chart_indices<'a>(
    xs: &[f64],
    lines: impl IntoIterator<Item = &'a [Option<f64>]>,
    grid: Columns,
) -> Vec<usize> {
    let mut idx = Vec::new();
    if let Some(last) = xs.len().checked_sub(1) {
        idx.extend([0, last]);
    }
    // The columns once for every line (a long chart has hundreds of thousands of samples).
    let runs = column_runs(xs, grid);
    for ys in lines {
        if ys.len() >= xs.len() {
            line_indices_in(&runs, ys, &mut idx);
        } else {
            line_indices(xs, ys, grid, &mut idx);
        }
    }
    idx.sort_unstable();
    idx.dedup();
    idx
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(xs: &[f64], ys: &[Option<f64>], columns: usize) -> Vec<usize> {
        let mut idx = Vec::new();
        let grid = Columns::new(xs[0], xs[xs.len() - 1], columns);
        line_indices(xs, ys, grid, &mut idx);
        idx
    }

    #[test]
    fn a_spike_in_the_middle_and_the_extremes_survive() {
        let n = 345_600;
        let xs: Vec<f64> = (0..n).map(|i| i as f64 * 0.25).collect();
        let mut ys: Vec<Option<f64>> = (0..n).map(|i| Some((i % 97) as f64 + 1.0)).collect();
        ys[200_000] = Some(1_000.0);
        ys[123_457] = Some(-5.0);
        let idx = all(&xs, &ys, COLUMNS);
        assert!(idx.len() <= 4 * COLUMNS, "{}", idx.len());
        assert!(idx.windows(2).all(|w| w[0] < w[1]));
        for must in [0, 123_457, 200_000, n - 1] {
            assert!(idx.contains(&must), "{must}");
        }
        let runs = runs(&xs, &ys, xs[0], xs[n - 1], 800);
        let points: usize = runs.iter().map(Vec::len).sum();
        assert_eq!(runs.len(), 1);
        assert!(points <= 4 * 800, "{points}");
        assert!(runs[0].iter().any(|p| p.1 == 1_000.0));
        assert!(runs[0].iter().any(|p| p.1 == -5.0));
    }

    #[test]
    fn a_short_line_keeps_every_sample() {
        let xs: Vec<f64> = (0..50).map(f64::from).collect();
        let ys: Vec<Option<f64>> = (0..50).map(|i| Some(f64::from(i * i % 7))).collect();
        assert_eq!(all(&xs, &ys, COLUMNS), (0..50).collect::<Vec<_>>());
    }

    #[test]
    fn absent_values_split_runs_and_stay_in_the_kept_samples() {
        let xs = [0.0, 1.0, 2.0, 3.0, 4.0];
        let ys = [Some(1.0), Some(2.0), None, Some(3.0), Some(4.0)];
        assert_eq!(
            runs(&xs, &ys, 0.0, 4.0, 800),
            vec![vec![(0.0, 1.0), (1.0, 2.0)], vec![(3.0, 3.0), (4.0, 4.0)]]
        );
        // One sample a column: every sample kept. One column for all: the first and
        // lowest (0), highest and last (4), and the gap's start between them.
        assert_eq!(all(&xs, &ys, 5), vec![0, 1, 2, 3, 4]);
        assert_eq!(all(&xs, &ys, 1), vec![0, 2, 4]);
        let long: Vec<f64> = (0..1_000).map(f64::from).collect();
        let mut gappy: Vec<Option<f64>> = vec![Some(1.0); 1_000];
        for y in &mut gappy[400..600] {
            *y = None;
        }
        gappy[700] = Some(f64::NAN);
        // Two columns: each keeps its first, lowest, highest and last present sample and
        // where its gaps start (400; 700, the unreadable value).
        let idx = all(&long, &gappy, 2);
        assert_eq!(idx, vec![0, 399, 400, 600, 700, 999]);
        assert_eq!(runs(&long, &gappy, 0.0, 999.0, 2).len(), 3);
        // A line flickering between a value and a gap keeps at most six samples a column.
        let flicker: Vec<Option<f64>> = (0..1_000)
            .map(|i| (i % 2 == 0).then_some(f64::from(i % 7)))
            .collect();
        assert!(all(&long, &flicker, 10).len() <= 6 * 10);
    }

    #[test]
    fn the_chart_keeps_the_union_of_its_lines_and_both_ends() {
        let xs: Vec<f64> = (0..100).map(f64::from).collect();
        let flat = vec![Some(5.0); 100];
        let mut spiky = vec![None; 100];
        spiky[10] = Some(1.0);
        spiky[11] = Some(9.0);
        let grid = Columns::new(0.0, 99.0, 1);
        let idx = chart_indices(&xs, [flat.as_slice(), spiky.as_slice()], grid);
        assert_eq!(idx, vec![0, 10, 11, 12, 99]);
    }
}

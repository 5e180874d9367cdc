//! Long series drawn at the canvas's resolution: at most four points per pixel column
//! (the first, lowest, highest and last sample falling in it), so a 24-hour recording of
//! 350,000 samples draws a few thousand points and still shows every spike.

/// The points of one line, split into runs wherever a value is absent, reduced to at most
/// four points per column of `columns` columns spanning `x0..=x1`. `xs` ascend.
pub fn reduce(
    xs: &[f64],
    ys: &[Option<f64>],
    x0: f64,
    x1: f64,
    columns: usize,
) -> Vec<Vec<(f64, f64)>> {
    let columns = columns.max(1);
    let span = if x1 > x0 { x1 - x0 } else { 1.0 };
    let column = |x: f64| -> usize {
        let c = ((x - x0) / span * columns as f64).floor();
        (c.max(0.0) as usize).min(columns - 1)
    };
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut run: Vec<(f64, f64)> = Vec::new();
    // The current column's first, min, max and last samples, by index.
    let mut bucket: Option<(usize, [usize; 4])> = None;
    let flush = |bucket: &mut Option<(usize, [usize; 4])>, run: &mut Vec<(f64, f64)>| {
        if let Some((_, mut idx)) = bucket.take() {
            idx.sort_unstable();
            let mut last = usize::MAX;
            for i in idx {
                if i != last {
                    run.push((xs[i], ys[i].unwrap_or(0.0)));
                    last = i;
                }
            }
        }
    };
    for (i, (&x, y)) in xs.iter().zip(ys).enumerate() {
        let Some(y) = y.filter(|v| v.is_finite()) else {
            flush(&mut bucket, &mut run);
            if !run.is_empty() {
                out.push(std::mem::take(&mut run));
            }
            continue;
        };
        let c = column(x);
        match &mut bucket {
            Some((col, idx)) if *col == c => {
                if y < ys[idx[1]].unwrap_or(f64::INFINITY) {
                    idx[1] = i;
                }
                if y > ys[idx[2]].unwrap_or(f64::NEG_INFINITY) {
                    idx[2] = i;
                }
                idx[3] = i;
            }
            _ => {
                flush(&mut bucket, &mut run);
                bucket = Some((c, [i; 4]));
            }
        }
    }
    flush(&mut bucket, &mut run);
    if !run.is_empty() {
        out.push(run);
    }
    out
}

/// The index of the sample nearest to `x` (`xs` ascending, not empty).
pub fn nearest(xs: &[f64], x: f64) -> usize {
    let i = xs.partition_point(|&v| v < x);
    if i == 0 {
        0
    } else if i >= xs.len() {
        xs.len() - 1
    } else if (xs[i] - x).abs() < (x - xs[i - 1]).abs() {
        i
    } else {
        i - 1
    }
}

/// Which rows a data table shows: every row up to `max`, else every k-th row (and the
/// last), k the smallest step that keeps the table within `max` rows.
pub fn table_rows(n: usize, max: usize) -> (Vec<usize>, usize) {
    if n <= max {
        return ((0..n).collect(), 1);
    }
    let step = n.div_ceil(max.max(1));
    let mut rows: Vec<usize> = (0..n).step_by(step).collect();
    if rows.last() != Some(&(n - 1)) {
        rows.push(n - 1);
    }
    (rows, step)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_series_keep_at_most_four_points_per_column_and_every_extreme() {
        let n = 345_600;
        let xs: Vec<f64> = (0..n).map(|i| i as f64 * 0.25).collect();
        let mut ys: Vec<Option<f64>> = (0..n).map(|i| Some((i % 97) as f64)).collect();
        ys[200_000] = Some(1_000.0);
        let runs = reduce(&xs, &ys, xs[0], xs[n - 1], 800);
        let points: usize = runs.iter().map(Vec::len).sum();
        assert_eq!(runs.len(), 1);
        assert!(points <= 4 * 800, "{points}");
        assert!(runs[0].iter().any(|p| p.1 == 1_000.0));
        assert!(runs[0].windows(2).all(|w| w[0].0 <= w[1].0));
    }

    #[test]
    fn gaps_split_lines_and_short_series_stay_whole() {
        let xs = [0.0, 1.0, 2.0, 3.0, 4.0];
        let ys = [Some(1.0), Some(2.0), None, Some(3.0), Some(4.0)];
        let runs = reduce(&xs, &ys, 0.0, 4.0, 800);
        assert_eq!(
            runs,
            vec![vec![(0.0, 1.0), (1.0, 2.0)], vec![(3.0, 3.0), (4.0, 4.0)]]
        );
    }

    #[test]
    fn nearest_and_table_rows() {
        let xs = [0.0, 1.0, 2.0, 10.0];
        assert_eq!(nearest(&xs, -5.0), 0);
        assert_eq!(nearest(&xs, 1.4), 1);
        assert_eq!(nearest(&xs, 7.0), 3);
        assert_eq!(nearest(&xs, 99.0), 3);
        assert_eq!(table_rows(3, 10), (vec![0, 1, 2], 1));
        let (rows, step) = table_rows(345_600, 2_000);
        assert_eq!(step, 173);
        assert!(rows.len() <= 2_001 && *rows.last().unwrap() == 345_599);
    }
}

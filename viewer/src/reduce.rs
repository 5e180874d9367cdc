//! Reading long series on the page: the sample nearest the cursor, and which rows a data
//! table shows. Drawing reduces per pixel column with the analyzer's one rule
//! (`analyzer::insights::reduce::runs`), on charts the Report already reduced.

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

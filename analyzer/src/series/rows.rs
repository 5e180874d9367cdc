//! A series' rows kept as columns: one array per field, so a reading takes 96 bytes
//! instead of the 184 of a [`Row`] (whose `Option`s double each field), and a loop over
//! one or two fields reads only their arrays. `analyze`'s peak memory on a day's
//! recording fell from 108 to 79 MB with it (`cargo bench -p inferlint`).
//!
//! An absent number is stored as NaN and an absent monotonic stamp as a negative one:
//! values past the plausibility gate are finite and stamps not negative, so neither is a
//! reading. A row pushed with a NaN reading (only tests make one) reads back without it.

use super::Row;

/// The number columns after `t_mono_ns`, by their place in [`Row::COLUMNS`] less two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    LatencyS,
    Running,
    Waiting,
    KvUsage,
    Preemptions,
    GenerationTokens,
    PromptTokens,
    Paused,
    PrefixCacheHits,
    PrefixCacheQueries,
}

/// The stored form of an absent monotonic stamp.
const NO_STAMP: i64 = -1;

/// The rows of a series, column by column.
#[derive(Clone, Default)]
pub struct Rows {
    t_wall: Vec<f64>,
    t_mono_ns: Vec<i64>,
    numbers: [Vec<f64>; Row::NUMBERS],
}

impl Rows {
    pub fn len(&self) -> usize {
        self.t_wall.len()
    }

    pub fn is_empty(&self) -> bool {
        self.t_wall.is_empty()
    }

    /// Room for `more` rows without moving the columns (a week's rows are hundreds of MB:
    /// growing by doubling would copy them and touch twice the memory).
    pub fn reserve(&mut self, more: usize) {
        self.t_wall.reserve_exact(more);
        self.t_mono_ns.reserve_exact(more);
        for c in &mut self.numbers {
            c.reserve_exact(more);
        }
    }

    pub fn shrink_to_fit(&mut self) {
        self.t_wall.shrink_to_fit();
        self.t_mono_ns.shrink_to_fit();
        for c in &mut self.numbers {
            c.shrink_to_fit();
        }
    }

    pub fn push(&mut self, r: Row) {
        self.t_wall.push(r.t_wall);
        self.t_mono_ns
            .push(r.t_mono_ns.filter(|&t| t >= 0).unwrap_or(NO_STAMP));
        let numbers = r.numbers();
        for (c, v) in self.numbers.iter_mut().zip(numbers) {
            c.push(v.unwrap_or(f64::NAN));
        }
    }

    /// Moves `other`'s rows after these.
    pub fn append(&mut self, other: &mut Rows) {
        self.t_wall.append(&mut other.t_wall);
        self.t_mono_ns.append(&mut other.t_mono_ns);
        for (c, o) in self.numbers.iter_mut().zip(&mut other.numbers) {
            c.append(o);
        }
    }

    /// Row `k`; panics past the end, as indexing does.
    pub fn get(&self, k: usize) -> Row {
        let stamp = self.t_mono_ns[k];
        Row::from_columns(
            self.t_wall[k],
            (stamp >= 0).then_some(stamp),
            std::array::from_fn(|i| present(self.numbers[i][k])),
        )
    }

    pub fn first(&self) -> Option<Row> {
        (!self.is_empty()).then(|| self.get(0))
    }

    pub fn last(&self) -> Option<Row> {
        self.len().checked_sub(1).map(|k| self.get(k))
    }

    /// Every row, in order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            rows: self,
            at: 0..self.len(),
        }
    }

    /// Every row's `t_wall`.
    pub fn t_wall(&self) -> &[f64] {
        &self.t_wall
    }

    /// Every row's `t_mono_ns`, as stored: negative where the row has none.
    pub fn t_mono_ns_stored(&self) -> &[i64] {
        &self.t_mono_ns
    }

    /// One number column as stored: NaN where the row has no reading.
    pub fn column(&self, f: Field) -> &[f64] {
        &self.numbers[f as usize]
    }

    /// One number column's readings, `None` where absent.
    pub fn values(&self, f: Field) -> impl DoubleEndedIterator<Item = Option<f64>> + '_ {
        self.column(f).iter().map(|&v| present(v))
    }

    /// Sets `f`'s readings through `change` (given and giving `None` for absent).
    pub fn update(&mut self, f: Field, mut change: impl FnMut(usize, Option<f64>) -> Option<f64>) {
        for (k, v) in self.numbers[f as usize].iter_mut().enumerate() {
            *v = change(k, present(*v)).unwrap_or(f64::NAN);
        }
    }
}

/// A stored number as a reading.
#[inline]
pub fn present(v: f64) -> Option<f64> {
    (!v.is_nan()).then_some(v)
}

impl From<Vec<Row>> for Rows {
    fn from(rows: Vec<Row>) -> Rows {
        rows.into_iter().collect()
    }
}

impl FromIterator<Row> for Rows {
    fn from_iter<I: IntoIterator<Item = Row>>(iter: I) -> Rows {
        let iter = iter.into_iter();
        let mut rows = Rows::default();
        rows.reserve(iter.size_hint().0);
        for r in iter {
            rows.push(r);
        }
        rows
    }
}

impl<'a> IntoIterator for &'a Rows {
    type Item = Row;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// The rows of [`Rows`] in order, each made from its columns.
#[derive(Clone)]
pub struct Iter<'a> {
    rows: &'a Rows,
    at: std::ops::Range<usize>,
}

impl Iterator for Iter<'_> {
    type Item = Row;

    fn next(&mut self) -> Option<Row> {
        self.at.next().map(|k| self.rows.get(k))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.at.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Row> {
        self.at.next_back().map(|k| self.rows.get(k))
    }
}

impl ExactSizeIterator for Iter<'_> {}

/// Equal when every row reads back equal (two absent readings are equal).
impl PartialEq for Rows {
    fn eq(&self, other: &Rows) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

/// The rows, one by one, as a list.
impl std::fmt::Debug for Rows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(t: f64, mono: Option<i64>, running: Option<f64>) -> Row {
        Row {
            t_wall: t,
            t_mono_ns: mono,
            running,
            kv_usage: Some(0.5),
            ..Row::default()
        }
    }

    #[test]
    fn rows_read_back_as_pushed() {
        let given = vec![
            row(1.0, Some(0), Some(3.0)),
            row(2.0, None, None),
            row(3.0, Some(i64::MAX), Some(0.0)),
        ];
        let rows = Rows::from(given.clone());
        assert_eq!(rows.iter().collect::<Vec<_>>(), given);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows.first(), Some(given[0]));
        assert_eq!(rows.last(), Some(given[2]));
        assert_eq!(rows.column(Field::Running)[0], 3.0);
        assert!(rows.column(Field::Running)[1].is_nan());
        assert_eq!(
            rows.values(Field::KvUsage).collect::<Vec<_>>(),
            vec![Some(0.5); 3]
        );
        assert_eq!(rows.t_mono_ns_stored(), &[0, NO_STAMP, i64::MAX]);
    }

    #[test]
    fn field_order_is_the_row_columns() {
        let names = &Row::COLUMNS[Row::T_MONO_NS + 1..];
        assert_eq!(names.len(), Row::NUMBERS);
        let fields = [
            (Field::LatencyS, "latency_s"),
            (Field::Running, "running"),
            (Field::Waiting, "waiting"),
            (Field::KvUsage, "kv_usage"),
            (Field::Preemptions, "preemptions"),
            (Field::GenerationTokens, "generation_tokens"),
            (Field::PromptTokens, "prompt_tokens"),
            (Field::Paused, "paused"),
            (Field::PrefixCacheHits, "prefix_cache_hits"),
            (Field::PrefixCacheQueries, "prefix_cache_queries"),
        ];
        for (f, name) in fields {
            assert_eq!(names[f as usize], name);
        }
    }

    #[test]
    fn append_update_and_equality() {
        let mut a = Rows::from(vec![row(1.0, Some(5), Some(1.0))]);
        let mut b = Rows::from(vec![row(2.0, Some(6), None)]);
        a.append(&mut b);
        assert!(b.is_empty());
        assert_eq!(a.len(), 2);
        a.update(
            Field::Running,
            |k, v| if k == 0 { None } else { v.or(Some(9.0)) },
        );
        assert_eq!(
            a.values(Field::Running).collect::<Vec<_>>(),
            vec![None, Some(9.0)]
        );
        let same = Rows::from(vec![row(1.0, Some(5), None), row(2.0, Some(6), Some(9.0))]);
        assert_eq!(a, same);
        assert_eq!(
            format!("{a:?}"),
            format!("{:?}", same.iter().collect::<Vec<_>>())
        );
    }
}

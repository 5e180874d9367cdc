//! A load tool's own timeline of its requests: when each was sent and when it ended, on
//! the tool's clock (T20). From it, how many requests were open at each moment, on
//! average over a stretch, and how fast they were sent.

use super::Requests;

/// The requests that have both a send time and a latency, sorted by send time.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// `(sent, ended)`, seconds on the tool's clock.
    pub spans: Vec<(f64, f64)>,
    /// Requests left out for want of a send time or a latency.
    pub untimed: usize,
}

/// The tool's clock reads unix seconds from this on (GuideLLM's and AIPerf's do);
/// `vllm bench serve`'s counts from an arbitrary zero (`time.perf_counter`).
pub const UNIX_CLOCK_FROM: f64 = 1.0e9;

impl Timeline {
    /// From per-request figures; none without send times and latencies for at least two
    /// requests. A failed request's latency may be 0: it counts as open for no time.
    pub fn of(q: &Requests) -> Option<Timeline> {
        let (starts, latencies) = (q.start_s.as_ref()?, q.latency_s.as_ref()?);
        let mut spans = Vec::new();
        let mut untimed = 0;
        for (i, s) in starts.iter().enumerate() {
            match (s, latencies.get(i).copied().flatten()) {
                (Some(s), Some(l)) if l >= 0.0 => spans.push((*s, s + l)),
                _ => untimed += 1,
            }
        }
        if spans.len() < 2 {
            return None;
        }
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
        Some(Timeline { spans, untimed })
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The first and the last send.
    pub fn sending(&self) -> (f64, f64) {
        let first = self.spans.first().map_or(0.0, |s| s.0);
        let last = self.spans.last().map_or(0.0, |s| s.0);
        (first, last)
    }

    /// The last end.
    pub fn last_end(&self) -> f64 {
        self.spans.iter().map(|s| s.1).fold(f64::MIN, f64::max)
    }

    /// Whether the clock reads unix seconds.
    pub fn unix_clock(&self) -> bool {
        self.spans.first().is_some_and(|s| s.0 >= UNIX_CLOCK_FROM)
    }

    /// Each change of the number open, `(time, +1 or -1)`, in time order (an end before
    /// a send at the same instant).
    fn events(&self) -> Vec<(f64, i32)> {
        let mut ev: Vec<(f64, i32)> = self
            .spans
            .iter()
            .flat_map(|&(s, e)| [(s, 1), (e, -1)])
            .collect();
        ev.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        ev
    }

    /// The most requests open at once.
    pub fn peak_open(&self) -> usize {
        let mut open: i64 = 0;
        let mut peak = 0;
        for (_, d) in self.events() {
            open += i64::from(d);
            peak = peak.max(open);
        }
        usize::try_from(peak).unwrap_or(0)
    }

    /// The longest stretch during which at least `level` requests were open at once, in
    /// seconds; 0 when that many never were (T24: could the readings have missed it).
    pub fn longest_at_least(&self, level: usize) -> f64 {
        let level = i64::try_from(level).unwrap_or(i64::MAX);
        let ev = self.events();
        let (mut open, mut since, mut longest) = (0i64, None, 0.0f64);
        for (k, &(t, d)) in ev.iter().enumerate() {
            open += i64::from(d);
            // Every change at one instant is applied before the count is looked at: a
            // request ending as the next is sent leaves no gap.
            if ev.get(k + 1).is_some_and(|n| n.0 == t) {
                continue;
            }
            match (open >= level, since) {
                (true, None) => since = Some(t),
                (false, Some(s)) => {
                    longest = longest.max(t - s);
                    since = None;
                }
                _ => {}
            }
        }
        longest
    }

    /// The time-weighted mean number open over `[from, to]`, and the share of that
    /// stretch during which at least `cap` were open.
    pub fn open_over(&self, from: f64, to: f64, cap: f64) -> (f64, f64) {
        let span = to - from;
        if span <= 0.0 {
            return (0.0, 0.0);
        }
        let (mut open, mut at, mut area, mut full) = (0.0, from, 0.0, 0.0);
        for (t, d) in self.events() {
            if t > at && at < to {
                let until = t.min(to);
                area += open * (until - at);
                if open >= cap {
                    full += until - at;
                }
                at = until;
            }
            open += f64::from(d);
        }
        if at < to {
            area += open * (to - at);
            if open >= cap {
                full += to - at;
            }
        }
        (area / span, full / span)
    }

    /// Requests sent per second between the first and the last send; none when they
    /// were all sent at one instant.
    pub fn send_rate(&self) -> Option<f64> {
        let (first, last) = self.sending();
        (last > first).then(|| (self.len() - 1) as f64 / (last - first))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn requests(starts: &[f64], latencies: &[f64]) -> Requests {
        Requests {
            ttft_s: vec![Some(0.1); starts.len()],
            start_s: Some(starts.iter().map(|&s| Some(s)).collect()),
            latency_s: Some(latencies.iter().map(|&l| Some(l)).collect()),
            output_tokens: None,
            input_tokens: None,
            implausible: Vec::new(),
        }
    }

    #[test]
    fn open_requests_over_a_stretch() {
        // Two slots kept full from 0 to 2, one of them a second longer.
        let t = Timeline::of(&requests(&[0.0, 0.0, 1.0, 1.0], &[1.0, 1.0, 1.0, 2.0])).unwrap();
        assert_eq!(t.peak_open(), 2);
        assert_eq!(t.sending(), (0.0, 1.0));
        assert_eq!(t.open_over(0.0, 2.0, 2.0), (2.0, 1.0));
        let (mean, full) = t.open_over(0.0, 3.0, 2.0);
        assert!((mean - 5.0 / 3.0).abs() < 1e-12, "{mean}");
        assert!((full - 2.0 / 3.0).abs() < 1e-12, "{full}");
        assert_eq!(t.send_rate(), Some(3.0));
        assert!(!t.unix_clock());
        assert_eq!(t.longest_at_least(2), 2.0);
        assert_eq!(t.longest_at_least(1), 3.0);
        assert_eq!(t.longest_at_least(3), 0.0);
    }

    #[test]
    fn a_request_without_a_time_is_left_out_and_two_are_needed() {
        let mut q = requests(&[0.0, 0.5, 1.0], &[1.0, 1.0, 1.0]);
        q.start_s.as_mut().unwrap()[1] = None;
        let t = Timeline::of(&q).unwrap();
        assert_eq!((t.len(), t.untimed), (2, 1));
        q.latency_s = None;
        assert_eq!(Timeline::of(&q), None);
        assert_eq!(Timeline::of(&requests(&[3.0], &[1.0])), None);
    }
}

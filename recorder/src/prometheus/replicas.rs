//! From Prometheus' answers to a fleet's documents: samples split per replica by their
//! `instance` label, each replica's identity (the labels all its series share), its
//! snapshot text rebuilt as exposition lines (`name{labels} value`, Prometheus' `NaN` and
//! `±Inf` kept as the exposition spells them) and its series rows, one per time a range
//! query had points for it.

use std::collections::BTreeMap;

use analyzer::docs::fleet::{replica_id_from_instance, Replica};
use analyzer::docs::SnapshotDoc;
use analyzer::prom::Exposition;

use super::api::{Labels, RangeSeries, Sample, Target};

/// The label that tells replicas apart.
pub const INSTANCE: &str = "instance";

/// Samples (or series) grouped by their `instance` label, in instance order; those
/// without one are counted, not kept.
pub fn by_instance<'a, T>(
    items: &'a [T],
    labels: impl Fn(&'a T) -> &'a Labels,
) -> (BTreeMap<String, Vec<&'a T>>, usize) {
    let mut groups: BTreeMap<String, Vec<&T>> = BTreeMap::new();
    let mut dropped = 0;
    for item in items {
        match labels(item).get(INSTANCE) {
            Some(instance) => groups.entry(instance.clone()).or_default().push(item),
            None => dropped += 1,
        }
    }
    (groups, dropped)
}

/// The labels every one of a replica's series carries with the same value (`job`,
/// `instance`, pod, rank…), `__name__` left out.
pub fn common_labels<'a>(mut sets: impl Iterator<Item = &'a Labels>) -> Labels {
    let Some(first) = sets.next() else {
        return Labels::new();
    };
    let mut common: Labels = first
        .iter()
        .filter(|(k, _)| *k != "__name__")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for set in sets {
        common.retain(|k, v| set.get(k) == Some(v));
    }
    common
}

/// The replicas of an instant query's samples, each with its folder name (made unique
/// when two instances give the same one) and the scrape interval its target shows.
pub fn replicas(samples: &[Sample], targets: &[Target]) -> Vec<Replica> {
    let (groups, _) = by_instance(samples, |s| &s.labels);
    let mut taken = std::collections::HashSet::new();
    groups
        .into_iter()
        .filter_map(|(instance, group)| {
            let base = replica_id_from_instance(&instance)?;
            let id = (1..)
                .map(|n| {
                    if n == 1 {
                        base.clone()
                    } else {
                        format!("{base}-{n}")
                    }
                })
                .find(|id| taken.insert(id.clone()))?;
            let labels = common_labels(group.iter().map(|s| &s.labels));
            let scrape_interval_s = targets
                .iter()
                .find(|t| {
                    t.labels.get(INSTANCE) == Some(&instance)
                        && labels
                            .get("job")
                            .is_none_or(|j| t.labels.get("job") == Some(j))
                })
                .and_then(Target::interval_s);
            Some(Replica {
                id,
                instance,
                labels,
                scrape_interval_s,
            })
        })
        .collect()
}

/// A label value escaped as the exposition format wants it.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A value as the exposition format spells it.
pub fn format_value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v == f64::INFINITY {
        "+Inf".into()
    } else if v == f64::NEG_INFINITY {
        "-Inf".into()
    } else {
        format!("{v}")
    }
}

/// One exposition line: `name{k="v",…} value`, `__name__` as the name.
fn line(labels: &Labels, value: f64) -> String {
    let name = labels.get("__name__").map_or("", String::as_str);
    let inner: Vec<String> = labels
        .iter()
        .filter(|(k, _)| *k != "__name__")
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    if inner.is_empty() {
        format!("{name} {}", format_value(value))
    } else {
        format!("{name}{{{}}} {}", inner.join(","), format_value(value))
    }
}

/// Exposition text of a replica's samples, one line each, sorted by name and labels.
pub fn exposition_text<'a>(samples: impl Iterator<Item = (&'a Labels, f64)>) -> String {
    let mut lines: Vec<(&Labels, String)> = samples.map(|(l, v)| (l, line(l, v))).collect();
    lines.sort_by(|a, b| a.0.cmp(b.0));
    let mut text = String::new();
    for (_, l) in lines {
        text.push_str(&l);
        text.push('\n');
    }
    text
}

/// A replica's snapshot document from its samples of one instant query.
pub fn snapshot_doc(url: &str, t_wall: f64, latency_s: f64, samples: &[&Sample]) -> SnapshotDoc {
    SnapshotDoc {
        url: url.to_string(),
        t_wall,
        // Prometheus answers in wall time only.
        t_mono_ns: None,
        latency_s: Some(latency_s),
        text: exposition_text(samples.iter().map(|s| (&s.labels, s.value))),
    }
}

/// The samples at one time of a range query: the time, and each series' labels and value.
type AtTime<'a> = (f64, Vec<(&'a Labels, f64)>);

/// A replica's readings from its range series: one exposition per time any of its
/// series had a point, in time order (a time with no point at all is a gap, left out).
pub fn readings(series: &[&RangeSeries]) -> Vec<(f64, Exposition)> {
    // Points sit at exactly start + k·step; milliseconds make them exact keys.
    let mut at: BTreeMap<i64, AtTime> = BTreeMap::new();
    for s in series {
        for &(t, v) in &s.points {
            let key = (t * 1000.0).round() as i64;
            at.entry(key).or_insert((t, vec![])).1.push((&s.labels, v));
        }
    }
    at.into_values()
        .filter_map(|(t, samples)| {
            let text = exposition_text(samples.into_iter());
            // The text is built from label and value parts that always parse.
            Exposition::parse(&text).ok().map(|x| (t, x))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn sample(pairs: &[(&str, &str)], value: f64) -> Sample {
        Sample {
            labels: labels(pairs),
            t: 10.0,
            value,
        }
    }

    #[test]
    fn replicas_by_instance_with_their_shared_labels() {
        let s = [
            sample(
                &[
                    ("__name__", "vllm:num_requests_running"),
                    ("instance", "127.0.0.1:8031"),
                    ("job", "vllm"),
                    ("engine", "0"),
                ],
                2.0,
            ),
            sample(
                &[
                    ("__name__", "vllm:request_success_total"),
                    ("instance", "127.0.0.1:8031"),
                    ("job", "vllm"),
                    ("engine", "0"),
                    ("finished_reason", "length"),
                ],
                7.0,
            ),
            sample(
                &[
                    ("__name__", "vllm:num_requests_running"),
                    ("instance", "127.0.0.1:8032"),
                    ("job", "vllm"),
                ],
                1.0,
            ),
            sample(&[("__name__", "vllm:num_requests_running")], 1.0),
        ];
        let targets: Vec<Target> = serde_json::from_str(
            r#"[{"labels":{"instance":"127.0.0.1:8031","job":"vllm"},"scrapeInterval":"1s","health":"up"}]"#,
        )
        .unwrap();
        let r = replicas(&s, &targets);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].id, "127.0.0.1-8031");
        assert_eq!(
            r[0].labels,
            labels(&[
                ("engine", "0"),
                ("instance", "127.0.0.1:8031"),
                ("job", "vllm")
            ])
        );
        assert_eq!(r[0].scrape_interval_s, Some(1.0));
        assert_eq!(
            (r[1].id.as_str(), r[1].scrape_interval_s),
            ("127.0.0.1-8032", None)
        );
        let (_, dropped) = by_instance(&s, |x| &x.labels);
        assert_eq!(dropped, 1);
    }

    #[test]
    fn snapshot_text_reads_back_with_the_same_values() {
        let a = sample(
            &[
                ("__name__", "x_total"),
                ("instance", "h:1"),
                ("path", "a\"b\\c"),
            ],
            3.0,
        );
        let b = sample(&[("__name__", "h_sum"), ("instance", "h:1")], f64::NAN);
        let c = sample(&[("__name__", "b"), ("le", "+Inf")], f64::INFINITY);
        let doc = snapshot_doc("http://p/api/v1/query?query=q", 5.0, 0.01, &[&a, &b, &c]);
        assert_eq!(
            doc.text,
            "b{le=\"+Inf\"} +Inf\nh_sum{instance=\"h:1\"} NaN\nx_total{instance=\"h:1\",path=\"a\\\"b\\\\c\"} 3\n"
        );
        let x = Exposition::parse(&doc.text).unwrap();
        assert_eq!(x.total("x_total", &[("path", "a\"b\\c")]), Some(3.0));
        assert!(x.total("h_sum", &[]).unwrap().is_nan());
        assert_eq!(doc.t_mono_ns, None);
    }

    #[test]
    fn readings_follow_the_points_and_keep_gaps() {
        let run = RangeSeries {
            labels: labels(&[
                ("__name__", "vllm:num_requests_running"),
                ("instance", "h:1"),
            ]),
            points: vec![(100.0, 1.0), (101.0, 2.0), (103.0, 4.0)],
        };
        let kv = RangeSeries {
            labels: labels(&[
                ("__name__", "vllm:kv_cache_usage_perc"),
                ("instance", "h:1"),
            ]),
            points: vec![(100.0, 0.5), (103.0, 0.75)],
        };
        let r = readings(&[&run, &kv]);
        let times: Vec<f64> = r.iter().map(|(t, _)| *t).collect();
        assert_eq!(times, [100.0, 101.0, 103.0]);
        assert_eq!(r[1].1.total("vllm:kv_cache_usage_perc", &[]), None);
        assert_eq!(r[2].1.total("vllm:num_requests_running", &[]), Some(4.0));
    }
}

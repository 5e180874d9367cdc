//! Runs what the one-file page does when it opens, natively, for profiling:
//! `cargo run --release --example page_path -- REPORT.html [TIMES]`. Prints the best
//! time of each step (unpack, series rows, analysis) over the rounds.
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: page_path REPORT.html [TIMES]");
        std::process::exit(2);
    };
    let times: usize = args.next().map_or(1, |t| t.parse().expect("a count"));
    let page = std::fs::read_to_string(&path).expect("read the page");
    let text = analyzer::page::embedded_run(&page).expect("a page carrying a run");
    let mut best = [f64::INFINITY; 3];
    let mut checks = 0;
    for _ in 0..times {
        let t0 = Instant::now();
        let carried = analyzer::pack::decode_any_keeping_columns(text).expect("a readable run");
        let analyzer::pack::Carried::One(pack) = carried else {
            panic!("one run expected")
        };
        let t1 = Instant::now();
        let (input, opts, series) = analyzer::pack::input_reading_series(&pack);
        let t2 = Instant::now();
        let a = analyzer::analysis::analyze_with_series(&input, &opts, series).expect("analysis");
        let t3 = Instant::now();
        let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
        for (b, t) in best.iter_mut().zip([ms(t0, t1), ms(t1, t2), ms(t2, t3)]) {
            *b = b.min(t);
        }
        checks = a.report.checks.len();
    }
    let [unpack, rows, analysis] = best;
    eprintln!(
        "best of {times}: unpack {unpack:.1} ms, rows {rows:.1} ms, analysis {analysis:.1} ms \
         ({checks} checks)"
    );
}

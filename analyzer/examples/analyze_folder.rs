//! Runs the whole analysis on a run folder, for profiling and before/after comparisons:
//! `cargo run --release --example analyze_folder -- DIR [OUT] [TIMES]`. Writes the
//! Report's JSON and its debug form (charts included) to OUT when given.
fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: analyze_folder DIR [OUT] [TIMES]");
        std::process::exit(2);
    };
    let out = args.next();
    let times: usize = args.next().map_or(1, |t| t.parse().expect("a count"));
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("read the folder")
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n != "results.json" && n != "report.html")
        .collect();
    names.sort();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let base = std::path::PathBuf::from(&dir);
    let read = |n: &str| std::fs::read(base.join(n)).map_err(|e| e.to_string());
    let input = analyzer::folder::load(&dir, &refs, &read);
    let opts = analyzer::inputs::Options::default();
    let mut last = None;
    for _ in 0..times {
        last = Some(analyzer::analysis::analyze(&input, &opts).expect("an analysis"));
    }
    if let (Some(out), Some(a)) = (out, last) {
        let json = serde_json::to_string_pretty(&a.report).expect("the report as JSON");
        let text = format!("{json}\n{:#?}\n{:?}\n{:?}\n", a.report, a.notes, a.errors);
        std::fs::write(out, text).expect("write OUT");
    }
}

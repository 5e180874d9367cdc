//! Times reading one series file: `cargo run --release --example time_series -- FILE`.
fn main() {
    let Some(p) = std::env::args().nth(1) else {
        eprintln!("usage: time_series FILE.series.jsonl");
        std::process::exit(2);
    };
    let b = std::fs::read(&p).expect("read the file");
    let t = std::time::Instant::now();
    let s = analyzer::series::Series::read(&p, &b).expect("a series file");
    println!("{} readings in {:?}", s.rows.len(), t.elapsed());
}

//! Times reading one boot log: `cargo run --release --example time_bootlog -- FILE [REPEAT]`.
fn main() {
    let mut args = std::env::args().skip(1);
    let Some(p) = args.next() else {
        eprintln!("usage: time_bootlog FILE [REPEAT]");
        std::process::exit(2);
    };
    let repeat: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(1);
    let one = String::from_utf8_lossy(&std::fs::read(&p).expect("read the log")).into_owned();
    let text = one.repeat(repeat);
    let t = std::time::Instant::now();
    let (facts, _) = analyzer::bootlog::read_log(&text, None);
    println!(
        "{} lines, {} MB in {:?}",
        facts.lines,
        text.len() / 1_000_000,
        t.elapsed()
    );
}

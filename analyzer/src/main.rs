//! `inferlint`: checks a benchmark run folder and prints verdicts.

fn main() {
    let code = analyzer::cli::main_with_args(std::env::args_os().collect());
    std::process::exit(code);
}

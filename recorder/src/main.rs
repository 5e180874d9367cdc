//! `inferlint-recorder`: records what an inference server did around a benchmark into a
//! run folder (the commands are in `cli.rs` and `commands/`).

fn main() {
    std::process::exit(recorder::cli::main(std::env::args_os().collect()));
}

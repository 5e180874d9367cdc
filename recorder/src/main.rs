fn main() {
    std::process::exit(recorder::cli::main(std::env::args_os().collect()));
}

//! The `baton` command; it lives in `baton::cli`.

fn main() -> std::process::ExitCode {
    baton::cli::main()
}

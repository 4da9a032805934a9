//! The `tafl` command: a thin layer that parses arguments, calls the library crates and maps
//! errors to exit codes (0 success, 1 a check failed, 2 bad input).

mod perft;
mod replay;
mod variant;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Tafl: Copenhagen Hnefatafl rules, analysis and self-play training.
#[derive(Parser)]
#[command(name = "tafl", version, about, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

const EXAMPLES: &str = "Examples:
  tafl perft --variant copenhagen --depth 4
  tafl show --variant tablut
  tafl show --fen '3aaaaa3/5a5/11/a4d4a/a3ddd3a/aa1ddkdd1aa/a3ddd3a/a4d4a/11/5a5/3aaaaa3 a'
  tafl replay --json crates/tafl-rules/tests/data/copenhagen-11x11-archive.csv
  echo 'd1-d3 e5-e2' | tafl replay --format moves -";

#[derive(Subcommand)]
enum Command {
    /// Count move sequences to a depth and report nodes per second.
    Perft(perft::PerftArgs),
    /// Print a position as a labelled board, with its FEN and OpenTafl record.
    Show(perft::ShowArgs),
    /// Check recorded games: legality, captures and outcome of every ply.
    Replay(replay::ReplayArgs),
}

/// A failure with the exit code it maps to.
pub struct Failure {
    code: u8,
    error: anyhow::Error,
}

/// Bad input: exit code 2.
pub fn bad_input(error: impl Into<anyhow::Error>) -> Failure {
    Failure { code: 2, error: error.into() }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Perft(args) => perft::run(&args),
        Command::Show(args) => perft::show(&args),
        Command::Replay(args) => replay::run(&args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(Failure { code, error }) => {
            eprintln!("error: {error:#}");
            ExitCode::from(code)
        }
    }
}

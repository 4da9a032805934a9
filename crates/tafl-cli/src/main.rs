//! The `tafl` command: a thin layer that parses arguments, calls the library crates and maps
//! errors to exit codes (0 success, 1 a check failed, 2 bad input).

mod analyse;
mod arena;
mod bench;
mod engine;
mod export;
mod perft;
mod play;
mod replay;
mod serve;
mod train;
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
  echo 'd1-d3 e5-e2' | tafl replay --format moves -
  tafl bench nn --net b6c64 --batches 1,8,64,256
  tafl engine --protocol htp --player alphabeta:depth=4
  tafl play --player alphabeta:time=1s --side defenders
  tafl analyse --player alphabeta:depth=4 --record tafl-game-1700000000.csv
  tafl train --config configs/smoke.toml --run /tmp/smoke
  tafl report --run data/runs/default
  tafl export --run data/runs/default --out players/best && tafl engine --player players/best
  tafl serve --run data/runs/default";

#[derive(Subcommand)]
enum Command {
    /// Count move sequences to a depth and report nodes per second.
    Perft(perft::PerftArgs),
    /// Print a position as a labelled board, with its FEN and OpenTafl record.
    Show(perft::ShowArgs),
    /// Check recorded games: legality, captures and outcome of every ply.
    Replay(replay::ReplayArgs),
    /// Play a match (`--a`, `--b`) or a round robin (`--players`) and rate the players.
    Arena(arena::ArenaArgs),
    /// Throughput of the network (`bench nn`) and of self-play search (`bench mcts`).
    Bench(bench::BenchArgs),
    /// Serve a player over HTP, the OpenTafl engine protocol or a UCI-style protocol.
    Engine(engine::EngineArgs),
    /// Play against a player in the terminal.
    Play(play::PlayArgs),
    /// A player's evaluation and line for a position, or along a recorded game.
    Analyse(analyse::AnalyseArgs),
    /// Train by self-play: self-play, optimize, gate, evaluate, resumable (the main job).
    Train(train::TrainArgs),
    /// Only self-play into a run directory (workers on other machines too).
    Selfplay(train::SelfplayArgs),
    /// Only train one round on a run's newest samples.
    Optimize(train::OptimizeArgs),
    /// Turn recorded games (human archives, arena matches) into training samples of a run.
    Import(train::ImportArgs),
    /// Only gate the newest model against the best (or `--evaluate` the best).
    Gate(train::GateArgs),
    /// Plot a run's metrics into report/ (SVG plots and index.html).
    Report(train::ReportArgs),
    /// Write a self-contained player bundle (weights + search settings) from a run.
    Export(export::ExportArgs),
    /// Play, analyse and watch training runs in a browser (a local web page).
    Serve(serve::ServeArgs),
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
        Command::Arena(args) => arena::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Engine(args) => engine::run(&args),
        Command::Play(args) => play::run(&args),
        Command::Analyse(args) => analyse::run(&args),
        Command::Train(args) => train::train(&args),
        Command::Selfplay(args) => train::selfplay(&args),
        Command::Optimize(args) => train::optimize(&args),
        Command::Import(args) => train::import(&args),
        Command::Gate(args) => train::gate(&args),
        Command::Report(args) => train::report(&args),
        Command::Export(args) => export::run(&args),
        Command::Serve(args) => serve::run(&args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(Failure { code, error }) => {
            eprintln!("error: {error:#}");
            ExitCode::from(code)
        }
    }
}

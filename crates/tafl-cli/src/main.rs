//! The `tafl` command: a thin layer that parses arguments, calls the library crates and maps
//! errors to exit codes (0 success, 1 a check failed, 2 bad input, 141 the reader of standard
//! output or standard error went away).

mod analyse;
mod arena;
mod bench;
mod engine;
mod export;
mod ladder;
mod online;
mod perft;
mod play;
mod ratings;
mod replay;
mod serve;
mod train;
mod variant;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// mimalloc rather than glibc's allocator: a training step allocates buffers of megabytes
/// (activations, transforms, gradients) and frees them again; glibc gives such blocks back to
/// the kernel, so every step page-faults them in anew (a quarter of the step's time in `perf`).
/// mimalloc keeps them for reuse. Measured in the README's performance table.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
  tafl ladder --player mcts:model=data/runs/default,visits=200 --games 100 --seed 2026
  tafl ratings data/levels --anchor random
  tafl engine --protocol htp --player alphabeta:depth=4
  tafl play --player alphabeta:time=1s --side defenders
  tafl analyse --player alphabeta:depth=4 --record tafl-game-1700000000.csv
  tafl train --config configs/smoke.toml --run /tmp/smoke
  tafl report --run data/runs/default
  tafl export --run data/runs/default --out players/best && tafl engine --player players/best
  tafl online --host hnefatafl.org --username ai-tafl --password P --player players/best --create both
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
    /// Measure a player against the strength ladder: score, Elo and sides per opponent.
    Ladder(ladder::LadderArgs),
    /// One Elo scale over matches played apart (their summary.json), players matched by name.
    Ratings(ratings::RatingsArgs),
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
    /// Play as an account on a game server (hnefatafl.org): offer, accept and join games.
    Online(online::OnlineArgs),
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

impl From<tafl_arena::ArenaError> for Failure {
    /// Bad input (exit code 2) when the players or options are at fault, else exit code 1.
    fn from(error: tafl_arena::ArenaError) -> Self {
        Failure { code: if error.is_bad_input() { 2 } else { 1 }, error: error.into() }
    }
}

/// `--level N` as the player spec it stands for.
pub fn level_spec(level: Option<u8>) -> Result<Option<String>, Failure> {
    level.map(tafl_arena::levels::level_spec_text).transpose().map_err(bad_input)
}

/// The exit status of a command whose output pipe was closed: what a shell reports for a program
/// that SIGPIPE ended (128 + 13), as `seq 1000000 | head -1` shows under `set -o pipefail`.
const CLOSED_PIPE: u8 = 141;

/// Whether a panic is std's `print!`/`eprint!` failing on a closed pipe ("failed printing to
/// stdout: Broken pipe (os error 32)"). The message is the only trace std leaves; an end-to-end
/// test (`tests/closed_pipe.rs`) pins it, so a change in std's wording fails CI instead of
/// bringing the backtraces back.
fn is_closed_pipe_panic(info: &std::panic::PanicHookInfo<'_>) -> bool {
    let payload = info.payload();
    let message =
        payload.downcast_ref::<String>().map(String::as_str).or_else(|| payload.downcast_ref::<&str>().copied());
    message.is_some_and(|m| {
        m.starts_with("failed printing to std") && (m.contains("Broken pipe") || m.contains("os error 32"))
    })
}

/// Whether an error comes from writing to a closed pipe (`tafl play`, `tafl engine` and others
/// that write through `io::Write` and return the error).
fn is_closed_pipe_error(error: &anyhow::Error) -> bool {
    error
        .chain()
        .any(|cause| cause.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe))
}

/// Ends the process quietly when output goes to a pipe that nobody reads any more
/// (`tafl show | head -3`, `tafl train 2>&1 | head`), from any thread.
///
/// Rust ignores SIGPIPE, so a write to a closed pipe fails with EPIPE and `println!` panics.
/// Restoring the default SIGPIPE action needs `libc::signal` (unsafe, denied here) or an
/// unstable compiler flag; instead the panic hook recognises that one panic and exits with the
/// status a shell shows for a program that SIGPIPE ended, with nothing on standard error
/// (which may be the closed pipe itself). Every other panic goes to the default hook.
fn end_quietly_on_closed_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if is_closed_pipe_panic(info) {
            std::process::exit(i32::from(CLOSED_PIPE));
        }
        default(info);
    }));
}

fn main() -> ExitCode {
    end_quietly_on_closed_pipe();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Perft(args) => perft::run(&args),
        Command::Show(args) => perft::show(&args),
        Command::Replay(args) => replay::run(&args),
        Command::Arena(args) => arena::run(&args),
        Command::Ladder(args) => ladder::run(&args),
        Command::Ratings(args) => ratings::run(&args),
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
        Command::Online(args) => online::run(&args),
        Command::Serve(args) => serve::run(&args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(Failure { error, .. }) if is_closed_pipe_error(&error) => ExitCode::from(CLOSED_PIPE),
        Err(Failure { code, error }) => {
            eprintln!("error: {error:#}");
            ExitCode::from(code)
        }
    }
}

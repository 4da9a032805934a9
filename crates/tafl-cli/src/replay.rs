//! `tafl replay`: check recorded games.

use std::io::Read;

use anyhow::{Context, anyhow};
use clap::{Args, ValueEnum};
use tafl_rules::notation::{parse_archive_line, parse_move_list};
use tafl_rules::replay::{ReplayReport, replay};
use tafl_rules::{Position, Variant};

use crate::{Failure, bad_input, variant};

/// Record formats.
#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// One game per line: `moves,attacker_captures,defender_captures,result`; `#` comments.
    Archive,
    /// The whole input is one game: whitespace-separated plies from `--start`.
    Moves,
}

/// Arguments of `tafl replay`.
#[derive(Args)]
#[command(
    after_help = "Exit code: 0 every ply legal and every recorded capture matched, 1 otherwise, 2 unreadable input."
)]
pub struct ReplayArgs {
    /// A preset or a variant TOML file.
    #[arg(long, default_value = "copenhagen")]
    variant: String,
    /// Start position as a FEN (default: the variant's start).
    #[arg(long)]
    start: Option<String>,
    /// Record format.
    #[arg(long, value_enum, default_value = "archive")]
    format: Format,
    /// One JSON object per game on its own line.
    #[arg(long)]
    json: bool,
    /// The record file, or `-` for standard input.
    file: String,
}

/// Replays every game and prints a report per game.
pub fn run(args: &ReplayArgs) -> Result<u8, Failure> {
    let v = variant::load(&args.variant).map_err(bad_input)?;
    let start = match &args.start {
        Some(fen) => Position::from_fen(v, fen).context("bad --start FEN").map_err(bad_input)?,
        None => Position::start(v),
    };
    let text = read_input(&args.file).map_err(bad_input)?;
    let reports = match args.format {
        Format::Archive => archive_games(&text, &args.file, v, start)?,
        Format::Moves => {
            let (plies, _timeout) =
                parse_move_list(&text, v.size()).map_err(|e| bad_input(anyhow!("{}: {e}", args.file)))?;
            vec![replay(1, start, &plies, false)]
        }
    };
    for r in &reports {
        if args.json {
            println!("{}", serde_json::to_string(r).map_err(|e| Failure { code: 1, error: e.into() })?);
        } else {
            println!("{}", summary(r));
        }
    }
    let failed = reports.iter().filter(|r| !r.ok()).count();
    if !args.json {
        println!(
            "{} games: {} fully legal with matching captures, {failed} with problems",
            reports.len(),
            reports.len() - failed
        );
    }
    Ok(if failed == 0 { 0 } else { 1 })
}

fn read_input(file: &str) -> anyhow::Result<String> {
    if file == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s).context("reading standard input")?;
        Ok(s)
    } else {
        std::fs::read_to_string(file).with_context(|| format!("reading {file}"))
    }
}

fn archive_games(text: &str, file: &str, v: &'static Variant, start: Position) -> Result<Vec<ReplayReport>, Failure> {
    let mut reports = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let game = parse_archive_line(line, v.size())
            .map_err(|e| bad_input(anyhow!("{file}:{}:{}: {}", i + 1, e.column, e.message)))?;
        reports.push(replay(reports.len() + 1, start, &game.plies, true));
    }
    Ok(reports)
}

fn summary(r: &ReplayReport) -> String {
    let mut s = format!("game {}: {} plies, ", r.game, r.plies);
    s += &match &r.error {
        Some(e) => format!("ILLEGAL {e}"),
        None => "legal".to_string(),
    };
    if !r.capture_mismatches.is_empty() {
        let plies: Vec<String> = r.capture_mismatches.iter().map(|m| m.ply.to_string()).collect();
        s += &format!(", capture mismatch at plies {}", plies.join(" "));
    }
    s += &match &r.outcome {
        Some(o) => format!(
            ", {} by {} at ply {}{}",
            o.winner.map_or("draw".to_string(), |w| format!("{w} won")),
            o.reason,
            o.ply,
            if r.ended_early { " (record goes on)" } else { "" }
        ),
        None => ", undecided".to_string(),
    };
    s
}

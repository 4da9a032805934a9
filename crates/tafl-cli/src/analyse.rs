//! `tafl analyse`: a player's evaluation and principal variation for a position, or along a
//! recorded game (its value before every ply, and the moves it would have played instead).

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, anyhow};
use clap::Args;
use serde::Serialize;
use tafl_rules::notation::{RecordedPly, parse_archive_line, parse_move_list};
use tafl_rules::{Game, Position, Side};
use tafl_search::{Limits, MoveChoice, Player};

use crate::engine::{build_player, duration_arg};
use crate::{Failure, bad_input, variant};

const ANALYSE_HELP: &str = "Values are the player's, from -1 (lost) to +1 (won). For a position they are
from the side to move's view; along a game they are given from the attackers' view (+ good for
the attackers), and `drop` is how much the move played lost against the player's own choice
(its value before the move, less its value after it, for the side that moved).

A record file holds archive lines (`moves,attacker_captures,defender_captures,result`, as
`tafl play`, `tafl arena` and hnefatafl.org write them; `# start FEN` sets another start) or a
plain move list (`d1-d3 e5-e2 ...`).

Examples:
  tafl analyse --player alphabeta:depth=4 '3aaaaa3/5a5/11/a4d4a/a3ddd3a/aa1ddkdd1aa/a3ddd3a/a4d4a/11/5a5/3aaaaa3 a'
  tafl analyse --player alphabeta:time=1s --record tafl-game-1700000000.csv
  tafl analyse --player alphabeta:depth=3 --record games.csv --game 4 --json";

/// Arguments of `tafl analyse`.
#[derive(Args)]
#[command(after_help = ANALYSE_HELP)]
pub struct AnalyseArgs {
    /// The position to analyse, as a FEN (quote it, or give its two words).
    #[arg(num_args = 0.., conflicts_with = "record")]
    fen: Vec<String>,
    /// Analyse every position of a recorded game instead.
    #[arg(long)]
    record: Option<PathBuf>,
    /// Which game of the record file (1 = the first).
    #[arg(long, default_value_t = 1)]
    game: usize,
    /// The player that analyses.
    #[arg(long, default_value = "alphabeta:depth=4")]
    player: String,
    /// A preset or a variant TOML file.
    #[arg(long, default_value = "copenhagen")]
    variant: String,
    /// Time per position (`1s`, `500ms`), instead of the player's own limits.
    #[arg(long)]
    time: Option<String>,
    /// Search depth per position (alpha-beta).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
    depth: Option<u32>,
    /// Nodes (or MCTS visits) per position.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=tafl_search::MAX_SEARCH_COUNT))]
    nodes: Option<u64>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// The analysis of one position.
#[derive(Debug, Clone, Serialize)]
struct PositionReport {
    fen: String,
    side_to_move: Side,
    best: String,
    /// From the side to move's view.
    value: Option<f32>,
    pv: Vec<String>,
    depth: u32,
    nodes: u64,
}

/// The analysis of one ply of a game.
#[derive(Debug, Clone, Serialize)]
struct PlyReport {
    ply: usize,
    side: Side,
    played: String,
    best: String,
    /// The position before the ply, from the attackers' view.
    value: Option<f32>,
    pv: Vec<String>,
    /// The player would have chosen another move.
    disagrees: bool,
    /// What the move played lost, for the side that moved (0 when it was the player's choice).
    drop: Option<f32>,
}

fn report(position: &Position, choice: &MoveChoice) -> PositionReport {
    PositionReport {
        fen: position.to_fen(),
        side_to_move: position.side_to_move(),
        best: choice.mv.to_string(),
        value: choice.value,
        pv: choice.pv.iter().map(ToString::to_string).collect(),
        depth: choice.depth,
        nodes: choice.nodes,
    }
}

/// Runs `tafl analyse`.
pub fn run(args: &AnalyseArgs) -> Result<u8, Failure> {
    let variant = variant::load(&args.variant).map_err(bad_input)?;
    let mut player = build_player(&args.player, variant)?;
    let limits = Limits {
        time: duration_arg("time", args.time.as_deref())?,
        depth: args.depth,
        nodes: args.nodes,
        visits: args.nodes,
        ..Limits::default()
    };
    let failed = |e: anyhow::Error| Failure { code: 1, error: e };
    if let Some(path) = &args.record {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display())).map_err(bad_input)?;
        let (start, plies) = game_from_record(&text, args.game, variant).map_err(bad_input)?;
        let rows = analyse_game(player.as_mut(), start, &plies, &limits).map_err(failed)?;
        let out = if args.json {
            serde_json::to_string_pretty(&rows).map_err(|e| failed(e.into()))?
        } else {
            game_table(&rows, player.name())
        };
        println!("{out}");
        return Ok(0);
    }
    if args.fen.is_empty() {
        return Err(bad_input(anyhow!("give a FEN to analyse, or --record FILE")));
    }
    let fen = args.fen.join(" ");
    let position = Position::from_fen(variant, &fen).map_err(|e| bad_input(anyhow!("bad FEN `{fen}`: {e}")))?;
    let game = Game::from_position(position);
    if game.outcome().is_over() {
        return Err(bad_input(anyhow!("the game is already over in this position ({:?})", game.outcome())));
    }
    let choice = player.choose(&game, &limits).map_err(|e| failed(anyhow!(e)))?;
    let r = report(&position, &choice);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&r).map_err(|e| failed(e.into()))?);
    } else {
        println!("{}", position.pretty().trim_end());
        let value = r.value.map_or_else(|| "none".to_string(), |v| format!("{v:+.3} for the {}", r.side_to_move));
        println!("player: {}", player.name());
        println!("value:  {value}");
        println!("best:   {}", r.best);
        println!("line:   {}", r.pv.join(" "));
        println!("depth {}, {} nodes", r.depth, r.nodes);
    }
    Ok(0)
}

/// The start and plies of game `number` (1-based) of a record file.
fn game_from_record(
    text: &str,
    number: usize,
    variant: &'static tafl_rules::Variant,
) -> anyhow::Result<(Position, Vec<RecordedPly>)> {
    let mut start = Position::start(variant);
    let mut seen = 0;
    for line in text.lines() {
        let line = line.trim();
        if let Some(comment) = line.strip_prefix('#') {
            if let Some(fen) = comment.trim().strip_prefix("start ") {
                start = Position::from_fen(variant, fen).map_err(|e| anyhow!("`# start {fen}`: {e}"))?;
            }
            continue;
        }
        if line.is_empty() {
            continue;
        }
        seen += 1;
        if seen < number {
            start = Position::start(variant);
            continue;
        }
        let plies = if line.contains(',') {
            parse_archive_line(line, variant.size()).map_err(|e| anyhow!("game {number}: {e}"))?.plies
        } else {
            parse_move_list(line, variant.size()).map_err(|e| anyhow!("game {number}: {e}"))?.0
        };
        return Ok((start, plies));
    }
    Err(anyhow!("the record has {seen} games, not {number}"))
}

fn analyse_game(
    player: &mut dyn Player,
    start: Position,
    plies: &[RecordedPly],
    limits: &Limits,
) -> anyhow::Result<Vec<PlyReport>> {
    let mut game = Game::from_position(start);
    player.new_game();
    let mut rows: Vec<PlyReport> = Vec::new();
    // The value of the position before each ply, from the side to move's view.
    let mut values: Vec<Option<f32>> = Vec::new();
    for (i, ply) in plies.iter().enumerate() {
        if game.outcome().is_over() {
            break;
        }
        let side = game.position().side_to_move();
        let choice = player.choose(&game, limits).map_err(|e| anyhow!("ply {}: {e}", i + 1))?;
        values.push(choice.value);
        let played = ply.mv.mv;
        rows.push(PlyReport {
            ply: i + 1,
            side,
            played: played.to_string(),
            best: choice.mv.to_string(),
            value: choice.value.map(|v| if side == Side::Attackers { v } else { -v }),
            pv: choice.pv.iter().map(ToString::to_string).collect(),
            disagrees: choice.mv != played,
            drop: None,
        });
        game.play(played).map_err(|e| anyhow!("ply {} ({}): {e}", i + 1, ply.text))?;
    }
    // The value after the last ply, for the drop of the last move.
    let last_after = match game.outcome() {
        tafl_rules::Outcome::Ongoing => player.choose(&game, limits).ok().and_then(|c| c.value),
        tafl_rules::Outcome::Decided { winner, .. } => {
            Some(if winner == game.position().side_to_move() { 1.0 } else { -1.0 })
        }
        tafl_rules::Outcome::Draw { .. } => Some(0.0),
    };
    for i in 0..rows.len() {
        let after = if i + 1 < values.len() { values[i + 1] } else { last_after };
        rows[i].drop = match (values[i], after) {
            (Some(before), Some(after)) if rows[i].disagrees => Some((before + after).max(0.0)),
            (Some(_), Some(_)) => Some(0.0),
            _ => None,
        };
    }
    Ok(rows)
}

fn game_table(rows: &[PlyReport], player: String) -> String {
    let mut out = format!("analysis by {player}; values from the attackers' view\n");
    let _ = writeln!(
        out,
        "{:>4}  {:<9}  {:<9}  {:<9}  {:>6}  {:>5}  line",
        "ply", "side", "played", "best", "value", "drop"
    );
    for r in rows {
        let value = r.value.map_or_else(|| "-".to_string(), |v| format!("{v:+.2}"));
        let drop = r.drop.filter(|d| *d > 0.0).map_or_else(String::new, |d| format!("{d:.2}"));
        let mark = if r.disagrees { "*" } else { " " };
        let _ = writeln!(
            out,
            "{:>4}{mark} {:<9}  {:<9}  {:<9}  {:>6}  {:>5}  {}",
            r.ply,
            r.side.name(),
            r.played,
            r.best,
            value,
            drop,
            r.pv.join(" ")
        );
    }
    let mut worst: Vec<&PlyReport> = rows.iter().filter(|r| r.disagrees).collect();
    worst.sort_by(|a, b| b.drop.unwrap_or(0.0).total_cmp(&a.drop.unwrap_or(0.0)));
    let _ = writeln!(out, "\nthe player disagrees with {} of {} moves (*)", worst.len(), rows.len());
    for r in worst.iter().take(5).filter(|r| r.drop.is_some_and(|d| d > 0.0)) {
        let _ = writeln!(
            out,
            "  ply {} ({}): played {}, prefers {} (drop {:.2})",
            r.ply,
            r.side.name(),
            r.played,
            r.best,
            r.drop.unwrap_or(0.0)
        );
    }
    out
}

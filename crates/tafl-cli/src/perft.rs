//! `tafl perft` and `tafl show`.

use std::time::Instant;

use anyhow::Context;
use clap::Args;
use tafl_rules::Position;

use crate::{Failure, bad_input, variant};

/// Arguments of `tafl perft`.
#[derive(Args)]
pub struct PerftArgs {
    /// A preset (copenhagen, copenhagen-13, tablut, brandubh) or a variant TOML file.
    #[arg(long, default_value = "copenhagen")]
    variant: String,
    /// Deepest depth to count.
    #[arg(long, default_value_t = 4)]
    depth: u32,
    /// Start from this FEN instead of the variant's start.
    #[arg(long)]
    fen: Option<String>,
    /// Make every move, also on the last ply (default: bulk-count the last ply).
    #[arg(long)]
    no_bulk: bool,
}

/// Arguments of `tafl show`.
#[derive(Args)]
pub struct ShowArgs {
    /// A preset or a variant TOML file.
    #[arg(long, default_value = "copenhagen")]
    variant: String,
    /// The position to show (default: the variant's start).
    #[arg(long)]
    fen: Option<String>,
}

fn position(variant: &str, fen: Option<&str>) -> Result<Position, Failure> {
    let v = variant::load(variant).map_err(bad_input)?;
    match fen {
        Some(text) => Position::from_fen(v, text).context("bad --fen").map_err(bad_input),
        None => Ok(Position::start(v)),
    }
}

/// Prints node counts per depth with time and nodes per second.
pub fn run(args: &PerftArgs) -> Result<u8, Failure> {
    let start = position(&args.variant, args.fen.as_deref())?;
    let mode = if args.no_bulk { "every move made" } else { "last ply bulk-counted" };
    println!("perft {} ({mode}), single thread", start.variant().name());
    println!("{:>5} {:>15} {:>10} {:>14}", "depth", "nodes", "seconds", "nodes/s");
    for depth in 1..=args.depth {
        let t = Instant::now();
        let nodes = start.perft(depth, !args.no_bulk);
        let secs = t.elapsed().as_secs_f64();
        println!("{depth:>5} {nodes:>15} {secs:>10.3} {:>14.0}", nodes as f64 / secs.max(1e-9));
    }
    Ok(0)
}

/// Prints the board, FEN and OpenTafl record.
pub fn show(args: &ShowArgs) -> Result<u8, Failure> {
    let p = position(&args.variant, args.fen.as_deref())?;
    print!("{}", p.pretty());
    println!("FEN: {}", p.to_fen());
    println!("OpenTafl: {}", p.to_opentafl());
    println!("legal moves: {}", p.count_legal_moves());
    Ok(0)
}

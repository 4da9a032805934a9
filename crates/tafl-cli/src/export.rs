//! `tafl export`: a self-contained player bundle (weights, search settings, README, ONNX net) from a run.

use std::path::PathBuf;

use anyhow::anyhow;
use clap::{ArgAction, Args};
use tafl_players::export::{ExportOptions, export};

use crate::engine::duration_arg;
use crate::{Failure, bad_input};

const EXPORT_HELP: &str = "The bundle directory holds player.toml (variant, encoding, net, search
settings), weights/ (the checkpoint, without optimiser state), net.onnx (the net alone, to run
without tafl; README.md says how) and README.md. It is a player spec of its own wherever
--player takes one, with mcts keys as overrides:

  tafl export --run data/runs/default --out players/best --visits 400 --time-per-move 2s
  tafl engine --player players/best --protocol htp
  tafl play --player players/best:visits=800
  tafl analyse --player players/best FEN";

/// Arguments of `tafl export`.
#[derive(Args)]
#[command(after_help = EXPORT_HELP)]
pub struct ExportArgs {
    /// The run directory to export from.
    #[arg(long)]
    run: PathBuf,
    /// `best`, or a model id such as m000012.
    #[arg(long, default_value = "best")]
    model: String,
    /// The bundle directory to write; it must not exist.
    #[arg(long)]
    out: PathBuf,
    /// Visits per move.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=tafl_search::MAX_SEARCH_COUNT as i64))]
    visits: u32,
    /// Longest time per move when the caller gives no clock (`1s`, `500ms`; `none`: visits only).
    #[arg(long, default_value = "1s")]
    time_per_move: String,
    /// Gumbel root search (false: PUCT). Gumbel learns with few visits; for play at 200 visits
    /// PUCT with one leaf per net call was the stronger (docs/training.md, "What the default CPU run learns").
    #[arg(long, default_value_t = false, action = ArgAction::Set)]
    gumbel: bool,
    /// Leaves gathered per network call (more: faster, but virtual loss blurs the search).
    #[arg(long, default_value_t = 1)]
    batch: usize,
}

/// Runs `tafl export`.
pub fn run(args: &ExportArgs) -> Result<u8, Failure> {
    let time_per_move = if args.time_per_move == "none" {
        None
    } else {
        duration_arg("time-per-move", Some(args.time_per_move.as_str()))?
    };
    if args.visits == 0 {
        return Err(bad_input(anyhow!("--visits must be at least 1")));
    }
    let options = ExportOptions {
        model: Some(args.model.clone()),
        visits: args.visits,
        time_per_move,
        gumbel: args.gumbel,
        batch: args.batch,
    };
    let report = export(&args.run, &args.out, &options).map_err(bad_input)?;
    let m = &report.manifest;
    println!(
        "exported {} ({}, {}, encoding {}) to {}: {} visits{}, {} search",
        report.model,
        m.variant,
        m.net.name,
        m.encoding_version,
        report.out.display(),
        m.search.visits,
        m.search.time_per_move.as_deref().map_or_else(String::new, |t| format!(", {t} per move")),
        if m.search.gumbel { "gumbel" } else { "puct" },
    );
    println!("run it: tafl engine --player {} --protocol htp", report.out.display());
    Ok(0)
}

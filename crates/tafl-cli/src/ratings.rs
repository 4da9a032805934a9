//! `tafl ratings`: one Elo scale over matches played apart. Reads the `summary.json` of
//! `tafl arena` matches and tournaments and of `tafl ladder` rungs, matches players by name and
//! fits them together, so that a player measured only against its neighbours and another measured
//! only against anchors still land on one scale.

use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use clap::Args;
use tafl_arena::{Pool, plot_ladder, ratings_text};

use crate::{Failure, bad_input};

const RATINGS_HELP: &str = "Each PATH is a summary.json, or a folder searched for them (a match's
--out, a ladder's --out with its rungs, a folder of either). Players are matched by name, so name
them alike in every match (name=…, or --level N, which names the player level-N). The fit is the
arena's Bradley-Terry fit with a prior of one virtual draw per pairing; players no chain of games
links are refused. A rating's interval is its own in the joint fit, not against the anchor.

Examples:
  tafl ratings data/levels --anchor random
  tafl ratings data/levels/steps data/levels/level-10 --anchor alphabeta:depth=1 --plot levels.svg
  tafl ratings a/summary.json b/summary.json --json";

/// How deep folders are searched for `summary.json`.
const MAX_DEPTH: usize = 6;
/// The most summaries one command reads.
const MAX_SUMMARIES: usize = 10_000;
/// The largest summary read (a match of 100 000 games is about 30 MB).
const MAX_SUMMARY_BYTES: u64 = 256 << 20;

/// Arguments of `tafl ratings`.
#[derive(Args)]
#[command(after_help = RATINGS_HELP)]
pub struct RatingsArgs {
    /// summary.json files, or folders holding them.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// The player put at Elo 0 (default: the players' mean is 0).
    #[arg(long)]
    anchor: Option<String>,
    /// Also draw the scale as an SVG file.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Print the ratings as JSON instead of the table.
    #[arg(long)]
    json: bool,
}

/// Every `summary.json` under `path` (or `path` itself), in a stable order.
fn summaries(path: &Path, depth: usize, found: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    if found.len() > MAX_SUMMARIES {
        return Err(anyhow!("more than {MAX_SUMMARIES} summaries: name fewer folders"));
    }
    let meta = std::fs::metadata(path).with_context(|| format!("reading {}", path.display()))?;
    if meta.is_file() {
        found.push(path.to_path_buf());
        return Ok(());
    }
    if depth == MAX_DEPTH {
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .with_context(|| format!("reading {}", path.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for entry in entries {
        if entry.is_dir() {
            summaries(&entry, depth + 1, found)?;
        } else if entry.file_name().is_some_and(|n| n == "summary.json") {
            found.push(entry);
        }
    }
    Ok(())
}

fn read_summary(path: &Path) -> anyhow::Result<String> {
    let size = std::fs::metadata(path).with_context(|| format!("reading {}", path.display()))?.len();
    if size > MAX_SUMMARY_BYTES {
        return Err(anyhow!("{}: {size} bytes, more than a summary.json holds", path.display()));
    }
    std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
}

/// Fits the players of every summary found and prints the scale.
pub fn run(args: &RatingsArgs) -> Result<u8, Failure> {
    let mut files = Vec::new();
    for path in &args.paths {
        summaries(path, 0, &mut files).map_err(bad_input)?;
    }
    if files.is_empty() {
        return Err(bad_input(anyhow!("no summary.json under {}", args.paths[0].display())));
    }
    let mut pool = Pool::new();
    let mut games = 0;
    for file in &files {
        let text = read_summary(file).map_err(bad_input)?;
        games += pool.add_summary(&text).with_context(|| file.display().to_string()).map_err(bad_input)?;
    }
    let entries = pool.ratings(args.anchor.as_deref()).map_err(bad_input)?;
    if let Some(plot) = &args.plot {
        let scale = args.anchor.as_deref().map_or_else(|| "mean 0".to_string(), |a| format!("{a} at 0"));
        let title = format!("{} players, {games} games ({scale})", entries.len());
        plot_ladder(plot, &entries, &title)?;
    }
    if args.json {
        let json = serde_json::to_string_pretty(&entries).map_err(|e| Failure { code: 1, error: e.into() })?;
        println!("{json}");
    } else {
        print!("{}", ratings_text(&entries, args.anchor.as_deref()));
        println!("\n{games} games from {} summaries ({})", files.len(), pool.variant().unwrap_or("?"));
    }
    Ok(0)
}

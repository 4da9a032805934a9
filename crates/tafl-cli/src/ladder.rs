//! `tafl ladder`: one player against the strength ladder (random, alpha-beta depths 1-4,
//! `alphabeta:time=1s`, optionally a previous player), a paired match per rung, a table of
//! scores, Elo with intervals and results per side, and the games on disk.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use tafl_arena::{ArenaConfig, LadderReport, PlayerSpec, Rung, Summary, random_openings, run_match, write_results};

use crate::arena::{parse_spec, players_from_toml};
use crate::{Failure, bad_input, variant};

/// The default ladder, `configs/strength.toml`, built in so that `tafl ladder` works anywhere.
const DEFAULT_LADDER: &str = include_str!("../../../configs/strength.toml");

const LADDER_HELP: &str = "The ladder (default: configs/strength.toml, built in):
  random, alphabeta:depth=1 .. depth=4, alphabeta:time=1s; --previous SPEC adds a last rung.
Each rung is a paired match on the same openings (random plies from --seed), sides swapped.
Per rung: the player's score, Elo (player minus opponent, 95% interval from the game pairs),
and its results as attackers and as defenders (+wins =draws -losses). The games of each rung
go to --out/NN-OPPONENT/ (games.csv, otg/, summary.json), the table to --out/ladder.txt with
the command that made it, and the numbers to --out/ladder.json.

Examples:
  tafl ladder --player mcts:model=data/runs/default,visits=200
  tafl ladder --player players/best --previous players/old --games 100 --seed 2026 --out data/ladder/best
  tafl ladder --player alphabeta:depth=2 --ladder my-ladder.toml --games 20 --threads 2";

/// Arguments of `tafl ladder`.
#[derive(Args)]
#[command(after_help = LADDER_HELP)]
pub struct LadderArgs {
    /// The player to measure (a player spec, or an exported bundle directory).
    #[arg(long, required_unless_present = "level")]
    player: Option<String>,
    /// Measure a level (1-10, docs/levels.md) instead of --player.
    #[arg(long, conflicts_with = "player", value_parser = clap::value_parser!(u8).range(1..=10))]
    level: Option<u8>,
    /// A previous player, measured against as the last rung (e.g. the last shipped bundle).
    #[arg(long)]
    previous: Option<String>,
    /// The ladder: a players file (`[[player]]` tables with `spec` and optional `name`).
    #[arg(long)]
    ladder: Option<PathBuf>,
    /// Games per rung (rounded up to an even number: pairs with sides swapped).
    #[arg(long, default_value_t = 100)]
    games: usize,
    /// Seed of the openings and of the players' randomness: choose one that played no part in
    /// tuning the player.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Random plies from the start that make each pair's opening.
    #[arg(long, default_value_t = 4)]
    opening_plies: usize,
    /// Games longer than this many plies (the opening included) are drawn.
    #[arg(long, default_value_t = 400)]
    max_plies: usize,
    /// Games at once (default: the number of CPUs).
    #[arg(long)]
    threads: Option<usize>,
    /// Where the games and the table go (default: data/ladder/PLAYER).
    #[arg(long)]
    out: Option<PathBuf>,
    /// A preset or a variant TOML file.
    #[arg(long, default_value = "copenhagen")]
    variant: String,
    /// Print ladder.json to standard output instead of the table.
    #[arg(long)]
    json: bool,
    /// No progress.
    #[arg(long)]
    quiet: bool,
}

/// `name` as a file name: letters, digits, `.`, `-` and `_` kept, the rest `_`.
fn file_name(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') { c } else { '_' }).collect()
}

/// The opponents: the ladder file's, then `--previous`.
fn opponents(args: &LadderArgs) -> anyhow::Result<Vec<PlayerSpec>> {
    let mut players = match &args.ladder {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            players_from_toml(&text, &path.display().to_string())?
        }
        None => players_from_toml(DEFAULT_LADDER, "configs/strength.toml (built in)")?,
    };
    if let Some(previous) = &args.previous {
        let spec = parse_spec(previous)?;
        if players.iter().any(|p| p.name() == spec.name()) {
            return Err(anyhow!(
                "--previous `{}` has the name of a rung of the ladder: give it a name= of its own",
                spec.name()
            ));
        }
        players.push(spec);
    }
    if players.is_empty() {
        return Err(anyhow!("the ladder has no player"));
    }
    Ok(players)
}

/// The command line, quoted for a shell where needed, for ladder.txt.
fn command_line() -> String {
    let quote = |a: String| {
        if !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_=:,./@".contains(c)) {
            a
        } else {
            format!("'{}'", a.replace('\'', "'\\''"))
        }
    };
    let mut words: Vec<String> = std::env::args().map(quote).collect();
    if let Some(first) = words.first_mut() {
        *first = "tafl".into();
    }
    words.join(" ")
}

fn write(path: &Path, text: &str) -> Result<(), Failure> {
    tafl_files::write_atomic(path, text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
        .map_err(|e| Failure { code: 1, error: e })
}

/// Runs the ladder and prints the table.
pub fn run(args: &LadderArgs) -> Result<u8, Failure> {
    let variant = variant::load(&args.variant).map_err(bad_input)?;
    let level = crate::level_spec(args.level)?;
    let text = level.as_deref().or(args.player.as_deref()).unwrap_or_default();
    let player = parse_spec(text).map_err(bad_input)?;
    let opponents = opponents(args).map_err(bad_input)?;
    let pairs = args.games.div_ceil(2).max(1);
    let openings = random_openings(variant, pairs, args.opening_plies, args.seed);
    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    let config =
        ArenaConfig { variant, openings, pairs, max_plies: args.max_plies, threads, seed: args.seed, sprt: None };
    let out = args.out.clone().unwrap_or_else(|| Path::new("data/ladder").join(file_name(player.name())));
    std::fs::create_dir_all(&out)
        .with_context(|| format!("creating {}", out.display()))
        .map_err(|e| Failure { code: 1, error: e })?;

    let total = 2 * pairs * opponents.len();
    let bar = if args.quiet { ProgressBar::hidden() } else { ProgressBar::new(total as u64) };
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} games [{elapsed_precise}<{eta}] {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    // Without a terminal the bar draws nothing: a line per pair keeps logs informative.
    let log_lines = !args.quiet && !std::io::stderr().is_terminal();
    // ZeroFactory builds `mcts:model=…` players and bundles, and hands the rest to the arena's netless players.
    let factory = tafl_players::ZeroFactory::new(variant);
    let mut rungs: Vec<Rung> = Vec::new();
    for (index, opponent) in opponents.iter().enumerate() {
        let before = (2 * pairs * index) as u64;
        let progress = |p: &tafl_arena::Progress| {
            bar.set_position(before + p.done as u64);
            bar.set_message(format!("vs {}: {}", opponent.name(), p.message));
            if log_lines {
                eprintln!("vs {}: {}/{} games: {}", opponent.name(), p.done, p.total, p.message);
            }
        };
        let results = run_match(&player, opponent, &config, &factory, &progress)?;
        let dir = out.join(format!("{:02}-{}", index + 1, file_name(opponent.name())));
        write_results(&dir, &results, &Summary::new(&results))?;
        let rung = Rung::from_match(&results);
        let line = format!(
            "vs {}: {:.1}% over {} games, Elo {:+.0}",
            rung.opponent,
            100.0 * rung.total.score(),
            rung.games,
            rung.elo.elo
        );
        if log_lines {
            eprintln!("{line}");
        } else {
            bar.println(line);
        }
        rungs.push(rung);
    }
    bar.finish_and_clear();

    let report = LadderReport {
        player: player.name().to_string(),
        variant: variant.name().to_string(),
        games: 2 * pairs,
        openings: config.openings.len(),
        seed: args.seed,
        max_plies: args.max_plies,
        rungs,
    };
    let json = serde_json::to_string_pretty(&report).map_err(|e| Failure { code: 1, error: e.into() })?;
    write(&out.join("ladder.json"), &(json.clone() + "\n"))?;
    let table = report.to_text();
    write(&out.join("ladder.txt"), &format!("$ {}\n\n{table}", command_line()))?;
    if args.json {
        println!("{json}");
    } else {
        print!("{table}");
        println!("Games and tables in {}", out.display());
    }
    Ok(0)
}

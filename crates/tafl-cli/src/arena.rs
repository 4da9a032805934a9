//! `tafl arena`: a match between two players or a round robin, with a progress bar, a results
//! table, and records in an output directory.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, anyhow};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Deserialize;
use tafl_arena::{
    ArenaConfig, Opening, PlayerSpec, Sprt, Summary, parse_openings, plot_ladder, random_openings, run_tournament,
    write_results,
};

use crate::{Failure, bad_input, variant};

const ARENA_HELP: &str = "Player specs: KIND:KEY=VALUE,...
  builtin[:visits=N][,time=1s][,guard=PLIES]
                                       the trained net that ships with tafl (MCTS, 200 visits;
                                       time= without visits=: it searches until the time is up);
                                       guard=3: each chosen move checked by a 3-ply alpha-beta,
                                       a move it proves lost replaced by the search's next best
  random[:seed=N]                      uniformly random moves
  alphabeta[:depth=N][,time=1s][,nodes=N]   the alpha-beta baseline
  htp:[timeout=60s,][tcp=true,]cmd=PROGRAM ARGS
                                       an external engine over HTP (cmd comes last); tcp=true:
                                       it connects to us (the reference's --host mode, which
                                       takes --ai basic --depth N)
  uci:[timeout=DUR,][movetime=MS|DUR,][nodes=N,]cmd=PROGRAM ARGS
                                       an external engine over the UCI-style protocol
                                       (TaflZero's; cmd comes last), asked for go movetime
                                       (default 1000 ms) and/or go nodes
  mcts:model=PATH[,visits=200][,batch=8][,gumbel=true][,cache=N][,seed=N][,time=1s][,guard=PLIES]
                                       MCTS guided by a checkpoint (a checkpoint directory, or a
                                       run directory: its models/best); model=none: uniform priors
  every kind takes name=LABEL

Examples:
  tafl arena --a alphabeta:depth=2 --b random:seed=1 --games 20
  tafl arena --a builtin --b alphabeta:depth=2 --games 100 --threads 2 --seed 2026
  tafl arena --a mcts:model=PATH,visits=200 --b alphabeta:depth=2 --games 100 --threads 2
  tafl arena --a alphabeta:depth=3 --b alphabeta:depth=2 --games 400 --sprt elo0=0,elo1=20 --out data/arena/ab3-ab2
  tafl arena --a alphabeta:depth=2 --b 'htp:cmd=hnefatafl-text-protocol' --games 20 --threads 2
  tafl arena --a alphabeta:depth=2 --b 'htp:tcp=true,cmd=hnefatafl-text-protocol --ai basic --depth 3' --games 50
  tafl arena --a builtin --b 'uci:movetime=1000,cmd=taflzero --net default_nn.onnx' --games 20
  tafl arena --players players.toml --games 20 --out data/arena/ladder --plot

players.toml:
  [[player]]
  spec = \"alphabeta:depth=1\"
  [[player]]
  spec = \"alphabeta:depth=2\"
  name = \"ab2\"

Every opening is played twice, sides swapped. Games longer than --max-plies are draws.
A player that fails (an engine dies, times out, answers garbage, moves illegally) loses that game.
Exit code: 0 done, 1 the run failed, 2 bad input.";

/// Arguments of `tafl arena`.
#[derive(Args)]
#[command(after_help = ARENA_HELP)]
pub struct ArenaArgs {
    /// A preset or a variant TOML file.
    #[arg(long, default_value = "copenhagen")]
    variant: String,
    /// Player A (match mode).
    #[arg(long, requires = "b", conflicts_with = "players")]
    a: Option<String>,
    /// Player B (match mode).
    #[arg(long, requires = "a")]
    b: Option<String>,
    /// A TOML file of players for a round robin: `[[player]]` tables with `spec` and optional `name`.
    #[arg(long)]
    players: Option<PathBuf>,
    /// Games per pairing (rounded up to an even number: pairs with sides swapped).
    #[arg(long, default_value_t = 100)]
    games: usize,
    /// Random plies from the start that make each pair's opening (0: every game from the start).
    #[arg(long, default_value_t = 4)]
    opening_plies: usize,
    /// A file of openings instead: one FEN per line, optionally `FEN ; moves`, or `start ; moves`.
    #[arg(long, conflicts_with = "opening_plies")]
    openings: Option<PathBuf>,
    /// Seed for openings and random players.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Games longer than this many plies (the opening included) are drawn.
    #[arg(long, default_value_t = 400)]
    max_plies: usize,
    /// Games at once (default: the number of CPUs).
    #[arg(long)]
    threads: Option<usize>,
    /// Stop a match early once decided: `elo0=0,elo1=10,alpha=0.05,beta=0.05`.
    #[arg(long)]
    sprt: Option<String>,
    /// Write summary.json, games.csv (archive format) and otg/*.otg here; while the match runs,
    /// finished games go to games.partial.csv.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Also draw the Elo ladder as ladder.svg in --out.
    #[arg(long, requires = "out")]
    plot: bool,
    /// Print summary.json to standard output instead of the tables.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlayersFile {
    player: Vec<PlayerEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlayerEntry {
    spec: String,
    name: Option<String>,
}

pub fn parse_spec(text: &str) -> anyhow::Result<PlayerSpec> {
    text.parse::<PlayerSpec>().with_context(|| format!("bad player spec `{text}`"))
}

fn load_players(args: &ArenaArgs) -> anyhow::Result<Vec<PlayerSpec>> {
    if let (Some(a), Some(b)) = (&args.a, &args.b) {
        return Ok(vec![parse_spec(a)?, parse_spec(b)?]);
    }
    let path = args.players.as_ref().ok_or_else(|| anyhow!("give --a and --b, or --players FILE"))?;
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let players = players_from_toml(&text, &path.display().to_string())?;
    if players.len() < 2 {
        return Err(anyhow!("{}: a tournament needs at least two players", path.display()));
    }
    Ok(players)
}

/// The players of a players file (`[[player]]` tables with `spec` and an optional `name`);
/// `source` names the file in messages.
pub fn players_from_toml(text: &str, source: &str) -> anyhow::Result<Vec<PlayerSpec>> {
    let file: PlayersFile = toml::from_str(text).with_context(|| source.to_string())?;
    let mut players = Vec::new();
    for entry in file.player {
        let mut spec = parse_spec(&entry.spec)?;
        if let Some(name) = entry.name {
            spec = spec.with_name(&name);
        }
        if players.iter().any(|p: &PlayerSpec| p.name() == spec.name()) {
            return Err(anyhow!("two players named `{}`: give one a name", spec.name()));
        }
        players.push(spec);
    }
    Ok(players)
}

/// Runs the match or tournament and prints the results.
pub fn run(args: &ArenaArgs) -> Result<u8, Failure> {
    let variant = variant::load(&args.variant).map_err(bad_input)?;
    let players = load_players(args).map_err(bad_input)?;
    let sprt = args.sprt.as_deref().map(str::parse::<Sprt>).transpose().map_err(bad_input)?;
    if sprt.is_some() && players.len() != 2 {
        return Err(bad_input(anyhow!("--sprt needs a match (--a and --b)")));
    }
    let pairs = args.games.div_ceil(2).max(1);
    let openings: Vec<Opening> = match &args.openings {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))
                .map_err(bad_input)?;
            parse_openings(variant, &text).map_err(|e| bad_input(anyhow!("{}: {e}", path.display())))?
        }
        None => random_openings(variant, pairs, args.opening_plies, args.seed),
    };
    if openings.len() < pairs && !args.quiet {
        eprintln!(
            "note: only {} distinct openings for {pairs} pairs: openings repeat, so deterministic players repeat games",
            openings.len()
        );
    }
    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    let config = ArenaConfig { variant, openings, pairs, max_plies: args.max_plies, threads, seed: args.seed, sprt };
    let total = pairs * players.len() * (players.len() - 1);
    let bar = if args.quiet { ProgressBar::hidden() } else { ProgressBar::new(total as u64) };
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} games [{elapsed_precise}<{eta}] {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let partial =
        args.out.as_deref().map(PartialGames::create).transpose().map_err(|e| Failure { code: 1, error: e })?;
    // Without a terminal the bar draws nothing: a line per pair keeps logs informative.
    let log_lines = !args.quiet && !std::io::stderr().is_terminal();
    let progress = |p: &tafl_arena::Progress| {
        bar.set_position(p.done as u64);
        bar.set_message(p.message.clone());
        if log_lines {
            eprintln!("{}/{} games: {}", p.done, p.total, p.message);
        }
        if let Some(partial) = &partial {
            partial.append(&p.games, &players);
        }
    };
    // ZeroFactory builds `mcts:model=…` players and hands every other kind to the arena's netless players.
    let factory = tafl_players::ZeroFactory::new(variant);
    let results = run_tournament(&players, &config, &factory, &progress);
    bar.finish_and_clear();
    let results = results?;
    let summary = Summary::new(&results);
    if let Some(dir) = &args.out {
        write_results(dir, &results, &summary)?;
        if let Some(partial) = partial {
            partial.remove();
        }
        if args.plot {
            let title = format!("{} Elo ladder ({} games)", summary.variant, summary.games_played);
            plot_ladder(&dir.join("ladder.svg"), &summary.ladder, &title)?;
        }
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary).map_err(|e| Failure { code: 1, error: e.into() })?);
    } else {
        print!("{}", summary.to_text());
        if let Some(dir) = &args.out {
            println!("Records and summary.json in {}", dir.display());
        }
    }
    Ok(0)
}

/// `games.partial.csv` in the `--out` folder: each pair's games appended as they finish, so a
/// long match that is stopped or crashes keeps what it played. Replaced by `games.csv` at the end.
struct PartialGames {
    path: PathBuf,
    file: Mutex<std::fs::File>,
}

impl PartialGames {
    fn create(dir: &Path) -> anyhow::Result<PartialGames> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let path = dir.join("games.partial.csv");
        let mut file = std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        file.write_all(tafl_arena::GAMES_CSV_HEADER.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
        Ok(PartialGames { path, file: Mutex::new(file) })
    }

    fn append(&self, games: &[tafl_arena::GameResult], players: &[PlayerSpec]) {
        let text: String = games.iter().map(|g| tafl_arena::game_record(g, players)).collect();
        let mut file = self.file.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // One write per pair; a failure here must not stop the match (games.csv comes at the end).
        if let Err(e) = file.write_all(text.as_bytes()).and_then(|()| file.flush()) {
            eprintln!("warning: {}: {e}", self.path.display());
        }
    }

    fn remove(self) {
        drop(self.file);
        let _ = std::fs::remove_file(&self.path);
    }
}

//! `tafl serve`: the browser interface (crate `tafl-web`) on a local address.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, anyhow};
use clap::Args;
use tafl_arena::PlayerSpec;
use tafl_web::{DEFAULT_PLAYERS, ServeConfig, is_local, is_run};

use crate::{Failure, bad_input, variant};

const SERVE_HELP: &str = "Open the address it prints in a browser. Play: click a piece, then one of
its highlighted squares. Analyse: the player's value, line and (for a net) where it wants to move.
Watch: the curves of each --run, refreshed while it trains.

The page chooses among the players given by --player (repeat it; the first is the default),
never a spec of its own: what runs on this machine is what you named here. Without --player it
offers alphabeta:time=1s, builtin:time=1s, alphabeta:depth=2, alphabeta:depth=4 and random.

It listens on this machine only (127.0.0.1) unless --listen says otherwise; there is no login,
so open it to a network you trust only. Requests must name the server by an IP address or
localhost (--allow-host NAME for a name), and only its own page may use the API.

Examples:
  tafl serve
  tafl serve --player builtin:time=2s --player alphabeta:depth=3
  tafl serve --run data/runs/default --player mcts:model=data/runs/default,visits=400
  tafl serve --listen 0.0.0.0:8080 --allow-host tafl.lan --variant my-variant.toml";

/// Arguments of `tafl serve`.
#[derive(Args)]
#[command(after_help = SERVE_HELP)]
pub struct ServeArgs {
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Run directories to watch (repeat or list several).
    #[arg(long, num_args = 1..)]
    run: Vec<PathBuf>,
    /// A player the page may use as opponent and analyser (any player SPEC; repeat for more,
    /// the first is the default).
    #[arg(long)]
    player: Vec<String>,
    /// Offer the ten levels (level-1 … level-10) after the --player list (or the default list).
    #[arg(long)]
    levels: bool,
    /// A host name the server may be reached by, besides its IP addresses and localhost (repeat
    /// for more).
    #[arg(long)]
    allow_host: Vec<String>,
    /// Searches at once (engine moves, analyses); more are refused until one ends.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=256))]
    max_searches: u16,
    /// A variant TOML file to offer besides the presets.
    #[arg(long)]
    variant: Option<String>,
}

/// Runs `tafl serve` until interrupted.
pub fn run(args: &ServeArgs) -> Result<u8, Failure> {
    let mut texts: Vec<String> = if args.player.is_empty() {
        DEFAULT_PLAYERS.iter().map(|p| (*p).to_string()).collect()
    } else {
        args.player.clone()
    };
    if args.levels {
        for level in 1..=tafl_arena::levels::MAX_LEVEL {
            texts.push(tafl_arena::levels::level_spec_text(level).map_err(bad_input)?);
        }
    }
    let mut players: Vec<PlayerSpec> = Vec::new();
    for text in &texts {
        let spec: PlayerSpec = text.parse().with_context(|| format!("--player {text}")).map_err(bad_input)?;
        if players.iter().any(|p| p.name() == spec.name()) {
            return Err(bad_input(anyhow!(
                "--player {text}: a player of that name is already offered (give one `name=`)"
            )));
        }
        players.push(spec);
    }
    let mut config = ServeConfig::new(players);
    config.allowed_hosts.clone_from(&args.allow_host);
    config.max_searches = usize::from(args.max_searches);
    if let Some(v) = &args.variant {
        let v = variant::load(v).map_err(bad_input)?;
        config.variants.retain(|p| p.name() != v.name());
        config.variants.insert(0, v);
    }
    for run in &args.run {
        if !is_run(run) {
            return Err(bad_input(anyhow!("--run {}: not a run directory (no models/ nor logs/)", run.display())));
        }
    }
    config.runs.clone_from(&args.run);
    // Build each player once, so that a typo shows now rather than in the page: for the first
    // variant it plays (`builtin` plays Copenhagen only).
    for text in &texts {
        let mut built = Err(bad_input(anyhow!("no variant is served")));
        for v in &config.variants {
            built = crate::engine::build_player(text, v);
            if built.is_ok() {
                break;
            }
        }
        built.map_err(|e| Failure { error: e.error.context(format!("--player {text}")), ..e })?;
    }
    let runtime = tokio::runtime::Runtime::new()
        .context("starting the async runtime")
        .map_err(|e| Failure { code: 1, error: e })?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("listening on {}", args.listen))
            .map_err(bad_input)?;
        let addr = listener.local_addr().unwrap_or(args.listen);
        let reach = if is_local(&addr) {
            "this machine only; --listen 0.0.0.0:8080 opens it to the network"
        } else {
            "OPEN TO THE NETWORK: anyone who can reach this address can use it"
        };
        println!("tafl serve: http://{addr}/  ({reach})");
        println!("players {}; {} run(s) watched; Ctrl-C stops", texts.join(", "), args.run.len());
        tafl_web::serve(listener, config).await.context("serving").map_err(|e| Failure { code: 1, error: e })
    })?;
    Ok(0)
}

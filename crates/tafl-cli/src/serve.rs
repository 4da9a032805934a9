//! `tafl serve`: the browser interface (crate `tafl-web`) on a local address.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, anyhow};
use clap::Args;
use tafl_web::{ServeConfig, is_local, is_run};

use crate::{Failure, bad_input, variant};

const SERVE_HELP: &str = "Open the address it prints in a browser. Play: click a piece, then one of
its highlighted squares. Analyse: the player's value, line and (for a net) where it wants to move.
Watch: the curves of each --run, refreshed while it trains.

It listens on this machine only (127.0.0.1) unless --listen says otherwise; there is no login,
so open it to a network you trust only.

Examples:
  tafl serve
  tafl serve --player alphabeta:time=2s
  tafl serve --run data/runs/default --player mcts:model=data/runs/default,visits=400
  tafl serve --listen 0.0.0.0:8080 --variant my-variant.toml";

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
    /// The opponent and analyser the page starts with (any player SPEC).
    #[arg(long, default_value = "alphabeta:time=1s")]
    player: String,
    /// A variant TOML file to offer besides the presets.
    #[arg(long)]
    variant: Option<String>,
}

/// Runs `tafl serve` until interrupted.
pub fn run(args: &ServeArgs) -> Result<u8, Failure> {
    let mut config = ServeConfig::new(&args.player);
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
    // Check the default player once, so that a typo shows now rather than in the page.
    crate::engine::build_player(&args.player, config.variants[0])?;
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime").map_err(|e| Failure { code: 1, error: e })?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.listen).await.with_context(|| format!("listening on {}", args.listen)).map_err(bad_input)?;
        let addr = listener.local_addr().unwrap_or(args.listen);
        let reach = if is_local(&addr) { "this machine only; --listen 0.0.0.0:8080 opens it to the network" } else { "OPEN TO THE NETWORK: anyone who can reach this address can use it" };
        println!("tafl serve: http://{addr}/  ({reach})");
        println!("player {}; {} run(s) watched; Ctrl-C stops", args.player, args.run.len());
        tafl_web::serve(listener, config).await.context("serving").map_err(|e| Failure { code: 1, error: e })
    })?;
    Ok(0)
}

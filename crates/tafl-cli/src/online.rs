//! `tafl online`: a player as an account on a Copenhagen Hnefatafl game server.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::anyhow;
use clap::Args;
use tafl_arena::{PlayerFactory, PlayerSpec};
use tafl_online::referee::variant_for;
use tafl_online::{Client, ClockPolicy, Log, OnStop, OnlineError, Options, TimeControl};
use tafl_players::ZeroFactory;
use tafl_rules::Side;

use crate::engine::duration_arg;
use crate::{Failure, bad_input};

const ONLINE_HELP: &str = "The server is hnefatafl-server (hnefatafl.org, port 49152). Each game gets a fresh player
built from --player; the Fischer clock decides how long each move may take (the budget is
logged with every move). The log goes to stderr; records of finished games, in the archive
format that `tafl replay` checks, go to --records.

Ctrl-C (or SIGTERM) stops: --on-stop finish plays the games in progress to the end, resign
resigns them; offers not yet accepted are withdrawn. A second Ctrl-C exits at once.

Examples:
  tafl online --host hnefatafl.org --username ai-tafl --password SECRET --create-account \\
      --player players/best --create both --games 10
  tafl online --host localhost --username ai-ab --password x --player alphabeta:depth=4 \\
      --create attacker --time 30s+1s --board 13
  tafl online --host localhost:49152 --username ai-random --password x --player random --join 7";

/// Arguments of `tafl online`.
#[derive(Args)]
#[command(after_help = ONLINE_HELP)]
pub struct OnlineArgs {
    /// The game server, HOST[:PORT] (default port 49152).
    #[arg(long, default_value = "hnefatafl.org")]
    host: String,
    /// The account (at most 16 letters, digits, - and _; AI accounts start with `ai-` by the
    /// site's convention).
    #[arg(long)]
    username: String,
    /// The account's password (no spaces, at most 32 characters).
    #[arg(long, default_value = "")]
    password: String,
    /// Create the account if it does not exist yet.
    #[arg(long)]
    create_account: bool,
    /// The player: any SPEC (alphabeta:depth=4, mcts:model=DIR, a bundle directory, random).
    #[arg(long, default_value = "alphabeta")]
    player: String,
    /// A level from 1 (random moves) to 10 (the shipped net at a second a move) instead of
    /// --player (docs/levels.md lists their players and measured strength).
    #[arg(long, conflicts_with = "player", value_parser = clap::value_parser!(u8).range(1..=10))]
    level: Option<u8>,
    /// Offer games to play as attacker, defender, or both in turn.
    #[arg(long)]
    create: Option<String>,
    /// Offered games are unrated.
    #[arg(long)]
    unrated: bool,
    /// The clock of offered games: MAIN+INCREMENT (15m+10s, 30s+1s) or none.
    #[arg(long, default_value = "15m+10s")]
    time: String,
    /// Board size of offered games: 11 or 13.
    #[arg(long, default_value_t = 11)]
    board: u8,
    /// Join the game offer ID of another account (repeatable).
    #[arg(long)]
    join: Vec<u128>,
    /// Stop after N games have ended (0: play until stopped).
    #[arg(long, default_value_t = 0)]
    games: usize,
    /// Games at once (each searches in its own thread).
    #[arg(long, default_value_t = 1)]
    concurrent: usize,
    /// What Ctrl-C does with games in progress: finish or resign.
    #[arg(long, default_value = "finish")]
    on_stop: String,
    /// Directory for the records of finished games (game-ID.csv).
    #[arg(long, default_value = "data/online")]
    records: PathBuf,
    /// Time per move in untimed games when the player has no time limit.
    #[arg(long, default_value = "5s")]
    move_time: String,
    /// Expected game length in plies, for the clock budget.
    #[arg(long, default_value_t = 100)]
    expected_plies: usize,
    /// Time lost per move to the network, for the clock budget (a round trip and more).
    #[arg(long, default_value = "300ms")]
    latency: String,
    /// Give up after N failed connection attempts in a row (default: never).
    #[arg(long)]
    max_retries: Option<u32>,
    /// The protocol version sent at login (the server's VERSION_ID; 6.4.1 wants 32d9a140).
    #[arg(long, default_value = tafl_online::protocol::VERSION_ID)]
    protocol_version: String,
}

/// The server's rule for account names, checked before connecting.
fn valid_username(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 16
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && !name.starts_with(['-', '_'])
        && !name.ends_with(['-', '_'])
        && !["--", "-_", "_-", "__"].iter().any(|p| name.contains(p))
}

/// The account name and password as the server takes them, checked before connecting.
fn check_account(username: &str, password: &str) -> Result<(), Failure> {
    if !valid_username(username) {
        return Err(bad_input(anyhow!(
            "--username {}: the server takes 1-16 letters, digits, - and _, not at the ends nor doubled",
            username
        )));
    }
    if password.len() > 32 || password.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad_input(anyhow!("--password: at most 32 characters, no spaces")));
    }
    Ok(())
}

/// `--create`: the sides to offer games as.
fn sides_to_create(create: Option<&str>) -> Result<Vec<Side>, Failure> {
    Ok(match create {
        None => Vec::new(),
        Some("attacker" | "attackers") => vec![Side::Attackers],
        Some("defender" | "defenders") => vec![Side::Defenders],
        Some("both") => vec![Side::Attackers, Side::Defenders],
        Some(other) => return Err(bad_input(anyhow!("--create {other}: expected attacker, defender or both"))),
    })
}

/// Runs `tafl online`.
pub fn run(args: &OnlineArgs) -> Result<u8, Failure> {
    check_account(&args.username, &args.password)?;
    let create = sides_to_create(args.create.as_deref())?;
    if create.is_empty() && args.join.is_empty() {
        return Err(bad_input(anyhow!("nothing to play: give --create attacker|defender|both or --join ID")));
    }
    let time = TimeControl::parse(&args.time).ok_or_else(|| {
        bad_input(anyhow!("--time {}: expected MAIN+INCREMENT such as 15m+10s or 30s+1s, or none", args.time))
    })?;
    variant_for(args.board).map_err(|e| bad_input(anyhow!("--board: {e}")))?;
    let on_stop = match args.on_stop.as_str() {
        "finish" => OnStop::Finish,
        "resign" => OnStop::Resign,
        other => return Err(bad_input(anyhow!("--on-stop {other}: expected finish or resign"))),
    };
    let level = crate::level_spec(args.level)?;
    let spec: PlayerSpec = level.as_deref().unwrap_or(&args.player).parse().map_err(bad_input)?;
    let limits = spec.limits();
    // Fail on a bad spec (or an unloadable net) before connecting.
    let mut factories: HashMap<u8, ZeroFactory> = HashMap::new();
    for size in [11, 13] {
        let variant = variant_for(size).map_err(|e| bad_input(anyhow!("{e}")))?;
        factories.insert(size, ZeroFactory::new(variant));
    }
    factories[&args.board].build(&spec, 0).map_err(bad_input)?;
    let move_time = duration_arg("move-time", Some(&args.move_time))?.unwrap_or_default();
    let latency = duration_arg("latency", Some(&args.latency))?.unwrap_or_default();
    let address = if args.host.contains(':') {
        args.host.clone()
    } else {
        format!("{}:{}", args.host, tafl_online::protocol::DEFAULT_PORT)
    };

    let mut options = Options::new(&address, &args.username, &args.password);
    options.create_account = args.create_account;
    options.version.clone_from(&args.protocol_version);
    options.create = create;
    options.rated = !args.unrated;
    options.time = time;
    options.size = args.board;
    options.join.clone_from(&args.join);
    options.games = (args.games > 0).then_some(args.games);
    options.concurrent = args.concurrent.max(1);
    options.on_stop = on_stop;
    options.limits = limits;
    options.untimed_move_time = move_time;
    options.clock = ClockPolicy {
        expected_plies: args.expected_plies,
        latency_ms: latency.as_millis() as i64,
        ..ClockPolicy::default()
    };
    options.records = Some(args.records.clone());
    options.max_retries = args.max_retries;

    let log = Arc::new(Log::new(Box::new(std::io::stderr())));
    if !args.username.starts_with("ai-") {
        log.line(&format!(
            "note: hnefatafl.org marks engine accounts by the prefix `ai-`; consider --username ai-{}",
            args.username
        ));
    }
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // The second signal exits at once; the first asks the client to stop.
        signal_hook::flag::register_conditional_shutdown(signal, 130, Arc::clone(&stop))
            .map_err(|e| Failure { code: 1, error: anyhow!(e) })?;
        signal_hook::flag::register(signal, Arc::clone(&stop)).map_err(|e| Failure { code: 1, error: anyhow!(e) })?;
    }
    let mut seed = 0u64;
    let make_player = Box::new(move |size: u8| {
        seed += 1;
        let factory = factories.get(&size).ok_or_else(|| format!("no player for {size}x{size}"))?;
        factory.build(&spec, seed).map_err(|e| e.to_string())
    });
    let client = Client::new(options, make_player, Arc::clone(&log), stop);
    let games = client.run().map_err(|e| match e {
        OnlineError::Login(_) | OnlineError::Options(_) => bad_input(e),
        OnlineError::Connect { .. } => Failure { code: 1, error: anyhow!(e) },
    })?;
    let (mut won, mut lost, mut drawn) = (0, 0, 0);
    for g in &games {
        match g.winner {
            Some(w) if w == g.side => won += 1,
            Some(_) => lost += 1,
            None => drawn += 1,
        }
    }
    log.line(&format!("{} games: {won} won, {lost} lost, {drawn} drawn", games.len()));
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_account_names_like_the_server() {
        assert!(valid_username("ai-tafl_2"));
        assert!(!valid_username("ai--tafl"));
        assert!(!valid_username("-ai"));
        assert!(!valid_username("a b"));
        assert!(!valid_username("abcdefghijklmnopq"));
    }
}

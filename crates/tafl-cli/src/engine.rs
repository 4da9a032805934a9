//! `tafl engine`: serve a player over HTP, the OpenTafl engine protocol or a UCI-style
//! protocol, on stdin/stdout or TCP. Also the player building that `play` and `analyse` share.

use std::io::{self, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

use anyhow::{Context, anyhow};
use clap::Args;
use tafl_arena::{PlayerFactory, PlayerSpec, spec::parse_duration};
use tafl_players::ZeroFactory;
use tafl_protocol::engine::{EngineOptions, Protocol, listen};
use tafl_protocol::htp::{HtpServer, HtpServerOptions};
use tafl_protocol::opentafl::{OpenTaflServer, engine_ini};
use tafl_protocol::uci::UciServer;
use tafl_rules::Variant;
use tafl_search::Player;

use crate::{Failure, bad_input, variant};

/// The port of the hnefatafl.org game server (the reference engine's `--host` mode).
const HNEFATAFL_ORG_PORT: u16 = 49152;

const ENGINE_HELP: &str = "Protocols:
  htp       the Hnefatafl Text Protocol of hnefatafl.org; a drop-in for the reference engine
            hnefatafl-text-protocol (same commands, replies and error texts)
  opentafl  the OpenTafl engine protocol; OpenTafl starts the engine from an .ini file
            (print one with --opentafl-ini)
  uci       a UCI-style protocol as TaflZero speaks it: uci, isready, position startpos|fen,
            go nodes|depth|movetime|wtime..|infinite, stop, quit

Player specs: builtin[:visits=N][,time=DUR][,guard=PLIES] (the trained net that ships with tafl; given a time,
by time= or by the clock, and no visits=, it searches until the time is up),
mcts:model=PATH[,visits=N][,time=DUR][,guard=PLIES] (a checkpoint or a run directory, whose best model is used), alphabeta[:depth=N][,time=1s][,nodes=N], random[:seed=N], htp:cmd=PROGRAM, uci:cmd=PROGRAM.

Examples:
  tafl engine --protocol htp --player mcts:model=data/runs/cpu,visits=400
  tafl engine --protocol htp --player alphabeta:depth=4
  tafl engine --protocol htp --player builtin:visits=800
  tafl engine --protocol uci --player alphabeta --move-time 2s
  tafl engine --protocol htp --listen 127.0.0.1:5000
  tafl engine --protocol htp --connect hnefatafl.org
  tafl engine --protocol opentafl --player alphabeta:time=2s --opentafl-ini > engines/tafl.ini
  echo 'generate_move' | tafl engine --protocol htp --player random:seed=1";

/// Arguments of `tafl engine`.
#[derive(Args)]
#[command(after_help = ENGINE_HELP)]
pub struct EngineArgs {
    /// The player to serve [default: builtin:time=1s, the shipped net at one second a move
    /// unless the protocol's clock says otherwise; alphabeta:time=1s for variants other than
    /// copenhagen].
    #[arg(long)]
    player: Option<String>,
    /// A level from 1 (random moves) to 10 (the shipped net at a second a move) instead of
    /// --player (docs/levels.md lists their players and measured strength).
    #[arg(long, conflicts_with = "player", value_parser = clap::value_parser!(u8).range(1..=10))]
    level: Option<u8>,
    /// htp, opentafl or uci.
    #[arg(long, default_value = "htp")]
    protocol: String,
    /// A preset or a variant TOML file: the game until the protocol chooses another.
    #[arg(long, default_value = "copenhagen")]
    variant: String,
    /// The longest a move may take when the protocol gives no clock (`2s`, `500ms`).
    #[arg(long)]
    move_time: Option<String>,
    /// Serve TCP connections on ADDR (e.g. 127.0.0.1:5000), one after another, instead of
    /// stdin/stdout.
    #[arg(long, conflicts_with = "connect")]
    listen: Option<String>,
    /// HTP only: play on a game server at HOST[:PORT] (default port 49152), like the reference
    /// engine's --host.
    #[arg(long)]
    connect: Option<String>,
    /// HTP only: accept defender moves that repeat an earlier board (the reference's
    /// --repeat-moves).
    #[arg(long)]
    repeat_moves: bool,
    /// Print the .ini file that makes OpenTafl start this engine, and exit.
    #[arg(long)]
    opentafl_ini: bool,
}

/// Builds a player from a spec for games of `variant`: `mcts:model=…` with a network (through
/// tafl-zero's factory), and every kind the arena knows.
pub fn build_player(spec: &str, variant: &'static Variant) -> Result<Box<dyn Player>, Failure> {
    let spec: PlayerSpec = spec.parse().map_err(bad_input)?;
    ZeroFactory::new(variant).build(&spec, 0).map_err(bad_input)
}

/// Runs `tafl engine`.
pub fn run(args: &EngineArgs) -> Result<u8, Failure> {
    let protocol: Protocol = args.protocol.parse().map_err(|e: String| bad_input(anyhow!(e)))?;
    if args.connect.is_some() && protocol != Protocol::Htp {
        return Err(bad_input(anyhow!("--connect is for --protocol htp")));
    }
    let variant = variant::load(&args.variant).map_err(bad_input)?;
    let level = crate::level_spec(args.level)?;
    let spec = level.as_deref().or(args.player.as_deref());
    let spec = spec.unwrap_or_else(|| tafl_players::builtin::default_player(variant.name()));
    if args.opentafl_ini {
        print!("{}", engine_ini(spec, &args.variant));
        return Ok(0);
    }
    let move_time = match &args.move_time {
        Some(t) => Some(
            parse_duration(t)
                .ok_or_else(|| bad_input(anyhow!("--move-time {t}: expected a duration such as 2s or 500ms")))?,
        ),
        None => None,
    };
    let options = EngineOptions { move_time };
    let htp_options =
        HtpServerOptions { engine: options, defender_repeats: args.repeat_moves, ..HtpServerOptions::default() };
    // Fail on a bad spec before any connection.
    let first = build_player(spec, variant)?;
    let failed = |e: io::Error| Failure { code: 1, error: anyhow!(e) };

    if let Some(host) = &args.connect {
        let address = if host.contains(':') { host.clone() } else { format!("{host}:{HNEFATAFL_ORG_PORT}") };
        let stream = TcpStream::connect(&address)
            .with_context(|| format!("connecting to {address}"))
            .map_err(|e| Failure { code: 1, error: e })?;
        eprintln!("connected to {address}");
        let mut reader = BufReader::new(stream.try_clone().map_err(failed)?);
        let mut writer = stream;
        let mut server = HtpServer::new(first, variant, htp_options);
        server.run_connected(&mut reader, &mut writer, &mut io::stderr()).map_err(failed)?;
        return Ok(0);
    }

    if let Some(addr) = &args.listen {
        let mut player = Some(first);
        let spec = spec.to_string();
        listen(addr.as_str(), |input, output| {
            // A fresh player for each connection (the first one is already built).
            let player = match player.take() {
                Some(p) => p,
                None => build_player(&spec, variant).map_err(|f| io::Error::other(f.error.to_string()))?,
            };
            serve(protocol, player, variant, options, &htp_options, input, output)
        })
        .map_err(failed)?;
        return Ok(0);
    }

    let stdin = io::stdin();
    let mut input = stdin.lock();
    let mut output = io::stdout();
    serve(protocol, first, variant, options, &htp_options, &mut input, &mut output).map_err(failed)?;
    output.flush().map_err(failed)?;
    Ok(0)
}

fn serve(
    protocol: Protocol,
    player: Box<dyn Player>,
    variant: &'static Variant,
    options: EngineOptions,
    htp_options: &HtpServerOptions,
    input: &mut dyn io::BufRead,
    output: &mut (dyn Write + Send),
) -> io::Result<()> {
    match protocol {
        Protocol::Htp => HtpServer::new(player, variant, htp_options.clone()).run(input, output),
        Protocol::OpenTafl => OpenTaflServer::new(player, variant, options).run(input, output),
        Protocol::Uci => UciServer::new(player, variant, options).run(input, output),
    }
}

/// Parses a `--time` style option.
pub fn duration_arg(name: &str, text: Option<&str>) -> Result<Option<Duration>, Failure> {
    text.map(|t| {
        parse_duration(t).ok_or_else(|| bad_input(anyhow!("--{name} {t}: expected a duration such as 2s or 500ms")))
    })
    .transpose()
}

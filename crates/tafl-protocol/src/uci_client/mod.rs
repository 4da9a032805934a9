//! The client side of the UCI-style protocol: run an external engine that speaks it (TaflZero,
//! or our own [`crate::uci::UciServer`]) as a child process and play it as a [`Player`].
//!
//! # The conversation
//! | client | engine |
//! |---|---|
//! | `uci` | `id name …`, `option …` in any order, `uciok` (TaflZero sends its `option` after `uciok`) |
//! | `isready` | `readyok` |
//! | `setoption name Variant value NAME` (only to an engine that offers a `Variant` option) | |
//! | `ucinewgame` (before the first move of each game) | |
//! | `position startpos moves a4a3 …` or `position fen FEN moves …`, then `isready` | `readyok` |
//! | `go movetime MS` and/or `go nodes N` | `info …` lines, then `bestmove a4a3` |
//! | `stop` (when [`Limits::stop`] is set during a `go`) | `bestmove …` |
//! | `quit` (when the player is dropped) | `bye` |
//!
//! The engine keeps no state we rely on: each move sends the whole game, as its start position
//! and the moves since. `startpos` is sent only when the engine's start position is surely the
//! game's: the game starts from its variant's start, and the variant is the one the engine is set
//! to (through its `Variant` option) or, for an engine without one (TaflZero), Copenhagen. Any
//! other game goes as `position fen`, whose FEN carries the board size.
//!
//! The `isready` after each `position` keeps us in step: whatever the engine still had to say
//! (a late `bestmove`, chatter) comes before its `readyok` and is skipped, and an
//! `info string error …` it answers the `position` with (our server's way to refuse one) fails
//! the move at once instead of letting it search another game.
//!
//! # Limits
//! `go movetime` comes from the caller's [`Limits::time`], else [`UciConfig::movetime`];
//! `go nodes` from [`Limits::nodes`] (or [`Limits::visits`]), else [`UciConfig::nodes`]; with
//! neither, a second a move ([`DEFAULT_MOVETIME`]). With both, both are sent, `movetime` first
//! (an engine that reads one limit only, as TaflZero does, then keeps to the time). The engine
//! must answer within [`UciConfig::move_timeout`]: by default the move time and
//! [`MOVE_TIMEOUT_MARGIN`], or [`NODES_MOVE_TIMEOUT`] for a `go nodes`.
//!
//! # What the engine's `info` becomes
//! The last `info` lines of a search (the first line of a MultiPV search only) give the
//! [`MoveChoice`]: `depth` (or the line's length when the engine gives no depth, as TaflZero's
//! MCTS), `nodes`, the `pv` as far as it is legal and starts with the move played, and the
//! value, from the side to move's view ([`Info::value`]):
//! * `score mate N`: +1 for N > 0 (the side to move mates), else -1;
//! * `winrate P%` (TaflZero's own win probability): 2P - 1;
//! * `score cp V`: TaflZero writes `V = 111.71 tan(1.5621 q)` (Leela Chess Zero's formula) for a
//!   value `q` in [-1, 1]; the client inverts it, `q = atan(V / 111.71) / 1.5621`. Other
//!   engines' scales differ (our server writes `1000 q`): the value keeps the score's sign and
//!   order, not its scale.
//!
//! # Who referees
//! Our [`tafl_rules::Game`] does: the `bestmove` must parse (`a4a3` or `a4-a3`) and be legal
//! in the game. An engine that dies, stays silent past its timeout, writes a line longer than
//! [`MAX_UCI_LINE`], answers a move that does not parse or is illegal, or has no move
//! (`bestmove (none)`, `bestmove 0000`) fails the move with [`PlayerError::Engine`] (the arena
//! forfeits its game). After a timeout or an over-long line the engine is killed and every
//! later move fails too.
//!
//! # Variants
//! An engine may announce the variants it plays as a `Variant` combo option (our server does):
//! a game of another variant fails at once with [`UciError::Unsupported`], and the engine is
//! switched with `setoption` to the game's variant when needed. An engine that announces
//! nothing (TaflZero plays Copenhagen 11x11 only) is sent the position as a FEN; when it cannot
//! take it, it refuses with `info string error …`, or plays a move we find illegal, or says
//! nothing and runs into its move timeout: an error each time, never a hang.

mod replies;

pub use replies::{Info, Reply, Score, UciOption, parse_reply};

use std::time::{Duration, Instant};

use tafl_rules::{Game, Move, Position, Variant, parse_move};
use tafl_search::{Limits, MAX_SEARCH_COUNT, MoveChoice, Player, PlayerError, Stop};

pub use crate::child::EngineError as UciError;
use crate::child::{self, EngineProcess};
use crate::engine::compact_move;

/// The move time when neither the caller nor the config gives a limit.
pub const DEFAULT_MOVETIME: Duration = Duration::from_secs(1);
/// How much longer than its move time an engine may take to answer before it forfeits.
pub const MOVE_TIMEOUT_MARGIN: Duration = Duration::from_secs(10);
/// How long an engine may search a `go nodes` (no time given) before it forfeits.
pub const NODES_MOVE_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest line the client takes from an engine, in bytes; a longer one is an error. UCI
/// lines are short (a principal variation of 200 plies is about a kilobyte); the line reader
/// never keeps more than [`crate::lines::MAX_LINE`] of any line.
pub const MAX_UCI_LINE: usize = 16 * 1024;
/// How often a waiting client looks at [`Limits::stop`].
const STOP_POLL: Duration = Duration::from_millis(20);

/// How to start an engine and how long to wait for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UciConfig {
    /// The program to run.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The move time when the caller's limits give none.
    pub movetime: Option<Duration>,
    /// The nodes a move when the caller's limits give none.
    pub nodes: Option<u64>,
    /// The longest the engine may take to answer a `go`; `None`: the module docs' default.
    pub move_timeout: Option<Duration>,
    /// The longest the engine may take over anything else (its start-up, `isready`).
    pub command_timeout: Duration,
    /// The name in tables and records; by default `uci:` and the command line.
    pub name: Option<String>,
}

impl UciConfig {
    /// A config from a command line split at whitespace (no quoting), with the default limits
    /// and 30 s for commands (an engine that loads a network on the GPU takes a while to start).
    pub fn from_command_line(command_line: &str) -> Result<UciConfig, UciError> {
        let (program, args) = child::split_command_line(command_line)
            .ok_or_else(|| UciError::Spawn { program: String::new(), message: "empty command line".into() })?;
        Ok(UciConfig {
            program,
            args,
            movetime: None,
            nodes: None,
            move_timeout: None,
            command_timeout: Duration::from_secs(30),
            name: None,
        })
    }

    fn display_name(&self) -> String {
        self.name.clone().unwrap_or_else(|| child::display_name("uci", &self.program, &self.args))
    }
}

/// What waiting for a line brought.
enum Wait {
    Line(Reply),
    /// A poll interval passed with nothing (the deadline not yet).
    Nothing,
}

/// A running engine: a child process and its output, read as replies.
struct UciEngine {
    process: EngineProcess,
}

impl UciEngine {
    fn spawn(config: &UciConfig) -> Result<UciEngine, UciError> {
        Ok(UciEngine { process: EngineProcess::spawn(&config.program, &config.args)? })
    }

    /// Writes one command.
    fn send(&mut self, command: &str) -> Result<(), UciError> {
        self.process.send(command)
    }

    /// Waits for the next line until `deadline` (`timeout` after `command` was sent), at most
    /// [`STOP_POLL`] at a time so that the caller can look at its stop flag.
    fn next(&mut self, command: &str, deadline: Instant, timeout: Duration) -> Result<Wait, UciError> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.process.recv(command, left.min(STOP_POLL))? {
            Some(line) if line.len() > MAX_UCI_LINE => {
                self.process.kill();
                Err(UciError::LineTooLong { command: command.to_string(), len: line.len(), max: MAX_UCI_LINE })
            }
            Some(line) => Ok(Wait::Line(parse_reply(&line))),
            None if left > STOP_POLL => Ok(Wait::Nothing),
            None => Err(self.process.timed_out(command, timeout)),
        }
    }
}

/// What one `go` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Go {
    movetime: Option<Duration>,
    nodes: Option<u64>,
}

impl Go {
    /// The caller's limits, else the config's, else [`DEFAULT_MOVETIME`].
    fn new(config: &UciConfig, limits: &Limits) -> Go {
        let movetime = limits.time.or(config.movetime);
        // Our server refuses more than MAX_SEARCH_COUNT nodes; no search needs more.
        let nodes = limits.nodes.or(limits.visits).or(config.nodes).map(|n| n.clamp(1, MAX_SEARCH_COUNT));
        if movetime.is_none() && nodes.is_none() {
            return Go { movetime: Some(DEFAULT_MOVETIME), nodes: None };
        }
        Go { movetime, nodes }
    }

    fn command(self) -> String {
        let mut command = "go".to_string();
        if let Some(t) = self.movetime {
            // TaflZero refuses `movetime 0`.
            command.push_str(&format!(" movetime {}", t.as_millis().max(1)));
        }
        if let Some(n) = self.nodes {
            command.push_str(&format!(" nodes {n}"));
        }
        command
    }

    fn timeout(self, config: &UciConfig) -> Duration {
        config.move_timeout.unwrap_or_else(|| self.movetime.map_or(NODES_MOVE_TIMEOUT, |t| t + MOVE_TIMEOUT_MARGIN))
    }
}

/// The `position` command for `game`: `startpos` when the game starts from its variant's
/// start and the engine's start position is that (`startpos_is_ours`), else the start's FEN;
/// then the moves, written `a4a3`.
#[must_use]
pub fn position_command(game: &Game, startpos_is_ours: bool) -> String {
    let mut command = if startpos_is_ours && *game.start() == Position::start(game.variant()) {
        "position startpos".to_string()
    } else {
        format!("position fen {}", game.start().to_fen())
    };
    if !game.moves().is_empty() {
        command.push_str(" moves");
        for m in game.moves() {
            command.push(' ');
            command.push_str(&compact_move(*m));
        }
    }
    command
}

/// An external engine over the UCI-style protocol as a [`Player`].
pub struct UciPlayer {
    config: UciConfig,
    engine: UciEngine,
    /// The engine's `id name`.
    engine_name: Option<String>,
    /// The variants the engine offers in its `Variant` option, if it has one.
    variants: Option<Vec<String>>,
    /// The variant the engine is set to (its option's default, then what we set).
    engine_variant: Option<String>,
    /// `ucinewgame` is due before the next move.
    new_game: bool,
}

impl UciPlayer {
    /// Starts the engine and waits for its `uciok` and `readyok`, so that a wrong command line
    /// fails here rather than forfeiting every game.
    pub fn spawn(config: UciConfig) -> Result<UciPlayer, UciError> {
        let engine = UciEngine::spawn(&config)?;
        let mut player =
            UciPlayer { config, engine, engine_name: None, variants: None, engine_variant: None, new_game: true };
        player.handshake()?;
        Ok(player)
    }

    /// The engine's own name (`id name`), if it gave one.
    #[must_use]
    pub fn engine_name(&self) -> Option<&str> {
        self.engine_name.as_deref()
    }

    fn handshake(&mut self) -> Result<(), UciError> {
        self.engine.send("uci")?;
        let timeout = self.config.command_timeout;
        let deadline = Instant::now() + timeout;
        loop {
            match self.engine.next("uci", deadline, timeout)? {
                Wait::Line(Reply::UciOk) => break,
                Wait::Line(reply) => self.note(reply),
                Wait::Nothing => {}
            }
        }
        self.sync("uci")
    }

    /// Keeps what the engine says about itself, whenever it says it.
    fn note(&mut self, reply: Reply) {
        match reply {
            Reply::Id { key, value } if key == "name" => self.engine_name = Some(value),
            Reply::Option(option) if option.name.eq_ignore_ascii_case("variant") => {
                self.engine_variant = option.default.clone();
                self.variants = Some(option.vars);
            }
            _ => {}
        }
    }

    /// `isready` and its `readyok`, skipping what comes before; an `info string error…` among
    /// it means the engine refused `after` (the command before).
    fn sync(&mut self, after: &str) -> Result<(), UciError> {
        self.engine.send("isready")?;
        let timeout = self.config.command_timeout;
        let deadline = Instant::now() + timeout;
        let mut refusal = None;
        loop {
            match self.engine.next("isready", deadline, timeout)? {
                Wait::Line(Reply::ReadyOk) => break,
                Wait::Line(Reply::Info(info)) => refusal = info.error().map(str::to_string).or(refusal),
                Wait::Line(reply) => self.note(reply),
                Wait::Nothing => {}
            }
        }
        match refusal {
            Some(message) => Err(UciError::Refused { command: after.to_string(), message }),
            None => Ok(()),
        }
    }

    /// Sets the engine to `variant` if it offers variants (or fails when it lacks this one);
    /// says whether its `startpos` is this variant's start.
    fn set_variant(&mut self, variant: &'static Variant) -> Result<bool, UciError> {
        let Some(variants) = &self.variants else {
            return Ok(std::ptr::eq(variant, Variant::copenhagen()));
        };
        let name = variant.name();
        if !variants.iter().any(|v| v == name) {
            return Err(UciError::Unsupported(format!("the engine plays {}, not {name}", variants.join(", "))));
        }
        if self.engine_variant.as_deref() != Some(name) {
            self.engine.send(&format!("setoption name Variant value {name}"))?;
            self.engine_variant = Some(name.to_string());
        }
        Ok(true)
    }

    /// Chooses a move, with the protocol error on failure.
    pub fn search(&mut self, game: &Game, limits: &Limits) -> Result<MoveChoice, UciError> {
        let startpos_is_ours = self.set_variant(game.variant())?;
        if self.new_game {
            self.engine.send("ucinewgame")?;
            self.new_game = false;
        }
        self.engine.send(&position_command(game, startpos_is_ours))?;
        self.sync("position")?;
        let go = Go::new(&self.config, limits);
        let command = go.command();
        self.engine.send(&command)?;
        let (text, info) = self.await_bestmove(&command, go.timeout(&self.config), &limits.stop)?;
        let mv = read_bestmove(&text, game).map_err(|e| match e {
            Unplayable::None => UciError::NoMove {
                reply: text.clone(),
                said: info.string.as_ref().map(|s| format!("; it said: {s}")).unwrap_or_default(),
            },
            Unplayable::Garbage(why) => {
                UciError::Garbage { command: command.clone(), reply: format!("bestmove {text}"), why }
            }
            Unplayable::Illegal(why) => UciError::IllegalMove { mv: text.clone(), why },
        })?;
        Ok(choice(game, mv, &info))
    }

    /// Reads `info` lines until `bestmove`; sends `stop` once `stop` is set.
    fn await_bestmove(&mut self, command: &str, timeout: Duration, stop: &Stop) -> Result<(String, Info), UciError> {
        let deadline = Instant::now() + timeout;
        let mut info = Info::default();
        let mut stopped = false;
        loop {
            if !stopped && stop.is_set() {
                self.engine.send("stop")?;
                stopped = true;
            }
            match self.engine.next(command, deadline, timeout)? {
                Wait::Line(Reply::BestMove(text)) => return Ok((text, info)),
                // Only the best line of a MultiPV search.
                Wait::Line(Reply::Info(line)) if line.multipv.is_none_or(|k| k == 1) => info.update(line),
                Wait::Line(_) | Wait::Nothing => {}
            }
        }
    }
}

/// Why a `bestmove` cannot be played.
#[derive(Debug)]
enum Unplayable {
    /// `(none)`, `0000` or nothing.
    None,
    Garbage(String),
    Illegal(String),
}

/// The move of a `bestmove`, parsed and checked against the game.
fn read_bestmove(text: &str, game: &Game) -> Result<Move, Unplayable> {
    if matches!(text, "" | "(none)" | "0000") {
        return Err(Unplayable::None);
    }
    let mv = parse_move(text, game.variant().size()).map_err(|e| Unplayable::Garbage(e.to_string()))?.mv;
    game.position().check_move(mv).map_err(|e| Unplayable::Illegal(e.to_string()))?;
    Ok(mv)
}

/// The move and what the engine's last `info` said about it.
fn choice(game: &Game, mv: Move, info: &Info) -> MoveChoice {
    let pv = legal_line(game.position(), game.variant().size(), &info.pv);
    let pv_known = pv.first() == Some(&mv);
    let depth = info.depth.unwrap_or(if pv_known { u32::try_from(pv.len()).unwrap_or(u32::MAX) } else { 0 });
    MoveChoice {
        mv,
        value: info.value(),
        pv: if pv_known { pv } else { vec![mv] },
        depth,
        nodes: info.nodes.unwrap_or(0),
        lines: Vec::new(),
    }
}

/// The longest legal start of a line of move texts from `position`.
fn legal_line(position: &Position, size: u8, texts: &[String]) -> Vec<Move> {
    let mut position = *position;
    let mut line = Vec::new();
    for text in texts {
        let Ok(parsed) = parse_move(text, size) else { break };
        if position.play(parsed.mv).is_err() {
            break;
        }
        line.push(parsed.mv);
    }
    line
}

impl Player for UciPlayer {
    fn name(&self) -> String {
        self.config.display_name()
    }

    fn choose(&mut self, game: &Game, limits: &Limits) -> Result<MoveChoice, PlayerError> {
        if game.outcome().is_over() {
            return Err(PlayerError::NoMoves);
        }
        self.search(game, limits).map_err(|e| PlayerError::Engine(e.to_string()))
    }

    fn new_game(&mut self) {
        self.new_game = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(movetime: Option<u64>, nodes: Option<u64>) -> UciConfig {
        UciConfig {
            movetime: movetime.map(Duration::from_millis),
            nodes,
            ..UciConfig::from_command_line("engine").unwrap()
        }
    }

    #[test]
    fn go_takes_the_callers_limits_then_the_configs() {
        let ms = Duration::from_millis;
        let limits = |time: Option<u64>, nodes: Option<u64>| Limits { time: time.map(ms), nodes, ..Limits::default() };
        let go = |c: &UciConfig, l: &Limits| Go::new(c, l).command();
        assert_eq!(go(&config(None, None), &Limits::default()), "go movetime 1000");
        assert_eq!(go(&config(Some(300), None), &Limits::default()), "go movetime 300");
        assert_eq!(go(&config(Some(300), None), &limits(Some(50), None)), "go movetime 50");
        assert_eq!(go(&config(None, Some(400)), &Limits::default()), "go nodes 400");
        assert_eq!(go(&config(Some(300), Some(400)), &limits(None, Some(7))), "go movetime 300 nodes 7");
        assert_eq!(
            go(&config(None, None), &Limits { visits: Some(1 << 40), ..Limits::default() }),
            format!("go nodes {MAX_SEARCH_COUNT}")
        );
        assert_eq!(go(&config(None, None), &limits(Some(0), None)), "go movetime 1");
        // The move timeout: movetime and a margin, a minute for nodes, or the config's.
        assert_eq!(
            Go::new(&config(Some(300), None), &Limits::default()).timeout(&config(None, None)),
            ms(300) + MOVE_TIMEOUT_MARGIN
        );
        assert_eq!(
            Go::new(&config(None, Some(9)), &Limits::default()).timeout(&config(None, None)),
            NODES_MOVE_TIMEOUT
        );
        let fixed = UciConfig { move_timeout: Some(ms(5)), ..config(None, None) };
        assert_eq!(Go::new(&fixed, &Limits::default()).timeout(&fixed), ms(5));
    }

    #[test]
    fn positions_are_startpos_or_fen_with_moves() {
        let mut game = Game::new(Variant::copenhagen());
        assert_eq!(position_command(&game, true), "position startpos");
        game.play(parse_move("d1-d4", 11).unwrap().mv).unwrap();
        game.play(parse_move("f4f3", 11).unwrap().mv).unwrap();
        assert_eq!(position_command(&game, true), "position startpos moves d1d4 f4f3");
        let fen = Position::start(Variant::copenhagen()).to_fen();
        assert_eq!(position_command(&game, false), format!("position fen {fen} moves d1d4 f4f3"));
        let later = Game::from_position(*game.position());
        assert_eq!(position_command(&later, true), format!("position fen {}", game.position().to_fen()));
    }

    #[test]
    fn best_moves_are_refereed() {
        let game = Game::new(Variant::copenhagen());
        assert_eq!(read_bestmove("d1d4", &game).unwrap().to_string(), "d1-d4");
        assert!(read_bestmove("D1-D4", &game).is_ok());
        assert!(matches!(read_bestmove("(none)", &game), Err(Unplayable::None)));
        assert!(matches!(read_bestmove("0000", &game), Err(Unplayable::None)));
        assert!(matches!(read_bestmove("hello", &game), Err(Unplayable::Garbage(_))));
        assert!(matches!(read_bestmove("a1a2", &game), Err(Unplayable::Illegal(_))));
    }

    #[test]
    fn the_choice_keeps_a_legal_line_that_starts_with_the_move() {
        let game = Game::new(Variant::copenhagen());
        let mv = parse_move("d1d4", 11).unwrap().mv;
        let Reply::Info(info) = parse_reply("info score cp 0 nodes 9 pv d1d4 f4f3 a1a2 d4d5") else { panic!() };
        let c = choice(&game, mv, &info);
        assert_eq!(c.pv.iter().map(ToString::to_string).collect::<Vec<_>>(), ["d1-d4", "f4-f3"]);
        assert_eq!((c.depth, c.nodes, c.value), (2, 9, Some(0.0)));
        // A line for another move is not this move's.
        let Reply::Info(info) = parse_reply("info depth 4 pv h1h3") else { panic!() };
        let c = choice(&game, mv, &info);
        assert_eq!((c.pv, c.depth, c.value), (vec![mv], 4, None));
    }

    #[test]
    fn a_missing_program_fails_to_spawn() {
        let c = UciConfig::from_command_line("/nonexistent/tafl-uci-engine").unwrap();
        assert!(matches!(UciPlayer::spawn(c), Err(UciError::Spawn { .. })));
        assert!(UciConfig::from_command_line(" ").is_err());
        assert_eq!(config(None, None).display_name(), "uci:engine");
    }
}

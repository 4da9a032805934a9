//! The client side of HTP: run an external engine as a child process and play it as a
//! [`Player`].
//!
//! # Keeping the engine in step
//! The engine keeps its own board. Before each `generate_move` the client sends `play` for
//! every move of the game the engine has not seen yet; when the game is not a continuation of
//! what the engine saw (a new game, a take-back), it resets the engine with `board_size N` and
//! replays the game from the start. `generate_move` plays the engine's move on its own board,
//! so that move counts as seen.
//!
//! # Who referees
//! Our [`tafl_rules::Game`] decides legality and outcomes; the engine's own rules only matter
//! when they make it refuse to follow the game. The reference engine (`hnefatafl-text-protocol`)
//! forbids the defenders to repeat *any* earlier board, where Copenhagen rules (ours) only make
//! the defenders lose on the third occurrence. So:
//! * the engine, as defenders, never repeats (stricter than needed, and legal for us);
//! * when *our* side repeats a board as defenders, the engine refuses the `play` and cannot
//!   go on: [`HtpPlayer::choose`] fails with [`HtpError::Refused`] and the arena scores the
//!   game as a loss for the engine (the engine could not follow a legal game). Start the
//!   reference engine with `--repeat-moves` to make it accept such moves; then it also stops
//!   avoiding repetitions itself, and our third-occurrence rule applies to it.
//!
//! The same holds when the engine thinks the game is over and ours does not (its exit fort
//! or encirclement test differs): it refuses to move and forfeits.
//!
//! Only games from the variant's start position can be played (HTP has no command to set up a
//! position); openings made of moves from the start work, FEN openings do not.
//!
//! # Engines that connect to a server ([`HtpConfig::tcp`])
//! The reference engine chooses its search depth only in its `--host ADDR` mode, where it
//! connects to `ADDR:49152` as the AI clients of hnefatafl.org do: it reads every command from
//! the socket, answers `generate_move` there (the move alone, without `= `), `play` not at all,
//! and other commands with `= …` on its standard output. It plays one game and exits. With
//! `tcp`, the client listens on a free loopback address (127.0.0.2, .3, …) at port 49152, passes
//! `--host ADDR` to the engine, and starts a fresh engine for every game.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use tafl_rules::{Game, Move, Position, Side, parse_move, parse_square};
use tafl_search::{Limits, MoveChoice, Player, PlayerError};

use super::{parse_role, role_name, square_name};
pub use crate::child::EngineError as HtpError;
use crate::child::{self, EngineProcess, line_reader};
pub use crate::lines::{CappedLines, MAX_LINE};

/// How to start an engine and how long to wait for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HtpConfig {
    /// The program to run.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The longest the engine may think about one move.
    pub move_timeout: Duration,
    /// The longest any other command may take.
    pub command_timeout: Duration,
    /// The name in tables and records; by default `htp:` and the command line.
    pub name: Option<String>,
    /// The engine connects to us (the reference's `--host` mode; see the module docs).
    pub tcp: bool,
}

impl HtpConfig {
    /// A config from a command line split at whitespace (no quoting), with default timeouts
    /// (60 s a move, 10 s for other commands).
    pub fn from_command_line(command_line: &str) -> Result<HtpConfig, HtpError> {
        let (program, args) = child::split_command_line(command_line)
            .ok_or_else(|| HtpError::Spawn { program: String::new(), message: "empty command line".into() })?;
        Ok(HtpConfig {
            program,
            args,
            move_timeout: Duration::from_secs(60),
            command_timeout: Duration::from_secs(10),
            name: None,
            tcp: false,
        })
    }

    fn display_name(&self) -> String {
        self.name.clone().unwrap_or_else(|| child::display_name("htp", &self.program, &self.args))
    }
}

/// A running HTP engine: a child process and its answers, line by line.
pub struct HtpEngine {
    process: EngineProcess,
    /// In [`HtpConfig::tcp`] mode: the connection and its lines.
    socket: Option<(TcpStream, Receiver<String>)>,
}

impl HtpEngine {
    /// Starts the engine.
    pub fn spawn(config: &HtpConfig) -> Result<HtpEngine, HtpError> {
        let spawn_error =
            |e: std::io::Error| HtpError::Spawn { program: config.program.clone(), message: e.to_string() };
        let mut args = config.args.clone();
        let listener = if config.tcp {
            let (listener, host) = listen_on_loopback().map_err(spawn_error)?;
            args.extend(["--host".to_string(), host]);
            Some(listener)
        } else {
            None
        };
        let mut engine = HtpEngine { process: EngineProcess::spawn(&config.program, &args)?, socket: None };
        if let Some(listener) = listener {
            let stream = engine.accept(&listener, config.command_timeout)?;
            let reader = stream.try_clone().map_err(spawn_error)?;
            engine.socket = Some((stream, line_reader(reader)));
        }
        Ok(engine)
    }

    /// Waits for the engine to connect.
    fn accept(&mut self, listener: &TcpListener, timeout: Duration) -> Result<TcpStream, HtpError> {
        let deadline = Instant::now() + timeout;
        let program = self.process.program().to_string();
        let failed =
            |e: std::io::Error| HtpError::Spawn { program: program.clone(), message: format!("no connection: {e}") };
        listener.set_nonblocking(true).map_err(failed)?;
        loop {
            match listener.accept() {
                Ok((stream, _)) => {
                    stream.set_nonblocking(false).map_err(failed)?;
                    return Ok(stream);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(failed(e)),
            }
            if self.process.has_exited() {
                return Err(self.process.died("connect"));
            }
            if Instant::now() >= deadline {
                return Err(self.process.timed_out("connect", timeout));
            }
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// Sends one command and waits up to `timeout` for its answer; returns the text after `= `.
    /// Lines that start with neither `=` nor `?` are skipped. After a timeout or a death the
    /// engine is unusable and every later command fails.
    pub fn send(&mut self, command: &str, timeout: Duration) -> Result<String, HtpError> {
        let verb = command.split_whitespace().next().unwrap_or_default();
        self.process.alive(command)?;
        match &mut self.socket {
            Some((stream, _)) => {
                if writeln!(stream, "{command}").and_then(|()| stream.flush()).is_err() {
                    return Err(self.process.died(command));
                }
            }
            None => self.process.send(command)?,
        }
        let deadline = Instant::now() + timeout;
        if self.socket.is_some() && verb == "play" {
            // No answer comes; a refused move makes the engine exit, which the next command sees.
            return Ok(String::new());
        }
        let from_socket = self.socket.is_some() && verb == "generate_move";
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let received = match &self.socket {
                Some((_, socket_lines)) if from_socket => match socket_lines.recv_timeout(left) {
                    Ok(line) => return Ok(line.trim().to_string()),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => return Err(self.process.died(command)),
                },
                _ => self.process.recv(command, left)?,
            };
            let Some(line) = received else {
                return Err(self.process.timed_out(command, timeout));
            };
            let line = line.trim_end();
            if let Some(rest) = line.strip_prefix('=') {
                return Ok(rest.trim().to_string());
            }
            if let Some(rest) = line.strip_prefix('?') {
                return Err(HtpError::Refused { command: command.to_string(), message: rest.trim().to_string() });
            }
        }
    }
}

/// The port the reference engine appends to `--host`.
pub const DRIVER_PORT: u16 = 49152;

/// Binds the first free loopback address (127.0.0.2 and up) at [`DRIVER_PORT`]: one per engine,
/// so that games can run side by side.
fn listen_on_loopback() -> std::io::Result<(TcpListener, String)> {
    let mut last = std::io::Error::other("no loopback address free");
    for host in 2..=254u8 {
        let ip = std::net::Ipv4Addr::new(127, 0, 0, host);
        match TcpListener::bind((ip, DRIVER_PORT)) {
            Ok(listener) => return Ok((listener, ip.to_string())),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// An external engine over HTP as a [`Player`]. Limits other than the move timeout are the
/// engine's business (pass them on its command line).
pub struct HtpPlayer {
    config: HtpConfig,
    engine: HtpEngine,
    /// The moves the engine has on its board, from the start position.
    seen: Vec<Move>,
    /// The engine's board may not be at the start (after `new_game`).
    needs_reset: bool,
    /// The engine has not been asked for a move yet (a [`HtpConfig::tcp`] engine then need not
    /// be replaced for a new game).
    fresh: bool,
}

impl HtpPlayer {
    /// Starts the engine and checks that it answers (`name`; a refusal counts as an answer),
    /// so that a wrong command line fails here rather than forfeiting every game.
    pub fn spawn(config: HtpConfig) -> Result<HtpPlayer, HtpError> {
        let mut engine = HtpEngine::spawn(&config)?;
        match engine.send("name", config.command_timeout) {
            Ok(_) | Err(HtpError::Refused { .. }) => {}
            Err(e) => return Err(HtpError::Spawn { program: config.program.clone(), message: e.to_string() }),
        }
        Ok(HtpPlayer { config, engine, seen: Vec::new(), needs_reset: true, fresh: true })
    }

    /// Chooses a move, with the protocol error on failure.
    pub fn generate(&mut self, game: &Game) -> Result<Move, HtpError> {
        let variant = game.variant();
        if *game.start() != Position::start(variant) {
            return Err(HtpError::Unsupported(
                "HTP engines can only play games from the variant's start position".into(),
            ));
        }
        let size = variant.size();
        let moves = game.moves();
        let first = game.start().side_to_move();
        let side_at = |ply: usize| if ply.is_multiple_of(2) { first } else { first.opponent() };
        if self.needs_reset || !moves.starts_with(&self.seen) {
            if self.config.tcp && !self.fresh {
                // Such an engine plays one game and exits: a fresh one for each game.
                self.engine = HtpEngine::spawn(&self.config)?;
            }
            self.fresh = false;
            self.engine.send(&format!("board_size {size}"), self.config.command_timeout)?;
            if first == Side::Defenders {
                self.engine.send("first_move defender", self.config.command_timeout)?;
            }
            self.seen.clear();
            self.needs_reset = false;
        }
        for (ply, m) in moves.iter().enumerate().skip(self.seen.len()) {
            let command =
                format!("play {} {} {}", role_name(side_at(ply)), square_name(m.from, size), square_name(m.to, size));
            self.engine.send(&command, self.config.command_timeout)?;
            self.seen.push(*m);
        }
        let side = game.position().side_to_move();
        let command = format!("generate_move {}", role_name(side));
        let reply = self.engine.send(&command, self.config.move_timeout)?;
        // The engine played its move on its own board, whatever we think of it: a new request
        // would have to reset it.
        self.needs_reset = true;
        let mv = parse_generated(&reply, side, size).map_err(|why| match why {
            Parsed::Resigned => HtpError::Resigned,
            Parsed::Garbage(why) => HtpError::Garbage { command: command.clone(), reply: reply.clone(), why },
        })?;
        if let Err(e) = game.position().check_move(mv) {
            return Err(HtpError::IllegalMove { mv: mv.to_string(), why: e.to_string() });
        }
        self.seen.push(mv);
        self.needs_reset = false;
        Ok(mv)
    }
}

enum Parsed {
    Resigned,
    Garbage(String),
}

/// A `generate_move` answer read the way the client reads it: the move, `None` for a
/// resignation, or why it is not a move. The move is on the board but not checked for legality
/// (the client does that against its game).
///
/// # Errors
/// The answer is not a move for `side` on a `size` board.
pub fn read_generated(reply: &str, side: Side, size: u8) -> Result<Option<Move>, String> {
    match parse_generated(reply, side, size) {
        Ok(mv) => Ok(Some(mv)),
        Err(Parsed::Resigned) => Ok(None),
        Err(Parsed::Garbage(why)) => Err(why),
    }
}

/// Parses a `generate_move` answer: `play ROLE FROM TO` with anything after a comma ignored,
/// or just `FROM TO` or `FROM-TO`.
fn parse_generated(reply: &str, side: Side, size: u8) -> Result<Move, Parsed> {
    let head = reply.split(',').next().unwrap_or_default();
    let mut words: Vec<&str> = head.split_whitespace().collect();
    if words.first() == Some(&"play") {
        let role = words.get(1).ok_or_else(|| Parsed::Garbage("no role".into()))?;
        let role = parse_role(role).ok_or_else(|| Parsed::Garbage(format!("unknown role `{role}`")))?;
        if role != side {
            return Err(Parsed::Garbage(format!("a move for the {role}, but the {side} are to move")));
        }
        if words.get(2).is_some_and(|w| w.starts_with("resign")) {
            return Err(Parsed::Resigned);
        }
        words.drain(..2);
    }
    match words.as_slice() {
        [from, to] => {
            let from = parse_square(from, size).map_err(|e| Parsed::Garbage(format!("bad square `{from}`: {e}")))?;
            let to = parse_square(to, size).map_err(|e| Parsed::Garbage(format!("bad square `{to}`: {e}")))?;
            Ok(Move::new(from, to))
        }
        [one] => parse_move(one, size).map(|m| m.mv).map_err(|e| Parsed::Garbage(format!("bad move `{one}`: {e}"))),
        _ => Err(Parsed::Garbage("expected `play ROLE FROM TO`".into())),
    }
}

impl Player for HtpPlayer {
    fn name(&self) -> String {
        self.config.display_name()
    }

    fn choose(&mut self, game: &Game, _limits: &Limits) -> Result<MoveChoice, PlayerError> {
        if game.outcome().is_over() {
            return Err(PlayerError::NoMoves);
        }
        self.generate(game).map(MoveChoice::just).map_err(|e| match e {
            HtpError::Resigned => PlayerError::Resigned,
            e => PlayerError::Engine(e.to_string()),
        })
    }

    fn new_game(&mut self) {
        self.needs_reset = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_generated_answers_for_callers() {
        assert_eq!(
            read_generated("= play attacker d1 d4".trim_start_matches("= "), Side::Attackers, 11)
                .map(|m| m.map(|m| m.to_string())),
            Ok(Some("d1-d4".into()))
        );
        assert_eq!(read_generated("play defender resigns _", Side::Defenders, 11), Ok(None));
        assert!(read_generated("play attacker l1 d4", Side::Attackers, 11).is_err());
    }

    #[test]
    fn parses_generated_moves() {
        let m =
            parse_generated("play attacker d1 d4, score: 0.5, delay milliseconds: 3, loops: 0", Side::Attackers, 11);
        assert_eq!(m.ok().map(|m| m.to_string()), Some("d1-d4".to_string()));
        assert!(matches!(parse_generated("play defender resigns _", Side::Defenders, 11), Err(Parsed::Resigned)));
        assert!(matches!(parse_generated("play defender d1 d4", Side::Attackers, 11), Err(Parsed::Garbage(_))));
        assert!(matches!(parse_generated("hello", Side::Attackers, 11), Err(Parsed::Garbage(_))));
        assert!(matches!(parse_generated("play attacker z1 d4", Side::Attackers, 11), Err(Parsed::Garbage(_))));
        assert_eq!(
            parse_generated("D1-D4", Side::Attackers, 11).ok().map(|m| m.to_string()),
            Some("d1-d4".to_string())
        );
    }

    #[test]
    fn config_splits_the_command_line() {
        let c = HtpConfig::from_command_line("engine --depth 2").unwrap();
        assert_eq!(c.program, "engine");
        assert_eq!(c.args, vec!["--depth", "2"]);
        assert_eq!(c.display_name(), "htp:engine --depth 2");
        assert!(HtpConfig::from_command_line("  ").is_err());
    }

    #[test]
    fn a_missing_program_fails_to_spawn() {
        let c = HtpConfig::from_command_line("/nonexistent/tafl-engine").unwrap();
        assert!(matches!(HtpPlayer::spawn(c), Err(HtpError::Spawn { .. })));
    }
}

//! The client: logs in, offers, accepts and joins games, plays them with one player per game
//! in its own thread, keeps the clocks, reconnects, and stops as asked.
//!
//! One thread reads the socket and turns lines into events; one thread per game runs the
//! player's searches; the loop here owns all state and is the only writer to the socket.
//!
//! The state and the loop are here; the rest is split by job, each an `impl Client` of its
//! own: `connection` (socket, login, reader thread, writes), `games` (offers, joins,
//! resumes, the server's lines), `play` (the workers that think, the moves both ways) and
//! `records` (finished games).

mod connection;
mod games;
mod play;
mod records;

use std::collections::{HashMap, HashSet, VecDeque};
use std::io::Write;
use std::net::Shutdown;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tafl_rules::Side;
use tafl_search::{Limits, MoveChoice, Player, PlayerError};

use crate::clock::{Budget, ClockPolicy};
use crate::protocol::{self, GameId, MAX_LINE, ServerLine, TimeControl};
use crate::referee::Refereed;
use connection::{ConnectError, Connection, backoff};
use play::Job;

/// What to do with games in progress when asked to stop (Ctrl-C).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnStop {
    /// Play them to the end, start no new ones.
    Finish,
    /// Resign them at once.
    Resign,
}

/// Builds a fresh player for a game on a board of the given size.
pub type MakePlayer = Box<dyn FnMut(u8) -> Result<Box<dyn Player>, String> + Send>;

/// Everything `tafl online` was told.
#[derive(Clone, Debug)]
pub struct Options {
    /// `host:port`.
    pub address: String,
    /// Account name.
    pub username: String,
    /// Account password (no spaces).
    pub password: String,
    /// Create the account when it does not exist.
    pub create_account: bool,
    /// The protocol version sent at login.
    pub version: String,
    /// Sides of the games to offer, used in turn; empty: offer none.
    pub create: Vec<Side>,
    /// Offer rated games.
    pub rated: bool,
    /// The clock of offered games.
    pub time: TimeControl,
    /// Board size of offered games.
    pub size: u8,
    /// Games to join (offers of others).
    pub join: Vec<GameId>,
    /// Stop after this many games have ended; `None`: play on.
    pub games: Option<usize>,
    /// Games at once (offers waiting count too).
    pub concurrent: usize,
    /// What Ctrl-C does.
    pub on_stop: OnStop,
    /// The player's own limits (depth, visits, time); the clock may cut the time.
    pub limits: Limits,
    /// Time per move in untimed games when the player has no time limit.
    pub untimed_move_time: Duration,
    /// The clock policy.
    pub clock: ClockPolicy,
    /// Where game records go (`game-ID.csv`, archive format).
    pub records: Option<PathBuf>,
    /// Give up after this many failed connection attempts in a row; `None`: never.
    pub max_retries: Option<u32>,
    /// Longest wait between connection attempts.
    pub max_backoff: Duration,
}

impl Options {
    /// Options with defaults that fit hnefatafl.org: rated 15m+10s games on 11x11.
    #[must_use]
    pub fn new(address: &str, username: &str, password: &str) -> Options {
        Options {
            address: address.to_string(),
            username: username.to_string(),
            password: password.to_string(),
            create_account: false,
            version: protocol::VERSION_ID.to_string(),
            create: Vec::new(),
            rated: true,
            time: TimeControl::Fischer { main_ms: 900_000, increment_ms: 10_000 },
            size: 11,
            join: Vec::new(),
            games: None,
            concurrent: 1,
            on_stop: OnStop::Finish,
            limits: Limits::default(),
            untimed_move_time: Duration::from_secs(5),
            clock: ClockPolicy::default(),
            records: None,
            max_retries: None,
            max_backoff: Duration::from_secs(60),
        }
    }
}

/// Why the client gave up.
#[derive(Debug, thiserror::Error)]
pub enum OnlineError {
    /// The server refused the login for a reason retrying cannot fix.
    #[error("login refused: {0}")]
    Login(String),
    /// No connection after the allowed attempts.
    #[error("cannot reach {address}: {error}")]
    Connect {
        /// Where.
        address: String,
        /// The last error.
        error: String,
    },
    /// A bad option.
    #[error("{0}")]
    Options(String),
}

/// How a game ended for us.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameSummary {
    /// The server's id.
    pub id: GameId,
    /// Our side.
    pub side: Side,
    /// The opponent's account.
    pub opponent: String,
    /// The winner; `None` for a draw.
    pub winner: Option<Side>,
    /// Plies played.
    pub plies: usize,
    /// Where the record was written.
    pub record: Option<PathBuf>,
    /// Disagreements between the server and our rules.
    pub notes: Vec<String>,
    /// Our smallest clock reading before a move, in milliseconds (timed games).
    pub lowest_clock_ms: Option<i64>,
}

/// The log: one line per event, with the UTC time.
pub struct Log(Mutex<Box<dyn Write + Send>>);

impl Log {
    /// A log into `out`.
    #[must_use]
    pub fn new(out: Box<dyn Write + Send>) -> Log {
        Log(Mutex::new(out))
    }

    /// Writes one line.
    pub fn line(&self, text: &str) {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let secs = now.as_secs() % 86_400;
        let mut out = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = writeln!(
            out,
            "{:02}:{:02}:{:02}.{:03} {text}",
            secs / 3600,
            secs / 60 % 60,
            secs % 60,
            now.subsec_millis()
        );
        let _ = out.flush();
    }
}

enum Event {
    Line(u64, ServerLine),
    TooLong(u64, usize),
    Closed(u64, String),
    Chose { game: GameId, ply: usize, result: Result<MoveChoice, PlayerError>, took: Duration, budget: Option<Budget> },
}

/// A game in progress.
struct Active {
    side: Side,
    opponent: String,
    size: u8,
    rated: bool,
    time: TimeControl,
    referee: Refereed,
    /// Our state matches the server's (false after a reconnect until resumed).
    synced: bool,
    resume_asked: Option<Instant>,
    resume_tries: u32,
    /// A search for this ply is running.
    thinking: Option<usize>,
    /// When our clock (as last reported) started running, and its reading then.
    our_ms: i64,
    their_ms: i64,
    turn_started: Instant,
    lowest_ms: Option<i64>,
    resigned: bool,
    jobs: Option<Sender<Job>>,
}

/// The client's state.
pub struct Client {
    options: Options,
    make_player: MakePlayer,
    log: Arc<Log>,
    stop: Arc<AtomicBool>,
    events: Sender<Event>,
    inbox: Receiver<Event>,
    generation: u64,
    active: HashMap<GameId, Active>,
    /// Our offers waiting for an opponent, with our side.
    offers: HashMap<GameId, Side>,
    /// Sides of the offers sent and not yet listed, oldest first.
    offers_sent: VecDeque<Side>,
    next_side: usize,
    /// Games we asked to join, not started yet.
    joins: HashSet<GameId>,
    joins_left: VecDeque<GameId>,
    /// Our moves the server has not answered yet, oldest first.
    awaiting: VecDeque<GameId>,
    finished: Vec<GameSummary>,
    stopping: bool,
    unknown_lines: u64,
}

const PING_EVERY: Duration = Duration::from_secs(20);
const SILENCE_LIMIT: Duration = Duration::from_secs(75);

impl Client {
    /// A client that builds its players with `make_player` and stops when `stop` turns true.
    #[must_use]
    pub fn new(options: Options, make_player: MakePlayer, log: Arc<Log>, stop: Arc<AtomicBool>) -> Client {
        let (events, inbox) = mpsc::channel();
        let joins_left = options.join.iter().copied().collect();
        Client {
            options,
            make_player,
            log,
            stop,
            events,
            inbox,
            generation: 0,
            active: HashMap::new(),
            offers: HashMap::new(),
            offers_sent: VecDeque::new(),
            next_side: 0,
            joins: HashSet::new(),
            joins_left,
            awaiting: VecDeque::new(),
            finished: Vec::new(),
            stopping: false,
            unknown_lines: 0,
        }
    }

    fn say(&self, text: &str) {
        self.log.line(text);
    }

    /// Plays until the games are done or the client is stopped; reconnects when the connection
    /// drops. Returns the games that ended.
    ///
    /// # Errors
    /// A login the server refuses, or no connection after `max_retries` attempts.
    pub fn run(mut self) -> Result<Vec<GameSummary>, OnlineError> {
        let mut failures = 0u32;
        loop {
            if self.done() {
                return Ok(self.finished);
            }
            let mut connection = match self.connect() {
                Ok(c) => c,
                Err(ConnectError::Fatal(why)) => return Err(OnlineError::Login(why)),
                Err(ConnectError::Retry(why)) => {
                    failures += 1;
                    if self.options.max_retries.is_some_and(|m| failures > m) {
                        return Err(OnlineError::Connect { address: self.options.address.clone(), error: why });
                    }
                    if self.stop.load(Ordering::Relaxed) && self.active.is_empty() {
                        return Ok(self.finished);
                    }
                    let wait = backoff(failures, self.options.max_backoff);
                    self.say(&format!("connection failed ({why}); retrying in {:.0}s", wait.as_secs_f64()));
                    self.sleep_unless_stopped(wait);
                    continue;
                }
            };
            let why = self.serve(&mut connection);
            let _ = connection.writer.shutdown(Shutdown::Both);
            match why {
                Ok(()) => return Ok(self.finished),
                Err(why) => {
                    self.say(&format!("connection lost: {why}; reconnecting"));
                    self.lost_connection();
                    failures = 1;
                    self.sleep_unless_stopped(backoff(failures, self.options.max_backoff));
                }
            }
        }
    }

    fn sleep_unless_stopped(&self, wait: Duration) {
        let until = Instant::now() + wait;
        while Instant::now() < until {
            thread::sleep(Duration::from_millis(100).min(until.saturating_duration_since(Instant::now())));
        }
    }

    fn done(&self) -> bool {
        let limit_reached = self.options.games.is_some_and(|n| self.finished.len() >= n);
        let nothing_to_do = self.options.create.is_empty() && self.joins_left.is_empty() && self.joins.is_empty();
        (limit_reached || self.stopping || (nothing_to_do && self.finished.len() + self.active.len() > 0))
            && self.active.is_empty()
    }

    /// The loop of one connection. `Ok` when all is done, `Err` when the connection is lost.
    fn serve(&mut self, c: &mut Connection) -> Result<(), String> {
        self.send(c, &format!("software_id tafl-online-{}", env!("CARGO_PKG_VERSION")))?;
        // Games in progress: the server sends `generate_move` for each after login; ask
        // for them anyway, so that a game waiting for the opponent resumes too.
        let ids: Vec<GameId> = self.active.keys().copied().collect();
        for id in ids {
            self.ask_resume(c, id)?;
        }
        loop {
            if self.stop.load(Ordering::Relaxed) && !self.stopping {
                self.begin_stop(c)?;
            }
            if self.done() {
                let _ = self.send(c, "logout");
                self.say("done: logged out");
                return Ok(());
            }
            self.offer_and_join(c)?;
            self.check_resumes(c)?;
            if c.last_ping.elapsed() >= PING_EVERY {
                c.last_ping = Instant::now();
                self.send(c, "ping")?;
            }
            if c.last_heard.elapsed() > SILENCE_LIMIT {
                return Err(format!("nothing heard for {}s", SILENCE_LIMIT.as_secs()));
            }
            let event = match self.inbox.recv_timeout(Duration::from_millis(200)) {
                Ok(event) => event,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => return Err("event channel closed".into()),
            };
            match event {
                Event::Line(g, line) if g == c.generation => {
                    c.last_heard = Instant::now();
                    self.on_line(c, line)?;
                }
                Event::TooLong(g, n) if g == c.generation => {
                    c.last_heard = Instant::now();
                    self.say(&format!("ignored a line of {n} bytes (longer than {MAX_LINE})"));
                }
                Event::Closed(g, why) if g == c.generation => return Err(why),
                Event::Chose { game, ply, result, took, budget } => {
                    self.on_choice(c, game, ply, result, took, budget)?
                }
                _ => {}
            }
        }
    }
}

/// `15m+10s`, `30s+1s`, `untimed`.
#[must_use]
pub fn time_text(time: TimeControl) -> String {
    match time {
        TimeControl::Fischer { main_ms, increment_ms } => {
            let main =
                if main_ms % 60_000 == 0 { format!("{}m", main_ms / 60_000) } else { format!("{}s", main_ms / 1000) };
            format!("{main}+{}s", increment_ms / 1000)
        }
        TimeControl::Untimed => "untimed".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backs_off_within_the_servers_limits() {
        let max = Duration::from_secs(60);
        assert_eq!(backoff(1, max), Duration::from_secs(1));
        assert_eq!(backoff(3, max), Duration::from_secs(4));
        assert_eq!(backoff(30, max), max);
        assert_eq!(time_text(TimeControl::Fischer { main_ms: 900_000, increment_ms: 10_000 }), "15m+10s");
        assert_eq!(time_text(TimeControl::Fischer { main_ms: 30_000, increment_ms: 1_000 }), "30s+1s");
    }
}

//! The client: logs in, offers, accepts and joins games, plays them with one player per game
//! in its own thread, keeps the clocks, reconnects, and stops as asked.
//!
//! One thread reads the socket and turns lines into events; one thread per game runs the
//! player's searches; the loop here owns all state and is the only writer to the socket.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io::{BufReader, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tafl_rules::{Game, Move, Side};
use tafl_search::{Limits, MoveChoice, Player, PlayerError};

use crate::clock::{Budget, ClockPolicy};
use crate::protocol::{self, GameId, MAX_BINARY, MAX_LINE, Read, ServerLine, TimeControl};
use crate::referee::Refereed;

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

struct Job {
    game: Game,
    limits: Limits,
    ply: usize,
    budget: Option<Budget>,
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

struct Connection {
    writer: TcpStream,
    generation: u64,
    last_heard: Instant,
    last_ping: Instant,
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
const RESUME_WAIT: Duration = Duration::from_secs(15);

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

    fn connect(&mut self) -> Result<Connection, ConnectError> {
        let o = &self.options;
        let address = o.address.to_socket_addrs().map_err(|e| ConnectError::Retry(e.to_string()))?.next();
        let address = address.ok_or_else(|| ConnectError::Retry(format!("{} has no address", o.address)))?;
        let stream = TcpStream::connect_timeout(&address, Duration::from_secs(10))
            .map_err(|e| ConnectError::Retry(e.to_string()))?;
        let _ = stream.set_nodelay(true);
        stream.set_write_timeout(Some(Duration::from_secs(10))).map_err(|e| ConnectError::Retry(e.to_string()))?;
        stream.set_read_timeout(Some(Duration::from_secs(30))).map_err(|e| ConnectError::Retry(e.to_string()))?;
        let mut reader = BufReader::new(stream.try_clone().map_err(|e| ConnectError::Retry(e.to_string()))?);
        let mut writer = stream;
        let mut create = o.create_account;
        for _ in 0..3 {
            let line = protocol::login_line(&o.version, create, &o.username, &o.password);
            writeln!(writer, "{line}").map_err(|e| ConnectError::Retry(e.to_string()))?;
            // The server answers the login before anything else; skip what is not an answer.
            let answer = loop {
                match protocol::read_line(&mut reader, MAX_LINE).map_err(|e| ConnectError::Retry(e.to_string()))? {
                    Read::Closed => return Err(ConnectError::Retry("closed during login".into())),
                    Read::TooLong(_) => {}
                    Read::Line(text) => {
                        if let answer @ (ServerLine::LoggedIn | ServerLine::LoginRefused(_)) = ServerLine::parse(&text)
                        {
                            break answer;
                        }
                    }
                }
            };
            match answer {
                ServerLine::LoggedIn => {
                    self.say(&format!("logged in to {} as {}", o.address, o.username));
                    return Ok(self.start_reader(reader, writer));
                }
                ServerLine::LoginRefused(words) => {
                    if create && words.contains("already_exists") {
                        self.say("the account exists: logging in");
                        create = false;
                        continue;
                    }
                    if words.contains("wrong_version") {
                        return Err(ConnectError::Fatal(format!(
                            "{words} (this client speaks protocol {}; try --protocol-version)",
                            o.version
                        )));
                    }
                    if !(words.contains("logged_in_already") || words.contains("retried_too_soon")) {
                        let hint = if words.contains("account_not_in_database") {
                            " (add --create-account to create it)"
                        } else {
                            ""
                        };
                        return Err(ConnectError::Fatal(format!("{words}{hint}")));
                    }
                    // Logged in elsewhere (our old connection, not yet dropped), or too soon.
                    return Err(ConnectError::Retry(format!("the server says `{}`", protocol::clip(&words))));
                }
                _ => {}
            }
        }
        Err(ConnectError::Retry("login did not settle".into()))
    }

    fn start_reader(&mut self, mut reader: BufReader<TcpStream>, writer: TcpStream) -> Connection {
        self.generation += 1;
        let generation = self.generation;
        let events = self.events.clone();
        thread::spawn(move || {
            loop {
                let event = match protocol::read_line(&mut reader, MAX_LINE) {
                    Ok(Read::Line(text)) => {
                        let line = ServerLine::parse(&text);
                        if let ServerLine::Binary(n) = line
                            && (n > MAX_BINARY || protocol::skip_bytes(&mut reader, n).is_err())
                        {
                            let _ = events.send(Event::Closed(generation, format!("a binary block of {n} bytes")));
                            return;
                        }
                        Event::Line(generation, line)
                    }
                    Ok(Read::TooLong(n)) => Event::TooLong(generation, n),
                    Ok(Read::Closed) => {
                        let _ = events.send(Event::Closed(generation, "the server closed the connection".into()));
                        return;
                    }
                    Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                        continue;
                    }
                    Err(e) => {
                        let _ = events.send(Event::Closed(generation, e.to_string()));
                        return;
                    }
                };
                if events.send(event).is_err() {
                    return;
                }
            }
        });
        let now = Instant::now();
        Connection { writer, generation, last_heard: now, last_ping: now }
    }

    fn send(&self, connection: &mut Connection, line: &str) -> Result<(), String> {
        writeln!(connection.writer, "{line}").map_err(|e| format!("writing `{}`: {e}", protocol::clip(line)))
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

    fn begin_stop(&mut self, c: &mut Connection) -> Result<(), String> {
        self.stopping = true;
        let mode = match self.options.on_stop {
            OnStop::Finish => "finishing the games in progress",
            OnStop::Resign => "resigning the games in progress",
        };
        self.say(&format!("stop requested: {mode}, starting no new games"));
        // A join the server has started (a game in `active`) is a game to finish or resign,
        // not an offer to withdraw.
        let joins = self.joins.iter().filter(|id| !self.active.contains_key(id));
        let pending: Vec<GameId> = self.offers.keys().chain(joins).copied().collect();
        for id in pending {
            self.send(c, &format!("leave_game {id}"))?;
        }
        self.offers.clear();
        self.joins.clear();
        self.joins_left.clear();
        if self.options.on_stop == OnStop::Resign {
            // A game not yet synchronised does not know our side: it resigns once resumed.
            let ids: Vec<GameId> = self.active.iter().filter(|(_, a)| a.synced).map(|(id, _)| *id).collect();
            for id in ids {
                self.resign(c, id, "stop requested")?;
            }
        }
        Ok(())
    }

    fn resign(&mut self, c: &mut Connection, id: GameId, why: &str) -> Result<(), String> {
        let Some(a) = self.active.get_mut(&id) else { return Ok(()) };
        if a.resigned {
            return Ok(());
        }
        a.resigned = true;
        let side = a.side;
        self.say(&format!("game {id}: resigning ({why})"));
        self.send(c, &protocol::resign_line(id, side))
    }

    fn in_play(&self) -> usize {
        let joins_waiting = self.joins.iter().filter(|id| !self.active.contains_key(id)).count();
        self.active.len() + self.offers.len() + self.offers_sent.len() + joins_waiting
    }

    fn offer_and_join(&mut self, c: &mut Connection) -> Result<(), String> {
        if self.stopping {
            return Ok(());
        }
        let room = |s: &Client| {
            s.in_play() < s.options.concurrent.max(1)
                && s.options.games.is_none_or(|n| s.finished.len() + s.in_play() < n)
        };
        while room(self) && !self.joins_left.is_empty() {
            let Some(id) = self.joins_left.pop_front() else { break };
            self.joins.insert(id);
            self.say(&format!("asking to join game {id}"));
            self.send(c, &format!("join_game_pending {id}"))?;
        }
        while room(self) && !self.options.create.is_empty() {
            let side = self.options.create[self.next_side % self.options.create.len()];
            self.next_side += 1;
            self.offers_sent.push_back(side);
            let o = &self.options;
            let line = protocol::new_game_line(side, o.rated, o.time, o.size);
            self.send(c, &line)?;
        }
        Ok(())
    }

    fn ask_resume(&mut self, c: &mut Connection, id: GameId) -> Result<(), String> {
        if let Some(a) = self.active.get_mut(&id) {
            a.resume_asked = Some(Instant::now());
            a.resume_tries += 1;
        }
        self.send(c, &format!("resume_game_json {id}"))
    }

    /// Re-asks for games whose resume went unanswered; the server stays silent about games
    /// that have ended, so after three tries the game is given up.
    fn check_resumes(&mut self, c: &mut Connection) -> Result<(), String> {
        let late: Vec<(GameId, u32)> = self
            .active
            .iter()
            .filter(|(_, a)| !a.synced && a.resume_asked.is_some_and(|t| t.elapsed() > RESUME_WAIT))
            .map(|(id, a)| (*id, a.resume_tries))
            .collect();
        for (id, tries) in late {
            if tries >= 3 {
                self.say(&format!("game {id}: the server does not report it any more; forgetting it"));
                self.active.remove(&id);
            } else {
                self.ask_resume(c, id)?;
            }
        }
        Ok(())
    }

    fn lost_connection(&mut self) {
        for a in self.active.values_mut() {
            a.synced = false;
            a.resume_asked = None;
            a.resume_tries = 0;
        }
        // The server drops offers of a player who logs out (clocks under a day); offer anew.
        self.offers.clear();
        self.offers_sent.clear();
        self.awaiting.clear();
        for id in self.joins.drain() {
            self.joins_left.push_back(id);
        }
    }

    fn on_line(&mut self, c: &mut Connection, line: ServerLine) -> Result<(), String> {
        match line {
            ServerLine::GameOffered(id) => {
                let Some(side) = self.offers_sent.pop_front() else {
                    self.say(&format!("the server lists an offer {id} we did not make"));
                    return Ok(());
                };
                if self.stopping {
                    self.say(&format!("withdrawing offer {id} (stopping)"));
                    return self.send(c, &format!("leave_game {id}"));
                }
                self.offers.insert(id, side);
                let o = &self.options;
                self.say(&format!(
                    "offered game {id}: we play the {side}, {} {}, {}x{}",
                    if o.rated { "rated" } else { "unrated" },
                    time_text(o.time),
                    o.size,
                    o.size
                ));
            }
            ServerLine::ChallengeRequested(id) => {
                if self.offers.remove(&id).is_some() && !self.stopping {
                    self.say(&format!("game {id}: challenge accepted"));
                    self.send(c, &format!("join_game {id}"))?;
                    self.start_game(c, id)?;
                } else {
                    self.say(&format!("game {id}: ignoring a challenge to a game we do not offer"));
                }
            }
            ServerLine::JoinPending(id) => self.say(&format!("game {id}: waiting for its creator to accept")),
            ServerLine::GameStarts { attacker, defender, rated, time, size } => {
                self.say(&format!(
                    "a game starts: {attacker} (attackers) against {defender} (defenders), {}, {}, {size}x{size}",
                    if rated { "rated" } else { "unrated" },
                    time_text(time)
                ));
                // The line names no game: ask about the games we asked to join (once each).
                let ids: Vec<GameId> = self.joins.iter().filter(|id| !self.active.contains_key(id)).copied().collect();
                for id in ids {
                    self.start_game(c, id)?;
                }
            }
            ServerLine::YourMove { game, side } => match self.active.get(&game) {
                Some(a) if a.synced && a.side == side && a.referee.side_to_move() == side => self.think(game),
                Some(a) if a.synced && a.side == side => {
                    self.say(&format!(
                        "game {game}: the server says it is our move, our board says not: resynchronising"
                    ));
                    self.mark_unsynced(game);
                    self.ask_resume(c, game)?;
                }
                Some(_) => {}
                None => {
                    self.start_game(c, game)?;
                }
            },
            ServerLine::Played { game, side, from, to } => self.on_played(c, game, side, &from, &to)?,
            ServerLine::Resigned { game, side } => {
                if let Some(a) = self.active.get(&game) {
                    let who = if a.side == side { "we" } else { "the opponent" };
                    self.say(&format!("game {game}: {who} ({side}) resigned (or ran out of time)"));
                }
                if let Some(a) = self.active.get_mut(&game) {
                    a.resigned = true;
                }
            }
            ServerLine::Clocks { game, attacker_ms, defender_ms } => {
                if let Some(a) = self.active.get_mut(&game) {
                    let (ours, theirs) =
                        if a.side == Side::Attackers { (attacker_ms, defender_ms) } else { (defender_ms, attacker_ms) };
                    a.our_ms = ours;
                    a.their_ms = theirs;
                }
            }
            ServerLine::MoveAccepted => {
                self.awaiting.pop_front();
            }
            ServerLine::MoveRefused(words) => {
                let id = self.awaiting.pop_front();
                match id {
                    Some(id) => {
                        if let Some(a) = self.active.get_mut(&id) {
                            a.referee.take_back();
                        }
                        self.say(&format!("game {id}: the server refused our move: `{}`", protocol::clip(&words)));
                        self.resign(c, id, "the server refused our move")?;
                    }
                    None => self.say(&format!(
                        "the server refused a move we do not remember sending: `{}`",
                        protocol::clip(&words)
                    )),
                }
            }
            ServerLine::GameOver { game, winner } => {
                if self.awaiting.front() == Some(&game) {
                    self.awaiting.pop_front();
                }
                self.finish(game, Some(winner));
            }
            ServerLine::Drawn => {
                let game = self
                    .awaiting
                    .pop_front()
                    .or_else(|| {
                        self.active
                            .iter()
                            .find(|(_, a)| a.referee.ply() >= crate::clock::SERVER_PLY_LIMIT)
                            .map(|(id, _)| *id)
                    })
                    .or_else(|| if self.active.len() == 1 { self.active.keys().next().copied() } else { None });
                match game {
                    Some(id) => self.finish(id, None),
                    None => self.say("the server reports a draw in a game we cannot tell"),
                }
            }
            ServerLine::DrawOffered { game, side } => {
                // No answer: in 6.4.1 `draw ID decline` deletes the game on the server.
                self.say(&format!("game {game}: the {side} offer a draw; playing on (not answered)"));
            }
            ServerLine::Resume(game) => self.on_resume(c, *game)?,
            ServerLine::LoginRefused(words) => {
                self.say(&format!("unexpected login answer: {}", protocol::clip(&words)))
            }
            ServerLine::Refused { command, message } => {
                self.say(&format!("the server refused `{command}`: {message}"));
                if command == "join_game_pending" {
                    // The offer is gone; do not wait for it.
                    self.joins.clear();
                }
                if command == "new_game" {
                    self.offers_sent.pop_front();
                }
            }
            ServerLine::Malformed(why) => self.say(&format!("ignored a malformed line: {why}")),
            ServerLine::Other(text) => {
                self.unknown_lines += 1;
                // The lists the server broadcasts are many; log a few of them.
                if self.unknown_lines <= 20 || self.unknown_lines.is_power_of_two() {
                    self.say(&format!("ignored: {text}"));
                }
            }
            ServerLine::LoggedIn | ServerLine::Pong | ServerLine::Binary(_) => {}
        }
        Ok(())
    }

    fn mark_unsynced(&mut self, game: GameId) {
        if let Some(a) = self.active.get_mut(&game) {
            a.synced = false;
            a.resume_tries = 0;
        }
    }

    /// A game of ours the state does not know yet: ask the server for all of it.
    fn start_game(&mut self, c: &mut Connection, id: GameId) -> Result<(), String> {
        if !self.active.contains_key(&id) {
            self.start_game_placeholder(id);
        }
        self.ask_resume(c, id)
    }

    fn on_resume(&mut self, c: &mut Connection, game: protocol::ResumedGame) -> Result<(), String> {
        let id = game.id;
        let ours = |name: &str| name.eq_ignore_ascii_case(&self.options.username);
        let side = if ours(&game.attackers) {
            Side::Attackers
        } else if ours(&game.defenders) {
            Side::Defenders
        } else {
            self.say(&format!(
                "game {id}: not ours ({} against {}); ignoring",
                protocol::clip(&game.attackers),
                protocol::clip(&game.defenders)
            ));
            return Ok(());
        };
        self.joins.remove(&id);
        if !self.active.contains_key(&id) {
            self.start_game_placeholder(id);
        }
        // A reply to a request sent before our last move does not have it yet: the state we
        // hold is newer.
        let plies = game.moves.split_whitespace().count();
        if let Some(a) = self.active.get_mut(&id)
            && a.synced
            && plies < a.referee.ply()
        {
            a.resume_asked = None;
            return Ok(());
        }
        let referee = match Refereed::from_moves(game.dim, &game.moves) {
            Ok(r) => r,
            Err(e) => {
                self.say(&format!("game {id}: cannot follow the server's moves ({e}); resigning"));
                if let Some(a) = self.active.get_mut(&id) {
                    a.side = side;
                }
                return self.resign(c, id, "our board cannot follow the server's");
            }
        };
        for note in &referee.notes {
            self.say(&format!("game {id}: referee: {note}"));
        }
        let (time, our_ms, their_ms, since_ms) = match (&game.time_control, &game.time_remaining_ms) {
            (Some(tc), Some(left)) => {
                let (ours, theirs) = if side == Side::Attackers {
                    (left.attackers, left.defenders)
                } else {
                    (left.defenders, left.attackers)
                };
                let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
                let since = protocol::unix_ms(&left.last_move).map_or(0, |t| (now - t).clamp(0, 3_600_000));
                (
                    TimeControl::Fischer {
                        main_ms: tc.main_time_seconds * 1000,
                        increment_ms: tc.increment_length * 1000,
                    },
                    ours,
                    theirs,
                    since,
                )
            }
            _ => (TimeControl::Untimed, 0, 0, 0),
        };
        let opponent = if side == Side::Attackers { game.defenders.clone() } else { game.attackers.clone() };
        let new_worker = self.active.get(&id).is_none_or(|a| a.jobs.is_none() || a.size != game.dim);
        let jobs = if new_worker { Some(self.spawn_worker(id, game.dim)?) } else { None };
        let Some(a) = self.active.get_mut(&id) else { return Ok(()) };
        let first = a.opponent.is_empty();
        a.side = side;
        a.opponent = opponent;
        a.size = game.dim;
        a.rated = game.rated;
        a.time = time;
        a.referee = referee;
        a.synced = true;
        a.resume_asked = None;
        a.our_ms = our_ms;
        a.their_ms = their_ms;
        a.turn_started =
            Instant::now().checked_sub(Duration::from_millis(since_ms as u64)).unwrap_or_else(Instant::now);
        if let Some(jobs) = jobs {
            a.jobs = Some(jobs);
        }
        let text = format!(
            "game {id}: {} we play the {side} against {}, {}, {}, {}x{}, ply {}",
            if first { "started:" } else { "resumed:" },
            a.opponent,
            if a.rated { "rated" } else { "unrated" },
            time_text(time),
            a.size,
            a.size,
            a.referee.ply()
        );
        let our_turn = a.referee.side_to_move() == side && !a.resigned;
        self.say(&text);
        if self.stopping && self.options.on_stop == OnStop::Resign {
            return self.resign(c, id, "stop requested");
        }
        if our_turn {
            self.think(id);
        }
        Ok(())
    }

    fn start_game_placeholder(&mut self, id: GameId) {
        if let Ok(referee) = Refereed::new(11) {
            self.active.insert(
                id,
                Active {
                    side: Side::Attackers,
                    opponent: String::new(),
                    size: 11,
                    rated: false,
                    time: TimeControl::Untimed,
                    referee,
                    synced: false,
                    resume_asked: None,
                    resume_tries: 0,
                    thinking: None,
                    our_ms: 0,
                    their_ms: 0,
                    turn_started: Instant::now(),
                    lowest_ms: None,
                    resigned: false,
                    jobs: None,
                },
            );
        }
    }

    fn spawn_worker(&mut self, id: GameId, size: u8) -> Result<Sender<Job>, String> {
        let mut player = (self.make_player)(size).map_err(|e| format!("building the player: {e}"))?;
        player.new_game();
        let (jobs, inbox) = mpsc::channel::<Job>();
        let events = self.events.clone();
        thread::Builder::new()
            .name(format!("game-{id}"))
            .spawn(move || {
                for job in inbox {
                    let started = Instant::now();
                    let result = player.choose(&job.game, &job.limits);
                    let event =
                        Event::Chose { game: id, ply: job.ply, result, took: started.elapsed(), budget: job.budget };
                    if events.send(event).is_err() {
                        return;
                    }
                }
            })
            .map_err(|e| format!("starting a search thread: {e}"))?;
        Ok(jobs)
    }

    /// Starts a search for our move in `id`, with the clock's budget.
    fn think(&mut self, id: GameId) {
        let base = self.options.limits.clone();
        let policy = self.options.clock;
        let untimed = self.options.untimed_move_time;
        let Some(a) = self.active.get_mut(&id) else { return };
        let ply = a.referee.ply();
        if a.thinking == Some(ply) || a.resigned {
            return;
        }
        let (limits, budget) = match a.time {
            TimeControl::Fischer { increment_ms, .. } => {
                let left = a.our_ms - a.turn_started.elapsed().as_millis() as i64;
                a.lowest_ms = Some(a.lowest_ms.map_or(left, |l| l.min(left)));
                let budget = policy.budget(left, increment_ms, ply);
                let time = base.time.map_or(budget.think, |t| t.min(budget.think));
                (Limits { time: Some(time), ..base }, Some(budget))
            }
            TimeControl::Untimed => (Limits { time: Some(base.time.unwrap_or(untimed)), ..base }, None),
        };
        let Some(jobs) = &a.jobs else { return };
        // Where our rules have ended the game and the server plays on, the player gets the
        // position without its history (the server decides).
        let game = if a.referee.game().outcome().is_over() {
            Game::from_position(*a.referee.game().position())
        } else {
            a.referee.game().clone()
        };
        if jobs.send(Job { game, limits, ply, budget }).is_ok() {
            a.thinking = Some(ply);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn on_choice(
        &mut self,
        c: &mut Connection,
        id: GameId,
        ply: usize,
        result: Result<MoveChoice, PlayerError>,
        took: Duration,
        budget: Option<Budget>,
    ) -> Result<(), String> {
        let log = Arc::clone(&self.log);
        let Some(a) = self.active.get_mut(&id) else { return Ok(()) };
        if a.thinking == Some(ply) {
            a.thinking = None;
        }
        if !a.synced || a.referee.ply() != ply || a.resigned || a.referee.side_to_move() != a.side {
            log.line(&format!("game {id}: dropping a move for ply {ply} that came too late"));
            if a.synced && a.referee.side_to_move() == a.side && !a.resigned {
                self.think(id);
            }
            return Ok(());
        }
        let side = a.side;
        let choice = match result {
            Ok(choice) => choice,
            Err(PlayerError::Resigned) => return self.resign(c, id, "the player resigned"),
            Err(e) => {
                log.line(&format!("game {id}: the player failed: {e}"));
                return self.resign(c, id, "the player has no move");
            }
        };
        let mut mv = choice.mv;
        if a.referee.server_refuses(mv) {
            match allowed_move(&a.referee) {
                Some(other) => {
                    log.line(&format!(
                        "game {id}: the server forbids defenders to repeat a board: playing {other} instead of {mv}"
                    ));
                    mv = other;
                }
                None => return self.resign(c, id, "every defender move repeats a board"),
            }
        }
        let budget_text = budget.map_or_else(|| "untimed".to_string(), |b| b.to_string());
        let value = choice.value.map_or_else(String::new, |v| format!(", value {v:+.2}"));
        let text = format!(
            "game {id} ply {}: {side} play {mv}{value}, depth {}, {} nodes, {:.2}s; {budget_text}",
            ply + 1,
            choice.depth,
            choice.nodes,
            took.as_secs_f64()
        );
        if let Err(e) = a.referee.play(mv) {
            return self.resign(c, id, &format!("our own move does not play: {e}"));
        }
        a.turn_started = Instant::now();
        self.say(&text);
        self.awaiting.push_back(id);
        self.send(c, &protocol::move_line(id, side, mv))
    }

    fn on_played(&mut self, c: &mut Connection, id: GameId, side: Side, from: &str, to: &str) -> Result<(), String> {
        let Some(a) = self.active.get_mut(&id) else { return Ok(()) };
        if !a.synced {
            // The resume we asked for includes it.
            return Ok(());
        }
        if side == a.side || a.referee.side_to_move() != side {
            self.say(&format!("game {id}: the server reports {side} {from}-{to} out of turn: resynchronising"));
            self.mark_unsynced(id);
            return self.ask_resume(c, id);
        }
        a.turn_started = Instant::now();
        match a.referee.play_text(from, to) {
            Ok(_) => {
                let notes: Vec<String> = a.referee.notes.drain(..).collect();
                for note in notes {
                    self.say(&format!("game {id}: referee: {note}"));
                }
                Ok(())
            }
            Err(e) => {
                self.say(&format!("game {id}: cannot follow the server's move {from}-{to} ({e}): resynchronising"));
                self.mark_unsynced(id);
                self.ask_resume(c, id)
            }
        }
    }

    fn finish(&mut self, id: GameId, winner: Option<Side>) {
        let Some(mut a) = self.active.remove(&id) else { return };
        a.referee.server_ended(winner, a.resigned);
        for note in &a.referee.notes {
            self.log.line(&format!("game {id}: referee: {note}"));
        }
        let record = self.write_record(id, &a, winner);
        let result = match winner {
            Some(w) if w == a.side => "won",
            Some(_) => "lost",
            None => "drawn",
        };
        let lowest =
            a.lowest_ms.map_or_else(String::new, |ms| format!(", our lowest clock {:.1}s", ms as f64 / 1000.0));
        let path = record.as_ref().map_or_else(String::new, |p| format!(", record {}", p.display()));
        self.say(&format!(
            "game {id}: over after {} plies: {result} as the {} against {}{lowest}{path}",
            a.referee.ply(),
            a.side,
            a.opponent
        ));
        self.finished.push(GameSummary {
            id,
            side: a.side,
            opponent: a.opponent.clone(),
            winner,
            plies: a.referee.ply(),
            record,
            notes: a.referee.notes.clone(),
            lowest_clock_ms: a.lowest_ms,
        });
    }

    fn write_record(&self, id: GameId, a: &Active, winner: Option<Side>) -> Option<PathBuf> {
        let dir = self.options.records.as_ref()?;
        let variant = if a.size == 13 { " --variant copenhagen-13" } else { "" };
        let (attacker, defender) = if a.side == Side::Attackers {
            (&self.options.username, &a.opponent)
        } else {
            (&a.opponent, &self.options.username)
        };
        let mut text = format!(
            "# tafl online: game {id} on {}, {attacker} (attackers) against {defender} (defenders), {}, {}, {}x{}\n# check it with: tafl replay{variant} FILE\n",
            self.options.address,
            if a.rated { "rated" } else { "unrated" },
            time_text(a.time),
            a.size,
            a.size
        );
        for note in &a.referee.notes {
            text.push_str(&format!("# referee: {note}\n"));
        }
        text.push_str(&a.referee.archive_line(Some(winner)));
        text.push('\n');
        let path = dir.join(format!("game-{id}.csv"));
        let temp = dir.join(format!(".game-{id}.{}.tmp", std::process::id()));
        let written = std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(&temp, text))
            .and_then(|()| std::fs::rename(&temp, &path));
        match written {
            Ok(()) => Some(path),
            Err(e) => {
                self.say(&format!("game {id}: cannot write its record to {}: {e}", path.display()));
                None
            }
        }
    }
}

/// The first legal defender move that the server accepts (it forbids recreating a board);
/// used only when the player's choice repeats one.
fn allowed_move(referee: &Refereed) -> Option<Move> {
    referee.game().legal_moves().iter().copied().find(|&m| !referee.server_refuses(m))
}

enum ConnectError {
    /// Worth trying again later.
    Retry(String),
    /// Retrying cannot help (wrong password, wrong protocol version).
    Fatal(String),
}

/// 1 s, 2 s, 4 s … up to `max`: the server also slows down repeated logins (1, 2, 4, 8, 16 s,
/// then 30 minutes after five failures in a row), so never retry faster than it allows.
fn backoff(failures: u32, max: Duration) -> Duration {
    let secs = 1u64 << failures.saturating_sub(1).min(10);
    Duration::from_secs(secs).min(max).max(Duration::from_secs(1))
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

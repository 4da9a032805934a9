//! The games as the server reports them: offering, joining and accepting, starting and
//! resuming, stopping, and the dispatch of every server line to the game it is about. The
//! moves themselves are in `play`, the end of a game in `records`.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tafl_rules::Side;

use super::connection::Connection;
use super::{Active, Client, OnStop, time_text};
use crate::protocol::{self, GameId, ServerLine, TimeControl};
use crate::referee::Refereed;

const RESUME_WAIT: Duration = Duration::from_secs(15);

impl Client {
    pub(super) fn begin_stop(&mut self, c: &mut Connection) -> Result<(), String> {
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

    pub(super) fn resign(&mut self, c: &mut Connection, id: GameId, why: &str) -> Result<(), String> {
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

    pub(super) fn offer_and_join(&mut self, c: &mut Connection) -> Result<(), String> {
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

    pub(super) fn ask_resume(&mut self, c: &mut Connection, id: GameId) -> Result<(), String> {
        if let Some(a) = self.active.get_mut(&id) {
            a.resume_asked = Some(Instant::now());
            a.resume_tries += 1;
        }
        self.send(c, &format!("resume_game_json {id}"))
    }

    /// Re-asks for games whose resume went unanswered; the server stays silent about games
    /// that have ended, so after three tries the game is given up.
    pub(super) fn check_resumes(&mut self, c: &mut Connection) -> Result<(), String> {
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

    pub(super) fn on_line(&mut self, c: &mut Connection, line: ServerLine) -> Result<(), String> {
        match line {
            ServerLine::GameOffered(id) => self.on_offered(c, id)?,
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
            ServerLine::YourMove { game, side } => self.on_your_move(c, game, side)?,
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
            ServerLine::MoveRefused(words) => self.on_move_refused(c, &words)?,
            ServerLine::GameOver { game, winner } => {
                if self.awaiting.front() == Some(&game) {
                    self.awaiting.pop_front();
                }
                self.finish(game, Some(winner));
            }
            ServerLine::Drawn => self.on_drawn(),
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

    /// The server lists an offer of ours: the oldest offer sent and not yet listed.
    fn on_offered(&mut self, c: &mut Connection, id: GameId) -> Result<(), String> {
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
        Ok(())
    }

    /// The server says it is our move in `game`: think, or resynchronise where our board
    /// disagrees.
    fn on_your_move(&mut self, c: &mut Connection, game: GameId, side: Side) -> Result<(), String> {
        match self.active.get(&game) {
            Some(a) if a.synced && a.side == side && a.referee.side_to_move() == side => self.think(game),
            Some(a) if a.synced && a.side == side => {
                self.say(&format!("game {game}: the server says it is our move, our board says not: resynchronising"));
                self.mark_unsynced(game);
                self.ask_resume(c, game)?;
            }
            Some(_) => {}
            None => {
                self.start_game(c, game)?;
            }
        }
        Ok(())
    }

    /// The server refused our oldest unanswered move: take it back and resign that game.
    fn on_move_refused(&mut self, c: &mut Connection, words: &str) -> Result<(), String> {
        let id = self.awaiting.pop_front();
        match id {
            Some(id) => {
                if let Some(a) = self.active.get_mut(&id) {
                    a.referee.take_back();
                }
                self.say(&format!("game {id}: the server refused our move: `{}`", protocol::clip(words)));
                self.resign(c, id, "the server refused our move")?;
            }
            None => {
                self.say(&format!("the server refused a move we do not remember sending: `{}`", protocol::clip(words)))
            }
        }
        Ok(())
    }

    /// The server reports a draw without naming the game: the one we just moved in, else one at
    /// the server's ply limit, else the only game.
    fn on_drawn(&mut self) {
        let game = self
            .awaiting
            .pop_front()
            .or_else(|| {
                self.active.iter().find(|(_, a)| a.referee.ply() >= crate::clock::SERVER_PLY_LIMIT).map(|(id, _)| *id)
            })
            .or_else(|| if self.active.len() == 1 { self.active.keys().next().copied() } else { None });
        match game {
            Some(id) => self.finish(id, None),
            None => self.say("the server reports a draw in a game we cannot tell"),
        }
    }

    pub(super) fn mark_unsynced(&mut self, game: GameId) {
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
        let (time, our_ms, their_ms, since_ms) = resumed_clocks(&game, side);
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
}

/// The clocks of a resumed game: the time control, our and their time left (ms), and how long
/// ago the last move was made (ms, at most an hour); untimed games read zero.
fn resumed_clocks(game: &protocol::ResumedGame, side: Side) -> (TimeControl, i64, i64, i64) {
    match (&game.time_control, &game.time_remaining_ms) {
        (Some(tc), Some(left)) => {
            let (ours, theirs) = if side == Side::Attackers {
                (left.attackers, left.defenders)
            } else {
                (left.defenders, left.attackers)
            };
            let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
            let since = protocol::unix_ms(&left.last_move).map_or(0, |t| (now - t).clamp(0, 3_600_000));
            (
                TimeControl::Fischer { main_ms: tc.main_time_seconds * 1000, increment_ms: tc.increment_length * 1000 },
                ours,
                theirs,
                since,
            )
        }
        _ => (TimeControl::Untimed, 0, 0, 0),
    }
}

//! Playing our moves: the worker thread per game that runs the player's searches, the clock's
//! budget for each search, the chosen move sent to the server, and the opponent's moves played
//! on our board. Only these functions talk to the player.

use std::sync::Arc;
use std::sync::mpsc::{self, Sender};
use std::thread;
use std::time::{Duration, Instant};

use tafl_rules::{Game, Move, Side};
use tafl_search::{Limits, MoveChoice, PlayerError};

use super::connection::Connection;
use super::{Client, Event};
use crate::clock::Budget;
use crate::protocol::{self, GameId, TimeControl};
use crate::referee::Refereed;

/// One search for a worker: the position, the limits, the ply it is for.
pub(super) struct Job {
    game: Game,
    limits: Limits,
    ply: usize,
    budget: Option<Budget>,
}

impl Client {
    pub(super) fn spawn_worker(&mut self, id: GameId, size: u8) -> Result<Sender<Job>, String> {
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
    pub(super) fn think(&mut self, id: GameId) {
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
    pub(super) fn on_choice(
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

    pub(super) fn on_played(
        &mut self,
        c: &mut Connection,
        id: GameId,
        side: Side,
        from: &str,
        to: &str,
    ) -> Result<(), String> {
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
}

/// The first legal defender move that the server accepts (it forbids recreating a board);
/// used only when the player's choice repeats one.
fn allowed_move(referee: &Refereed) -> Option<Move> {
    referee.game().legal_moves().iter().copied().find(|&m| !referee.server_refuses(m))
}

//! Our referee: every move the server reports is played on a [`tafl_rules::Game`]; where the
//! server and our rules disagree, the disagreement is noted and the server is followed.
//!
//! The server's rules differ from ours in known ways (docs/online.md):
//! defenders may not make a move that recreates any earlier board; a game is drawn after 141
//! plies; encirclement is judged after every move; exit forts and the trapped king follow the
//! server's own tests. This module also answers the one question the client must ask before
//! it sends a move: would the server refuse it?

use std::collections::HashMap;

use tafl_rules::notation::{archive_result, ply_text, write_archive_line};
use tafl_rules::{Game, Move, Outcome, Position, Side, Variant, parse_move};

use crate::protocol::{MAX_PLIES, square};

/// Why a server move could not be followed at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RefereeError {
    /// The board size is not one the server plays (11 or 13 here).
    #[error("board size {0} is not supported (11 or 13)")]
    Size(u8),
    /// The move text does not name two squares of the board.
    #[error("move `{0}` does not parse")]
    Notation(String),
    /// The move moves nothing of the side to move: we cannot follow it.
    #[error("move {mv} moves no piece of the {side}: our board and the server's differ")]
    Desync {
        /// The move.
        mv: String,
        /// Who was to move.
        side: Side,
    },
    /// More plies than any game may have.
    #[error("more than {MAX_PLIES} plies")]
    TooLong,
}

/// One server game as our rules see it.
#[derive(Clone, Debug)]
pub struct Refereed {
    game: Game,
    /// Boards (placement only) after every ply, for the server's repetition rule.
    boards: HashMap<String, u32>,
    /// Captures of each ply, to take back a ply the server refused.
    taken: Vec<u32>,
    /// Plies as played, with the captures our rules found.
    record: Vec<String>,
    captures: [u32; 2],
    /// Disagreements found, in words.
    pub notes: Vec<String>,
    /// Our rules ended the game at this ply while the server played on.
    ended_at: Option<(usize, Outcome)>,
}

/// The variant of the server's game on a board of side `size`.
///
/// # Errors
/// Sizes other than 11 and 13.
pub fn variant_for(size: u8) -> Result<&'static Variant, RefereeError> {
    let name = match size {
        11 => "copenhagen",
        13 => "copenhagen-13",
        other => return Err(RefereeError::Size(other)),
    };
    Variant::preset(name).ok_or(RefereeError::Size(size))
}

fn placement(position: &Position) -> String {
    let fen = position.to_fen();
    fen.rsplit_once(' ').map_or(fen.clone(), |(board, _)| board.to_string())
}

impl Refereed {
    /// A game from the start of `size`.
    ///
    /// # Errors
    /// An unsupported size.
    pub fn new(size: u8) -> Result<Refereed, RefereeError> {
        let game = Game::new(variant_for(size)?);
        let boards = HashMap::from([(placement(game.position()), 1)]);
        Ok(Refereed {
            game,
            boards,
            taken: Vec::new(),
            record: Vec::new(),
            captures: [0, 0],
            notes: Vec::new(),
            ended_at: None,
        })
    }

    /// A game replayed from a server's move list (`from-to[xSQ…]`, `---` for a resignation).
    ///
    /// # Errors
    /// A move we cannot follow.
    pub fn from_moves(size: u8, moves: &str) -> Result<Refereed, RefereeError> {
        let mut game = Refereed::new(size)?;
        for text in moves.split_whitespace() {
            if text == "---" {
                continue;
            }
            let parsed = parse_move(text, size).map_err(|_| RefereeError::Notation(crate::protocol::clip(text)))?;
            // The server lists a captured king among its captures; we report him apart.
            let king = game.game.position().king().map(|sq| sq.to_string());
            let found = game.play(parsed.mv)?;
            // The server writes every capture it made: no `x` means none.
            {
                let listed = parsed.captures.unwrap_or_default();
                let mut ours = found.clone();
                let mut theirs: Vec<String> = listed.iter().map(ToString::to_string).collect();
                theirs.retain(|sq| Some(sq) != king.as_ref());
                ours.sort();
                theirs.sort();
                if ours != theirs {
                    let ply = game.ply();
                    game.notes.push(format!(
                        "ply {ply} {text}: the server captured [{}], our rules [{}]",
                        theirs.join(" "),
                        ours.join(" ")
                    ));
                }
            }
        }
        Ok(game)
    }

    /// Plays a move given as server squares.
    ///
    /// # Errors
    /// The squares do not parse or the move cannot be followed.
    pub fn play_text(&mut self, from: &str, to: &str) -> Result<Vec<String>, RefereeError> {
        let size = self.game.position().size();
        let (Some(f), Some(t)) = (square(from, size), square(to, size)) else {
            return Err(RefereeError::Notation(crate::protocol::clip(&format!("{from} {to}"))));
        };
        self.play(Move::new(f, t))
    }

    /// Plays `mv`, checking it by our rules and noting where they disagree with the server
    /// (which has accepted the move). Returns the squares our rules captured.
    ///
    /// # Errors
    /// The move moves no piece of the side to move (we cannot follow it).
    pub fn play(&mut self, mv: Move) -> Result<Vec<String>, RefereeError> {
        if self.record.len() >= MAX_PLIES {
            return Err(RefereeError::TooLong);
        }
        let ply = self.game.ply() + 1;
        let side = self.game.position().side_to_move();
        let outcome = self.game.outcome();
        if outcome.is_over() {
            // Our rules ended the game; the server plays on. Follow it on a fresh history.
            if self.ended_at.is_none() {
                self.ended_at = Some((self.game.ply(), outcome));
                self.notes.push(format!(
                    "our rules ended the game after ply {} ({}), the server plays on",
                    self.game.ply(),
                    describe(outcome)
                ));
            }
            self.game = Game::from_position(*self.game.position());
        }
        let played = match self.game.play(mv) {
            Ok(played) => played,
            Err(error) => {
                let mine = self.game.position().piece_at(mv.from).is_some_and(|p| p.side() == side);
                let on_board = self.game.position().piece_at(mv.to).is_none();
                if !mine || !on_board {
                    return Err(RefereeError::Desync { mv: mv.to_string(), side });
                }
                self.notes.push(format!("ply {ply} {mv}: the server accepted a move our rules refuse ({error})"));
                self.game.play_unchecked(mv)
            }
        };
        let captured: Vec<String> = played.captured.iter().map(ToString::to_string).collect();
        let index = usize::from(side == Side::Defenders);
        self.captures[index] += captured.len() as u32;
        self.record.push(ply_text(mv, &played.captured));
        self.taken.push(captured.len() as u32);
        *self.boards.entry(placement(self.game.position())).or_insert(0) += 1;
        Ok(captured)
    }

    /// The game as our rules see it (for the player).
    #[must_use]
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Plies played.
    #[must_use]
    pub fn ply(&self) -> usize {
        self.record.len()
    }

    /// The side to move.
    #[must_use]
    pub fn side_to_move(&self) -> Side {
        self.game.position().side_to_move()
    }

    /// The server refuses a defender move that recreates an earlier board.
    #[must_use]
    pub fn server_refuses(&self, mv: Move) -> bool {
        if self.side_to_move() != Side::Defenders {
            return false;
        }
        let mut position = *self.game.position();
        if position.play(mv).is_err() {
            return true;
        }
        self.boards.contains_key(&placement(&position))
    }

    /// Takes back the last ply (our move, which the server refused).
    pub fn take_back(&mut self) {
        let board = placement(self.game.position());
        if self.game.undo().is_none() {
            return;
        }
        if let Some(count) = self.boards.get_mut(&board) {
            *count -= 1;
            if *count == 0 {
                self.boards.remove(&board);
            }
        }
        self.record.pop();
        let side = usize::from(self.game.position().side_to_move() == Side::Defenders);
        self.captures[side] -= self.taken.pop().unwrap_or(0);
    }

    /// Compares the server's result with ours and notes a difference. `winner` is `None` for a
    /// draw; `resigned` when the game ended by a resignation (also on time).
    pub fn server_ended(&mut self, winner: Option<Side>, resigned: bool) {
        let ours = match self.ended_at {
            Some((_, outcome)) => outcome,
            None => self.game.outcome(),
        };
        let theirs = match winner {
            Some(side) => format!("{side} win"),
            None => "a draw".to_string(),
        };
        match ours {
            Outcome::Ongoing if resigned => {}
            Outcome::Ongoing => {
                let fen = self.game.position().to_fen();
                self.notes.push(format!(
                    "the server ended the game after ply {} ({theirs}) where our rules play on: {fen}",
                    self.ply()
                ));
            }
            Outcome::Decided { winner: w, .. } if Some(w) == winner => {}
            Outcome::Draw { .. } if winner.is_none() => {}
            other => {
                let fen = self.game.position().to_fen();
                self.notes.push(format!("the server says {theirs}, our rules say {}: {fen}", describe(other)));
            }
        }
    }

    /// The game in the archive format (`tafl replay` reads it): plies with our captures, the
    /// capture counts and the server's result (`Black` attackers, `White` defenders, `Draw`,
    /// `Ongoing`).
    #[must_use]
    pub fn archive_line(&self, winner: Option<Option<Side>>) -> String {
        let captures = self.captures.map(|c| c as usize);
        write_archive_line(&self.record, false, captures, archive_result(winner))
    }
}

fn describe(outcome: Outcome) -> String {
    match outcome {
        Outcome::Ongoing => "ongoing".into(),
        Outcome::Decided { winner, reason } => format!("{winner} win by {reason}"),
        Outcome::Draw { reason } => format!("a draw by {reason}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_a_move_list_and_checks_captures() {
        let g = Refereed::from_moves(11, "d1-d3 e5-e2 d3-d2xe2 f8-c8").unwrap();
        assert_eq!(g.ply(), 4);
        assert!(g.notes.is_empty(), "{:?}", g.notes);
        assert_eq!(g.archive_line(None), "d1-d3 e5-e2 d3-d2xe2 f8-c8,1,0,Ongoing");
        let wrong = Refereed::from_moves(11, "d1-d3 e5-e2 d3-d2 f8-c8xc7").unwrap();
        assert_eq!(wrong.notes.len(), 2, "{:?}", wrong.notes);
        assert!(Refereed::from_moves(11, "e6-e7").is_err());
        assert!(Refereed::from_moves(11, "zz").is_err());
        assert!(Refereed::new(9).is_err());
    }

    #[test]
    fn knows_the_server_forbids_defenders_to_repeat_a_board() {
        // Both sides move out and back: the defender's return recreates the start.
        let mut g = Refereed::from_moves(11, "a4-b4 f4-f3 b4-a4").unwrap();
        assert!(g.server_refuses(parse_move("f3-f4", 11).unwrap().mv));
        assert!(!g.server_refuses(parse_move("f3-e3", 11).unwrap().mv));
        g.play(parse_move("f3-e3", 11).unwrap().mv).unwrap();
        // Attackers may repeat.
        assert!(!g.server_refuses(parse_move("a4-b4", 11).unwrap().mv));
    }

    #[test]
    fn notes_results_that_differ() {
        let mut g = Refereed::from_moves(11, "d1-d3").unwrap();
        g.server_ended(Some(Side::Defenders), true);
        assert!(g.notes.is_empty());
        g.server_ended(Some(Side::Defenders), false);
        assert_eq!(g.notes.len(), 1);
    }
}

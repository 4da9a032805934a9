//! `Game`: a position with its history, which decides repetition, move limits and outcomes.

use std::fmt;

use crate::board::MoveList;
use crate::position::{IllegalMove, Played, Position};
use crate::rules::{NoMoves, Repetition};
use crate::square::{Move, Side};
use crate::variant::Variant;

/// Why a game ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// The king reached a corner (or the edge, with edge escape).
    KingEscaped,
    /// The defenders built an exit fort.
    ExitFort,
    /// The attackers captured the king.
    KingCaptured,
    /// The attackers encircled every defender.
    Encirclement,
    /// A position occurred for the third time.
    Repetition,
    /// The side to move had no legal move.
    NoMoves,
    /// The move limit was reached without a capture.
    MoveLimit,
}

impl Reason {
    /// The kebab-case name used in JSON and summaries.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Reason::KingEscaped => "king-escaped",
            Reason::ExitFort => "exit-fort",
            Reason::KingCaptured => "king-captured",
            Reason::Encirclement => "encirclement",
            Reason::Repetition => "repetition",
            Reason::NoMoves => "no-moves",
            Reason::MoveLimit => "move-limit",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The state of a game.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Outcome {
    /// Still being played.
    Ongoing,
    /// Won by `winner`.
    Decided {
        /// Who won.
        winner: Side,
        /// How.
        reason: Reason,
    },
    /// Drawn.
    Draw {
        /// Why.
        reason: Reason,
    },
}

impl Outcome {
    /// True once the game has ended.
    #[must_use]
    pub fn is_over(self) -> bool {
        self != Outcome::Ongoing
    }
    /// The winner, if any.
    #[must_use]
    pub fn winner(self) -> Option<Side> {
        match self {
            Outcome::Decided { winner, .. } => Some(winner),
            _ => None,
        }
    }
    /// The reason the game ended, if it has.
    #[must_use]
    pub fn reason(self) -> Option<Reason> {
        match self {
            Outcome::Ongoing => None,
            Outcome::Decided { reason, .. } | Outcome::Draw { reason } => Some(reason),
        }
    }
}

/// Why `Game::play` refused a move.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlayError {
    /// The game has already ended.
    #[error("the game is already over")]
    GameOver,
    /// The move is illegal in the position.
    #[error(transparent)]
    Illegal(#[from] IllegalMove),
}

#[derive(Clone, Debug)]
struct Ply {
    position: Position,
    /// Index into `plies` of the first position after the last capture: earlier positions
    /// cannot recur, so repetition looks no further back.
    since_capture: usize,
    outcome: Outcome,
}

/// A position with the history that repetition and the move limit need, and the outcome so far.
#[derive(Clone, Debug)]
pub struct Game {
    plies: Vec<Ply>,
    moves: Vec<Move>,
}

impl Game {
    /// A new game from the variant's start.
    #[must_use]
    pub fn new(variant: &'static Variant) -> Game {
        Game::from_position(Position::start(variant))
    }

    /// A game starting at `position`. Its outcome is decided at once when the position is already
    /// over, judged as if the side not to move had just moved into it (a fort, an encirclement,
    /// a king already taken) or when the side to move has no move.
    #[must_use]
    pub fn from_position(position: Position) -> Game {
        let last_mover = position.side_to_move().opponent();
        let mut outcome = match last_mover {
            Side::Attackers if position.king_surrounded() => {
                Outcome::Decided { winner: Side::Attackers, reason: Reason::KingCaptured }
            }
            _ => Outcome::Ongoing,
        };
        if outcome == Outcome::Ongoing {
            outcome = judge(&position, last_mover, 1, 0);
        }
        Game { plies: vec![Ply { position, since_capture: 0, outcome }], moves: Vec::new() }
    }

    fn last(&self) -> &Ply {
        // `plies` always holds the start position.
        &self.plies[self.plies.len() - 1]
    }

    /// The current position.
    #[must_use]
    pub fn position(&self) -> &Position {
        &self.last().position
    }
    /// The variant.
    #[must_use]
    pub fn variant(&self) -> &'static Variant {
        self.position().variant()
    }
    /// The outcome so far.
    #[must_use]
    pub fn outcome(&self) -> Outcome {
        self.last().outcome
    }
    /// The moves played, in order.
    #[must_use]
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }
    /// Plies played so far.
    #[must_use]
    pub fn ply(&self) -> usize {
        self.moves.len()
    }
    /// The position the game started from.
    #[must_use]
    pub fn start(&self) -> &Position {
        &self.plies[0].position
    }
    /// Plies since the last capture (or the start).
    #[must_use]
    pub fn plies_since_capture(&self) -> usize {
        self.plies.len() - 1 - self.last().since_capture
    }

    /// How many times the current position (with the same side to move) has occurred since the
    /// last capture, this time included.
    #[must_use]
    pub fn repetitions(&self) -> usize {
        let last = self.last();
        let hash = last.position.hash();
        self.plies[last.since_capture..].iter().rev().step_by(2).filter(|p| p.position.hash() == hash).count()
    }

    /// Whether a move from here may end the game by repetition: a position with the other side
    /// to move has occurred twice since the last capture, so reaching it again would be its third
    /// time. No move is played; searches use it to know when such moves are worth looking for.
    #[must_use]
    pub fn a_move_may_repeat_thrice(&self) -> bool {
        if self.position().variant().rules().repetition == Repetition::Off {
            return false;
        }
        let last = self.last();
        let mut hashes: Vec<u64> =
            self.plies[last.since_capture..].iter().rev().skip(1).step_by(2).map(|p| p.position.hash()).collect();
        hashes.sort_unstable();
        hashes.windows(2).any(|w| w[0] == w[1])
    }

    /// Legal moves; none once the game is over.
    #[must_use]
    pub fn legal_moves(&self) -> MoveList {
        if self.outcome().is_over() { MoveList::new() } else { self.position().legal_moves() }
    }

    /// Plays a checked move; the game is untouched on error.
    pub fn play(&mut self, m: Move) -> Result<Played, PlayError> {
        if self.outcome().is_over() {
            return Err(PlayError::GameOver);
        }
        self.position().check_move(m)?;
        Ok(self.play_unchecked(m))
    }

    /// Plays a move that must be legal in an ongoing game (as from `legal_moves`).
    pub fn play_unchecked(&mut self, m: Move) -> Played {
        let mover = self.position().side_to_move();
        let mut position = *self.position();
        let played = position.play_unchecked(m);
        let since_capture = if played.captured.is_empty() { self.last().since_capture } else { self.plies.len() };
        self.plies.push(Ply { position, since_capture, outcome: Outcome::Ongoing });
        self.moves.push(m);
        let outcome = if played.king_captured {
            Outcome::Decided { winner: Side::Attackers, reason: Reason::KingCaptured }
        } else {
            judge(&position, mover, self.repetitions(), self.plies_since_capture())
        };
        let len = self.plies.len();
        self.plies[len - 1].outcome = outcome;
        played
    }

    /// Takes back the last move; returns it, or `None` at the start.
    pub fn undo(&mut self) -> Option<Move> {
        let m = self.moves.pop()?;
        self.plies.pop();
        Some(m)
    }
}

/// The outcome after `mover` moved into `position`, given the repetition count of the position
/// and the plies since the last capture. The king capture is judged by the caller, which knows
/// whether the move completed it.
fn judge(position: &Position, mover: Side, repetitions: usize, quiet_plies: usize) -> Outcome {
    let rules = position.variant().rules();
    let win = |winner, reason| Outcome::Decided { winner, reason };
    match mover {
        Side::Defenders if position.king_escaped() => return win(Side::Defenders, Reason::KingEscaped),
        Side::Defenders if rules.exit_fort && position.exit_fort() => return win(Side::Defenders, Reason::ExitFort),
        Side::Attackers if rules.encirclement && position.encircled() => {
            return win(Side::Attackers, Reason::Encirclement);
        }
        _ => {}
    }
    if repetitions >= 3 {
        match rules.repetition {
            Repetition::DefendersLose => return win(Side::Attackers, Reason::Repetition),
            Repetition::Draw => return Outcome::Draw { reason: Reason::Repetition },
            Repetition::Off => {}
        }
    }
    if !position.has_legal_moves() {
        return match rules.no_moves {
            NoMoves::Lose => win(mover, Reason::NoMoves),
            NoMoves::Draw => Outcome::Draw { reason: Reason::NoMoves },
        };
    }
    match rules.move_limit {
        Some(limit) if quiet_plies >= 2 * limit as usize => Outcome::Draw { reason: Reason::MoveLimit },
        _ => Outcome::Ongoing,
    }
}

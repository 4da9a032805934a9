//! Replaying recorded games: legality of every ply, recorded captures against the real ones,
//! and the outcome the rules give.

use serde::Serialize;

use crate::game::{Game, Outcome};
use crate::notation::RecordedPly;
use crate::position::Position;
use crate::square::{Side, Square};

/// The outcome of a replayed game and the ply at which the rules decided it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReplayOutcome {
    /// `attackers`, `defenders`, or `null` for a draw.
    pub winner: Option<Side>,
    /// Why it ended (kebab-case reason).
    pub reason: String,
    /// Plies played when it ended (0: the start position was already decided).
    pub ply: usize,
}

/// A ply whose recorded captures differ from the real ones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CaptureMismatch {
    /// 1-based ply.
    pub ply: usize,
    /// The ply as written.
    #[serde(rename = "move")]
    pub text: String,
    /// Captures the record lists (as a set, sorted).
    pub recorded: Vec<String>,
    /// Captures the rules make.
    pub actual: Vec<String>,
}

/// What replaying one game found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReplayReport {
    /// 1-based game number.
    pub game: usize,
    /// Plies applied (all of them when every ply was legal).
    pub plies: usize,
    /// Every ply was legal.
    pub legal: bool,
    /// The first illegal ply: its number, the move and why.
    pub error: Option<String>,
    /// The soldiers each applied ply captured.
    pub captures: Vec<Vec<String>>,
    /// Plies whose recorded captures differ.
    pub capture_mismatches: Vec<CaptureMismatch>,
    /// The outcome by the rules, `null` while undecided.
    pub outcome: Option<ReplayOutcome>,
    /// The rules ended the game before its record did.
    pub ended_early: bool,
    /// Legal moves of the side to move in the final position.
    pub legal_moves_after: u32,
    /// The position after the last applied ply.
    pub final_fen: String,
}

impl ReplayReport {
    /// Every ply legal and every recorded capture matched.
    #[must_use]
    pub fn ok(&self) -> bool {
        self.legal && self.capture_mismatches.is_empty()
    }
}

/// Replays `plies` from `start`. With `captures_always_recorded` (the archive format), a ply
/// without a capture list means "captured nothing"; otherwise only written lists are checked.
/// Once the rules end the game, later plies are still checked for legality on the board.
#[must_use]
pub fn replay(
    game_number: usize,
    start: Position,
    plies: &[RecordedPly],
    captures_always_recorded: bool,
) -> ReplayReport {
    let mut game = Game::from_position(start);
    let mut position = start;
    let mut report = ReplayReport {
        game: game_number,
        plies: 0,
        legal: true,
        error: None,
        captures: Vec::new(),
        capture_mismatches: Vec::new(),
        outcome: outcome_at(game.outcome(), 0),
        ended_early: false,
        legal_moves_after: 0,
        final_fen: String::new(),
    };
    for (i, ply) in plies.iter().enumerate() {
        let played = match position.play(ply.mv.mv) {
            Ok(p) => p,
            Err(e) => {
                report.legal = false;
                report.error = Some(format!("ply {} ({}): {e}", i + 1, ply.text));
                break;
            }
        };
        if report.outcome.is_none() {
            game.play_unchecked(ply.mv.mv);
            report.outcome = outcome_at(game.outcome(), i + 1);
        } else {
            report.ended_early = true;
        }
        report.plies = i + 1;
        let actual = names(played.captured.iter().copied());
        let recorded = match &ply.mv.captures {
            Some(list) => Some(names(list.iter().copied())),
            None if captures_always_recorded => Some(Vec::new()),
            None => None,
        };
        if let Some(recorded) = recorded.filter(|r| *r != actual) {
            report.capture_mismatches.push(CaptureMismatch {
                ply: i + 1,
                text: ply.text.clone(),
                recorded,
                actual: actual.clone(),
            });
        }
        report.captures.push(actual);
    }
    report.legal_moves_after = position.count_legal_moves();
    report.final_fen = position.to_fen();
    report
}

/// Sorted, de-duplicated square names (records sometimes list a square twice).
fn names(squares: impl Iterator<Item = Square>) -> Vec<String> {
    let mut v: Vec<Square> = squares.collect();
    v.sort();
    v.dedup();
    v.into_iter().map(|s| s.to_string()).collect()
}

fn outcome_at(outcome: Outcome, ply: usize) -> Option<ReplayOutcome> {
    let reason = outcome.reason()?;
    Some(ReplayOutcome { winner: outcome.winner(), reason: reason.name().to_string(), ply })
}

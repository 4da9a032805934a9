//! Move ordering: the transposition-table move, captures, killers, then the history heuristic.

use arrayvec::ArrayVec;
use tafl_rules::{MAX_MOVES, Move, MoveList, Side, Square};

use super::eval::Snapshot;

/// Plies the killer table covers (the search never goes deeper).
pub(crate) const MAX_PLY: usize = 96;

const TT_MOVE: i32 = 1 << 30;
const CAPTURE: i32 = 1 << 28;
const KILLER: i32 = 1 << 26;
/// History scores are kept below the killer band.
const HISTORY_MAX: i32 = 1 << 24;

#[inline]
fn packed(sq: Square) -> usize {
    (sq.rank() as usize) << 4 | sq.file() as usize
}

/// Killer moves per ply and the history table, kept for a whole game.
pub(crate) struct Heuristics {
    killers: Box<[[Option<Move>; 2]; MAX_PLY]>,
    /// Indexed by side, from square and to square (packed as `rank << 4 | file`).
    history: Vec<i32>,
}

impl Heuristics {
    pub fn new() -> Heuristics {
        Heuristics { killers: Box::new([[None; 2]; MAX_PLY]), history: vec![0; 2 * 256 * 256] }
    }

    /// Forgets everything (a new game).
    pub fn clear(&mut self) {
        self.killers.fill([None; 2]);
        self.history.fill(0);
    }

    /// Between moves: old killers no longer fit their plies, and history fades.
    pub fn age(&mut self) {
        self.killers.fill([None; 2]);
        for h in &mut self.history {
            *h /= 8;
        }
    }

    #[inline]
    fn history_index(side: Side, m: Move) -> usize {
        (side as usize) << 16 | packed(m.from) << 8 | packed(m.to)
    }

    /// A quiet move caused a beta cutoff at `ply` with `depth` left.
    pub fn reward(&mut self, side: Side, m: Move, ply: usize, depth: i32) {
        let k = &mut self.killers[ply];
        if k[0] != Some(m) {
            k[1] = k[0];
            k[0] = Some(m);
        }
        let h = &mut self.history[Self::history_index(side, m)];
        *h += depth * depth;
        if *h > HISTORY_MAX {
            for h in &mut self.history {
                *h /= 2;
            }
        }
    }

    /// The killers at `ply`.
    pub fn is_killer(&self, m: Move, ply: usize) -> bool {
        self.killers[ply].contains(&Some(m))
    }
}

/// A move with its ordering score and whether it is a capture.
#[derive(Clone, Copy)]
pub(crate) struct Scored {
    pub mv: Move,
    pub score: i32,
    pub capture: bool,
    pub killer: bool,
    pub king: bool,
}

/// The moves of a node, handed out best first by selection.
pub(crate) struct Picker {
    moves: ArrayVec<Scored, MAX_MOVES>,
    next: usize,
}

impl Picker {
    pub fn new(
        moves: &MoveList,
        snap: &Snapshot<'_>,
        heur: &Heuristics,
        side: Side,
        tt_move: Option<Move>,
        ply: usize,
    ) -> Picker {
        let mut scored = ArrayVec::new();
        let captures = snap.capture_squares();
        for &mv in moves {
            let captured = captures.at(mv.to);
            let killer = heur.is_killer(mv, ply);
            let score = if Some(mv) == tt_move {
                TT_MOVE
            } else if captured > 0 {
                CAPTURE + captured as i32
            } else if killer {
                KILLER
            } else {
                heur.history[Heuristics::history_index(side, mv)]
            };
            scored.push(Scored { mv, score, capture: captured > 0, killer, king: snap.is_king_move(mv) });
        }
        Picker { moves: scored, next: 0 }
    }

    /// The best move not yet handed out. Ties keep generation order, so the order is
    /// deterministic.
    pub fn next(&mut self) -> Option<Scored> {
        let rest = &mut self.moves[self.next..];
        if rest.is_empty() {
            return None;
        }
        let mut best = 0;
        for i in 1..rest.len() {
            if rest[i].score > rest[best].score {
                best = i;
            }
        }
        // Shift rather than swap, to keep the rest in generation order.
        rest[..=best].rotate_right(1);
        self.next += 1;
        Some(rest[0])
    }
}

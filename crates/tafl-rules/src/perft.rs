//! Perft: counting move sequences, to check move generation and measure its speed.
//!
//! A position where the game is over has no moves: a king capture, an escape, an exit fort or an
//! encirclement ends the line. Repetition and the move limit need the game history and are
//! ignored here.

use crate::bitboard::Bits;
use crate::board::{Board, MoveList};
use crate::geometry::Geometry;
use crate::square::Side;

/// Counts the leaves `depth` plies below `board`. With `bulk`, the last ply is counted from the
/// move generator without making the moves.
pub(crate) fn perft<B: Bits>(board: &Board<B>, g: &Geometry<B>, depth: u32, bulk: bool) -> u64 {
    if depth == 0 {
        return 1;
    }
    if depth == 1 && bulk {
        return board.count_moves(g) as u64;
    }
    let mut moves = MoveList::new();
    board.generate(g, &mut moves);
    let size = g.size;
    let mut total = 0;
    for m in &moves {
        let mut child = *board;
        let effects = child.play(g, m.from.index(size), m.to.index(size));
        if depth == 1 {
            total += 1;
        } else if !effects.king_captured && !game_over(&child, g) {
            total += perft(&child, g, depth - 1, bulk);
        }
    }
    total
}

/// The wins that depend on the position alone, checked only for the side that just moved.
fn game_over<B: Bits>(board: &Board<B>, g: &Geometry<B>) -> bool {
    match board.side.opponent() {
        Side::Defenders => board.king_escaped(g) || (g.rules.exit_fort && board.exit_fort(g)),
        Side::Attackers => g.rules.encirclement && board.encircled(g),
    }
}

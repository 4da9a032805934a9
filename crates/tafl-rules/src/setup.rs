//! `Setup`: a plain, possibly illegal arrangement of pieces. It becomes a `Position` only through
//! `Position::from_setup`, which checks it against its variant (`Setup::check`, in
//! [`crate::variant`]).

use crate::square::{Piece, Side, Square};

/// Pieces on a board plus the side to move, unchecked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    /// Board side length.
    pub size: u8,
    /// `size * size` squares, index `rank * size + file`.
    pub board: Vec<Option<Piece>>,
    /// Who moves next.
    pub side_to_move: Side,
}

/// Why a setup is not a playable position.
#[derive(Debug, thiserror::Error, PartialEq, Eq, Clone)]
pub enum SetupError {
    /// The board has the wrong size for the variant.
    #[error("the board is {found}x{found} but the variant is {expected}x{expected}")]
    Size {
        /// The variant's size.
        expected: u8,
        /// The setup's size.
        found: u8,
    },
    /// More than one king.
    #[error("two kings, on {0} and {1}")]
    TwoKings(Square, Square),
    /// A soldier on the throne or a corner.
    #[error("a soldier on the restricted square {0} (only the king may stand there)")]
    SoldierOnRestricted(Square),
}

impl Setup {
    /// An empty board.
    #[must_use]
    pub fn empty(size: u8, side_to_move: Side) -> Setup {
        Setup { size, board: vec![None; size as usize * size as usize], side_to_move }
    }

    /// The piece on `sq`, if any (`None` off the board too).
    #[must_use]
    pub fn get(&self, sq: Square) -> Option<Piece> {
        if sq.on_board(self.size) { self.board[sq.index(self.size) as usize] } else { None }
    }

    /// Puts `piece` on `sq` (which must be on the board).
    pub fn set(&mut self, sq: Square, piece: Option<Piece>) {
        let i = sq.index(self.size) as usize;
        self.board[i] = piece;
    }

    /// Every occupied square with its piece, rank 1 first.
    pub fn pieces(&self) -> impl Iterator<Item = (Square, Piece)> + '_ {
        self.board.iter().enumerate().filter_map(|(i, p)| p.map(|p| (Square::from_index(i as u32, self.size), p)))
    }
}

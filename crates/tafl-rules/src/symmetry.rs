//! The eight symmetries of the square board (the dihedral group), for positions and moves.

use crate::position::Position;
use crate::setup::Setup;
use crate::square::{Move, Square};

/// One of the eight board symmetries: 0 identity, 1..=3 rotations by 90°, 180°, 270°
/// (anticlockwise), 4 mirror files (left-right), 5 mirror ranks (top-bottom), 6 transpose
/// (a1-k11 diagonal), 7 anti-transpose.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Symmetry(u8);

impl Symmetry {
    /// All eight.
    pub const ALL: [Symmetry; 8] =
        [Symmetry(0), Symmetry(1), Symmetry(2), Symmetry(3), Symmetry(4), Symmetry(5), Symmetry(6), Symmetry(7)];
    /// The identity.
    pub const IDENTITY: Symmetry = Symmetry(0);

    /// The symmetry with this number (taken modulo 8).
    #[must_use]
    pub const fn new(n: u8) -> Symmetry {
        Symmetry(n % 8)
    }
    /// Its number, 0..8.
    #[must_use]
    pub const fn index(self) -> u8 {
        self.0
    }
    /// The symmetry that undoes this one.
    #[must_use]
    pub const fn inverse(self) -> Symmetry {
        match self.0 {
            1 => Symmetry(3),
            3 => Symmetry(1),
            n => Symmetry(n),
        }
    }

    /// Where `sq` goes on a board of side `size`.
    #[must_use]
    pub const fn square(self, sq: Square, size: u8) -> Square {
        let m = size - 1;
        let (f, r) = (sq.file(), sq.rank());
        let (nf, nr) = match self.0 {
            0 => (f, r),
            1 => (m - r, f),
            2 => (m - f, m - r),
            3 => (r, m - f),
            4 => (m - f, r),
            5 => (f, m - r),
            6 => (r, f),
            _ => (m - r, m - f),
        };
        Square::new(nf, nr)
    }

    /// Where a move goes.
    #[must_use]
    pub const fn apply_move(self, m: Move, size: u8) -> Move {
        Move::new(self.square(m.from, size), self.square(m.to, size))
    }

    /// The transformed setup.
    #[must_use]
    pub fn setup(self, setup: &Setup) -> Setup {
        let mut out = Setup::empty(setup.size, setup.side_to_move);
        for (sq, piece) in setup.pieces() {
            out.set(self.square(sq, setup.size), Some(piece));
        }
        out
    }

    /// The transformed position. Every variant's layout of restricted squares is symmetric, so
    /// the result is always valid.
    #[must_use]
    pub fn position(self, position: &Position) -> Position {
        let setup = self.setup(&position.to_setup());
        Position::from_setup(position.variant(), &setup)
            .unwrap_or_else(|e| unreachable!("the restricted squares are symmetric: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_undoes_every_symmetry() {
        for s in Symmetry::ALL {
            for f in 0..11 {
                for r in 0..11 {
                    let sq = Square::new(f, r);
                    assert_eq!(s.inverse().square(s.square(sq, 11), 11), sq, "{s:?}");
                }
            }
        }
    }

    #[test]
    fn symmetries_are_distinct() {
        let probe = Square::new(1, 3);
        let images: std::collections::HashSet<_> = Symmetry::ALL.iter().map(|s| s.square(probe, 11)).collect();
        assert_eq!(images.len(), 8);
    }
}

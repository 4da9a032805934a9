//! Squares, sides, pieces and moves: the small `Copy` vocabulary of the game.

use std::fmt;

/// The largest board side the engine supports (15x15 = 225 squares fits 256 bits).
pub const MAX_SIZE: u8 = 15;

/// A square given by file and rank, independent of the board size.
///
/// Packed as `file | rank << 4`; `a1` (file 0, rank 0) is the bottom-left corner.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Square(u8);

impl Square {
    /// The square on `file` (0 = a) and `rank` (0 = rank 1). Both must be below 16.
    #[inline]
    #[must_use]
    pub const fn new(file: u8, rank: u8) -> Square {
        Square((file & 15) | (rank << 4))
    }
    /// File index, 0 for `a`.
    #[inline]
    #[must_use]
    pub const fn file(self) -> u8 {
        self.0 & 15
    }
    /// Rank index, 0 for rank 1.
    #[inline]
    #[must_use]
    pub const fn rank(self) -> u8 {
        self.0 >> 4
    }
    /// Bit index on a board of side `size`.
    #[inline]
    #[must_use]
    pub const fn index(self, size: u8) -> u32 {
        self.rank() as u32 * size as u32 + self.file() as u32
    }
    /// The square of bit index `index` on a board of side `size`.
    #[inline]
    #[must_use]
    pub const fn from_index(index: u32, size: u8) -> Square {
        Square::new((index % size as u32) as u8, (index / size as u32) as u8)
    }
    /// True when the square lies on a board of side `size`.
    #[inline]
    #[must_use]
    pub const fn on_board(self, size: u8) -> bool {
        self.file() < size && self.rank() < size
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", (b'a' + self.file()) as char, self.rank() + 1)
    }
}

impl fmt::Debug for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// One of the two players.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Side {
    /// The besiegers (black); they move first.
    Attackers,
    /// The king's side (white).
    Defenders,
}

impl Side {
    /// The other side.
    #[inline]
    #[must_use]
    pub const fn opponent(self) -> Side {
        match self {
            Side::Attackers => Side::Defenders,
            Side::Defenders => Side::Attackers,
        }
    }
    /// The lowercase name used in JSON and on the command line.
    #[inline]
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Side::Attackers => "attackers",
            Side::Defenders => "defenders",
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A piece on the board.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Piece {
    /// An attacker soldier.
    Attacker,
    /// A defender soldier.
    Defender,
    /// The king (a defender).
    King,
}

impl Piece {
    /// The side the piece belongs to.
    #[inline]
    #[must_use]
    pub const fn side(self) -> Side {
        match self {
            Piece::Attacker => Side::Attackers,
            Piece::Defender | Piece::King => Side::Defenders,
        }
    }
}

/// A move: a piece slides from one square to another along a rank or file.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Move {
    /// Where the piece stands.
    pub from: Square,
    /// Where it stops.
    pub to: Square,
}

impl Move {
    /// A move from `from` to `to`.
    #[inline]
    #[must_use]
    pub const fn new(from: Square, to: Square) -> Move {
        Move { from, to }
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.from, self.to)
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The four directions a piece can slide in.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Direction {
    /// Towards higher ranks.
    North = 0,
    /// Towards higher files.
    East = 1,
    /// Towards lower ranks.
    South = 2,
    /// Towards lower files.
    West = 3,
}

impl Direction {
    /// All four, in the order move generation uses.
    pub const ALL: [Direction; 4] = [Direction::North, Direction::East, Direction::South, Direction::West];
    /// File and rank step.
    #[inline]
    #[must_use]
    pub const fn step(self) -> (i8, i8) {
        match self {
            Direction::North => (0, 1),
            Direction::East => (1, 0),
            Direction::South => (0, -1),
            Direction::West => (-1, 0),
        }
    }
}

impl Move {
    /// The direction and distance of a move along a line, or `None` when from and to are not on
    /// one rank or file (or are equal).
    #[must_use]
    pub fn direction_and_distance(self) -> Option<(Direction, u8)> {
        let (ff, fr, tf, tr) = (self.from.file(), self.from.rank(), self.to.file(), self.to.rank());
        match (ff == tf, fr == tr) {
            (true, false) if tr > fr => Some((Direction::North, tr - fr)),
            (true, false) => Some((Direction::South, fr - tr)),
            (false, true) if tf > ff => Some((Direction::East, tf - ff)),
            (false, true) => Some((Direction::West, ff - tf)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_coordinates_round_trip() {
        let s = Square::new(10, 10);
        assert_eq!(s.to_string(), "k11");
        assert_eq!(s.index(11), 120);
        assert_eq!(Square::from_index(120, 11), s);
        assert_eq!(Square::new(0, 0).to_string(), "a1");
    }

    #[test]
    fn direction_of_moves() {
        let m = Move::new(Square::new(0, 3), Square::new(3, 3));
        assert_eq!(m.direction_and_distance(), Some((Direction::East, 3)));
        let d = Move::new(Square::new(0, 3), Square::new(3, 4));
        assert_eq!(d.direction_and_distance(), None);
    }
}

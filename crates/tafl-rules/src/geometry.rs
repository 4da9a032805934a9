//! Per-variant masks and tables, computed once when a variant is built.

use crate::bitboard::{Bits, U256};
use crate::rules::{Escape, Rules};
use crate::square::Square;

/// The board geometry and rules of a variant, for one bit-set width.
#[derive(Debug)]
pub(crate) struct Geometry<B> {
    pub size: u8,
    /// Squares per rank: the shift for one step north or south.
    pub n: u32,
    pub all: B,
    /// Everything but file a: where an eastward shift may land.
    pub not_first_file: B,
    /// Everything but the last file: where a westward shift may land.
    pub not_last_file: B,
    pub first_or_last_file: B,
    pub first_or_last_rank: B,
    pub edge: B,
    /// The corner squares when corners are special (corner escape), else empty.
    pub corners: B,
    pub throne: B,
    /// Only the king may stop here.
    pub restricted: B,
    /// Soldiers may neither stop on nor pass these: corners (line ends) and an impassable throne.
    pub soldier_blocked: B,
    /// Where the king wins by arriving.
    pub escape: B,
    /// Squares that act as an anvil against attackers.
    pub hostile_to_attackers: B,
    /// Index to square.
    pub square: [Square; 256],
    pub rules: Rules,
}

/// The geometry of a variant, at the bit width its board needs.
#[derive(Debug)]
pub(crate) enum Engine {
    /// Boards up to 11x11.
    Small(Geometry<u128>),
    /// Boards from 13x13 up.
    Large(Geometry<U256>),
}

impl<B: Bits> Geometry<B> {
    pub fn new(size: u8, rules: Rules) -> Geometry<B> {
        let n = size as u32;
        let last = size - 1;
        let mut g = Geometry {
            size,
            n,
            all: B::ZERO,
            not_first_file: B::ZERO,
            not_last_file: B::ZERO,
            first_or_last_file: B::ZERO,
            first_or_last_rank: B::ZERO,
            edge: B::ZERO,
            corners: B::ZERO,
            throne: B::bit(Square::new(size / 2, size / 2).index(size)),
            restricted: B::ZERO,
            soldier_blocked: B::ZERO,
            escape: B::ZERO,
            hostile_to_attackers: B::ZERO,
            square: [Square::default(); 256],
            rules,
        };
        for i in 0..n * n {
            let sq = Square::from_index(i, size);
            let b = B::bit(i);
            g.square[i as usize] = sq;
            g.all |= b;
            let (f, r) = (sq.file(), sq.rank());
            if f != 0 {
                g.not_first_file |= b;
            }
            if f != last {
                g.not_last_file |= b;
            }
            if f == 0 || f == last {
                g.first_or_last_file |= b;
            }
            if r == 0 || r == last {
                g.first_or_last_rank |= b;
            }
        }
        g.edge = g.first_or_last_file | g.first_or_last_rank;
        if rules.escape == Escape::Corner {
            g.corners = g.first_or_last_file & g.first_or_last_rank;
            g.escape = g.corners;
        } else {
            g.escape = g.edge;
        }
        g.restricted = g.corners | g.throne;
        g.soldier_blocked = g.corners | if rules.throne_passable { B::ZERO } else { g.throne };
        g.hostile_to_attackers = g.corners | if rules.throne_hostile_to_attackers { g.throne } else { B::ZERO };
        g
    }

    #[inline(always)]
    pub fn north(&self, b: B) -> B {
        (b << self.n) & self.all
    }
    #[inline(always)]
    pub fn south(&self, b: B) -> B {
        b >> self.n
    }
    #[inline(always)]
    pub fn east(&self, b: B) -> B {
        (b << 1) & self.not_first_file
    }
    #[inline(always)]
    pub fn west(&self, b: B) -> B {
        (b >> 1) & self.not_last_file
    }
    /// One step in direction `dir` (0 north, 1 east, 2 south, 3 west).
    #[inline(always)]
    pub fn shift(&self, b: B, dir: usize) -> B {
        match dir {
            0 => self.north(b),
            1 => self.east(b),
            2 => self.south(b),
            _ => self.west(b),
        }
    }
    /// The index step of direction `dir`.
    #[inline(always)]
    pub fn delta(&self, dir: usize) -> i32 {
        match dir {
            0 => self.n as i32,
            1 => 1,
            2 => -(self.n as i32),
            _ => -1,
        }
    }
    /// The orthogonal neighbours of every member of `b`.
    #[inline(always)]
    pub fn neighbours(&self, b: B) -> B {
        self.north(b) | self.south(b) | self.east(b) | self.west(b)
    }
    /// The square one step from `index` in `dir`, or `None` off the board.
    #[inline(always)]
    pub fn step(&self, index: u32, dir: usize) -> Option<u32> {
        let s = self.shift(B::bit(index), dir);
        (!s.is_empty()).then(|| s.lowest())
    }
}

//! Bit sets over the squares of a board.
//!
//! Squares are numbered `rank * size + file` with no padding, so boards up to 11x11 (121 squares)
//! fit a `u128`, the fast path; larger boards (up to 15x15, 225 squares) use [`U256`]. The rules
//! code is generic over [`Bits`] and compiled once for each width.

use std::fmt::Debug;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not, Shl, Shr};

/// A set of square indices, implemented by `u128` and [`U256`].
pub trait Bits:
    Copy
    + Eq
    + Debug
    + Default
    + Send
    + Sync
    + 'static
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Not<Output = Self>
    + Shl<u32, Output = Self>
    + Shr<u32, Output = Self>
    + BitAndAssign
    + BitOrAssign
    + BitXorAssign
{
    /// The empty set.
    const ZERO: Self;
    /// The set holding only `index`.
    fn bit(index: u32) -> Self;
    /// Number of members.
    fn count(self) -> u32;
    /// The smallest member; only meaningful for a non-empty set.
    fn lowest(self) -> u32;
    /// True when the set has no member.
    #[inline]
    fn is_empty(self) -> bool {
        self == Self::ZERO
    }
    /// True when `index` is a member.
    #[inline]
    fn has(self, index: u32) -> bool {
        !(self & Self::bit(index)).is_empty()
    }
    /// Removes and returns the smallest member, or `None` when empty.
    #[inline]
    fn pop(&mut self) -> Option<u32> {
        if self.is_empty() {
            return None;
        }
        let i = self.lowest();
        *self ^= Self::bit(i);
        Some(i)
    }
}

impl Bits for u128 {
    const ZERO: Self = 0;
    #[inline(always)]
    fn bit(index: u32) -> Self {
        1u128 << index
    }
    #[inline(always)]
    fn count(self) -> u32 {
        self.count_ones()
    }
    #[inline(always)]
    fn lowest(self) -> u32 {
        self.trailing_zeros()
    }
    #[inline(always)]
    fn pop(&mut self) -> Option<u32> {
        if *self == 0 {
            return None;
        }
        let i = self.trailing_zeros();
        *self &= *self - 1;
        Some(i)
    }
}

/// A 256-bit set for boards larger than 11x11.
#[derive(Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct U256 {
    lo: u128,
    hi: u128,
}

impl Debug for U256 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "U256({:#x}, {:#x})", self.hi, self.lo)
    }
}

impl Bits for U256 {
    const ZERO: Self = U256 { lo: 0, hi: 0 };
    #[inline]
    fn bit(index: u32) -> Self {
        if index < 128 { U256 { lo: 1 << index, hi: 0 } } else { U256 { lo: 0, hi: 1 << (index - 128) } }
    }
    #[inline]
    fn count(self) -> u32 {
        self.lo.count_ones() + self.hi.count_ones()
    }
    #[inline]
    fn lowest(self) -> u32 {
        if self.lo != 0 { self.lo.trailing_zeros() } else { 128 + self.hi.trailing_zeros() }
    }
}

macro_rules! u256_binop {
    ($trait:ident, $f:ident, $assign:ident, $fa:ident, $op:tt) => {
        impl $trait for U256 {
            type Output = U256;
            #[inline]
            fn $f(self, o: U256) -> U256 {
                U256 { lo: self.lo $op o.lo, hi: self.hi $op o.hi }
            }
        }
        impl $assign for U256 {
            #[inline]
            fn $fa(&mut self, o: U256) {
                *self = *self $op o;
            }
        }
    };
}
u256_binop!(BitAnd, bitand, BitAndAssign, bitand_assign, &);
u256_binop!(BitOr, bitor, BitOrAssign, bitor_assign, |);
u256_binop!(BitXor, bitxor, BitXorAssign, bitxor_assign, ^);

impl Not for U256 {
    type Output = U256;
    #[inline]
    fn not(self) -> U256 {
        U256 { lo: !self.lo, hi: !self.hi }
    }
}

impl Shl<u32> for U256 {
    type Output = U256;
    #[inline]
    fn shl(self, n: u32) -> U256 {
        match n {
            0 => self,
            1..=127 => U256 { lo: self.lo << n, hi: (self.hi << n) | (self.lo >> (128 - n)) },
            128..=255 => U256 { lo: 0, hi: self.lo << (n - 128) },
            _ => U256::ZERO,
        }
    }
}

impl Shr<u32> for U256 {
    type Output = U256;
    #[inline]
    fn shr(self, n: u32) -> U256 {
        match n {
            0 => self,
            1..=127 => U256 { lo: (self.lo >> n) | (self.hi << (128 - n)), hi: self.hi >> n },
            128..=255 => U256 { lo: self.hi >> (n - 128), hi: 0 },
            _ => U256::ZERO,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn u256_shifts_cross_the_halves() {
        let b = U256::bit(127);
        assert_eq!(b << 1, U256::bit(128));
        assert_eq!(U256::bit(128) >> 1, U256::bit(127));
        assert_eq!(U256::bit(3) << 200, U256::bit(203));
        assert_eq!(U256::bit(203) >> 200, U256::bit(3));
        assert_eq!((U256::bit(5) | U256::bit(130)).count(), 2);
        assert_eq!((U256::bit(130)).lowest(), 130);
    }

    #[test]
    fn pop_yields_members_in_order() {
        let mut s = U256::bit(200) | U256::bit(4) | U256::bit(128);
        let mut seen = vec![];
        while let Some(i) = s.pop() {
            seen.push(i);
        }
        assert_eq!(seen, vec![4, 128, 200]);
        let mut t: u128 = (1 << 120) | 1;
        assert_eq!(t.pop(), Some(0));
        assert_eq!(t.pop(), Some(120));
        assert_eq!(t.pop(), None);
    }
}

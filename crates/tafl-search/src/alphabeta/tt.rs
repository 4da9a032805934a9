//! A fixed-size transposition table keyed by the position's Zobrist hash.

use tafl_rules::{Move, Square};

use super::eval::Score;

/// What a stored score says about the true value.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub(crate) enum Bound {
    /// Nothing stored.
    #[default]
    None,
    /// The true value.
    Exact,
    /// The true value is at least this (a beta cutoff).
    Lower,
    /// The true value is at most this (no move raised alpha).
    Upper,
}

/// A stored result.
#[derive(Clone, Copy)]
pub(crate) struct Entry {
    /// The best move found, if any (`from == to` means none).
    pub mv: Move,
    pub score: i16,
    pub depth: u8,
    pub bound: Bound,
}

impl Entry {
    /// The stored move, if there is one.
    pub fn best_move(&self) -> Option<Move> {
        (self.mv.from != self.mv.to).then_some(self.mv)
    }
}

fn pack_square(sq: Square) -> u64 {
    u64::from(sq.rank()) << 4 | u64::from(sq.file())
}

fn unpack_square(bits: u64) -> Square {
    Square::new((bits & 15) as u8, (bits >> 4 & 15) as u8)
}

fn bound_bits(b: Bound) -> u64 {
    match b {
        Bound::None => 0,
        Bound::Exact => 1,
        Bound::Lower => 2,
        Bound::Upper => 3,
    }
}

/// Packs everything but the key into one word: from (8 bits), to (8), score (16), depth (8),
/// bound (8), age (8). An all-zero word is an empty slot.
fn pack(e: Entry, age: u8) -> u64 {
    pack_square(e.mv.from)
        | pack_square(e.mv.to) << 8
        | u64::from(e.score as u16) << 16
        | u64::from(e.depth) << 32
        | bound_bits(e.bound) << 40
        | u64::from(age) << 48
}

fn unpack(w: u64) -> (Entry, u8) {
    let bound = match w >> 40 & 0xff {
        1 => Bound::Exact,
        2 => Bound::Lower,
        3 => Bound::Upper,
        _ => Bound::None,
    };
    let mv = Move::new(unpack_square(w & 0xff), unpack_square(w >> 8 & 0xff));
    (
        Entry { mv, score: (w >> 16 & 0xffff) as u16 as i16, depth: (w >> 32 & 0xff) as u8, bound },
        (w >> 48 & 0xff) as u8,
    )
}

/// A power-of-two array of slots (key and packed entry: 16 bytes), one entry per index,
/// replaced by depth within a search and always by a newer search. The slots are zeroed
/// memory, so a large table costs nothing until it is used.
pub(crate) struct Table {
    slots: Vec<[u64; 2]>,
    mask: usize,
    age: u8,
}

impl Table {
    /// A table of at most `bytes` bytes (at least one slot).
    pub fn new(bytes: usize) -> Table {
        let wanted = (bytes / 16).max(1);
        let len = if wanted.is_power_of_two() { wanted } else { wanted.next_power_of_two() / 2 };
        Table { slots: vec![[0; 2]; len], mask: len - 1, age: 0 }
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.slots.fill([0; 2]);
        self.age = 0;
    }

    /// Marks the start of a new search: entries from earlier searches become replaceable.
    pub fn next_age(&mut self) {
        // Age 0 is kept for "never written" so that an empty slot is all zeros.
        self.age = self.age.wrapping_add(1).max(1);
    }

    /// The entry for `key`, if stored.
    pub fn probe(&self, key: u64) -> Option<Entry> {
        let [k, w] = self.slots[key as usize & self.mask];
        let (e, _) = unpack(w);
        (k == key && e.bound != Bound::None).then_some(e)
    }

    /// Stores a result. A move-less result keeps the move already stored for the same key.
    pub fn store(&mut self, key: u64, depth: u8, score: Score, bound: Bound, mv: Option<Move>) {
        let slot = &mut self.slots[key as usize & self.mask];
        let (old, old_age) = unpack(slot[1]);
        let same = slot[0] == key;
        if !same && old_age == self.age && old.bound != Bound::None && depth < old.depth {
            return;
        }
        let mv = match mv {
            Some(m) => m,
            None if same => old.mv,
            None => Move::default(),
        };
        let entry = Entry { mv, score: score.clamp(-32_000, 32_000) as i16, depth, bound };
        *slot = [key, pack(entry, self.age)];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip() {
        let mut t = Table::new(1 << 10);
        t.next_age();
        let m = Move::new(Square::new(3, 10), Square::new(3, 2));
        t.store(0xabc, 7, -29_950, Bound::Lower, Some(m));
        let e = t.probe(0xabc).expect("stored");
        assert_eq!((e.mv, e.score, e.depth, e.bound), (m, -29_950, 7, Bound::Lower));
        assert!(t.probe(0xabd).is_none());
        t.store(0xabc, 8, 12, Bound::Upper, None);
        let e = t.probe(0xabc).expect("stored");
        assert_eq!((e.best_move(), e.score, e.depth, e.bound), (Some(m), 12, 8, Bound::Upper));
    }
}

//! Policy indexing: one logit per (from-square, direction, distance).
//!
//! # Layout
//! For a board of `size x size`, a move is a rook move from square `(file, rank)` (both
//! `0..size`, file = column, rank = row) in direction `dir` over `dist` squares
//! (`1..size`). The policy vector has [`policy_len`]`(size) = size² · 4 · (size − 1)` entries:
//!
//! ```text
//! index = from_square · 4(size−1) + dir · (size−1) + (dist − 1)
//! from_square = rank · size + file
//! dir: 0 = north (rank + 1), 1 = east (file + 1), 2 = south (rank − 1), 3 = west (file − 1)
//! ```
//!
//! Entries for moves that would leave the board exist but are never legal; they keep the
//! layout a plain product, so the eight board symmetries permute it exactly.
//! Planes use the same square order: `planes[p][rank][file]`.

/// The four rook directions, as (file step, rank step), indexed by direction number.
pub const DIRECTIONS: [(i32, i32); 4] = [(0, 1), (1, 0), (0, -1), (-1, 0)];

/// Number of policy entries per from-square: 4 directions times `size − 1` distances.
#[must_use]
pub const fn moves_per_square(size: usize) -> usize {
    4 * (size - 1)
}

/// Length of the policy vector for a `size x size` board (4840 for 11x11).
#[must_use]
pub const fn policy_len(size: usize) -> usize {
    size * size * moves_per_square(size)
}

/// Policy index of the move from `(from_file, from_rank)` in direction `dir` over `dist` squares.
///
/// # Panics
/// In debug builds, if a coordinate, `dir` (0..4) or `dist` (1..size) is out of range.
#[must_use]
pub fn policy_index(from_file: usize, from_rank: usize, dir: usize, dist: usize, size: usize) -> usize {
    debug_assert!(from_file < size && from_rank < size, "square off the board");
    debug_assert!(dir < 4, "direction must be 0..4");
    debug_assert!(dist >= 1 && dist < size, "distance must be 1..size");
    let square = from_rank * size + from_file;
    square * moves_per_square(size) + dir * (size - 1) + (dist - 1)
}

/// A move as the policy head sees it: from-square, direction and distance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PolicyMove {
    /// File (column) of the from-square, `0..size`.
    pub file: usize,
    /// Rank (row) of the from-square, `0..size`.
    pub rank: usize,
    /// Direction: 0 = north, 1 = east, 2 = south, 3 = west.
    pub dir: usize,
    /// Distance in squares, `1..size`.
    pub dist: usize,
}

impl PolicyMove {
    /// Policy index of this move on a `size x size` board.
    #[must_use]
    pub fn index(self, size: usize) -> usize {
        policy_index(self.file, self.rank, self.dir, self.dist, size)
    }

    /// The move at policy `index`, or `None` when `index >= policy_len(size)`.
    #[must_use]
    pub fn from_index(index: usize, size: usize) -> Option<Self> {
        if index >= policy_len(size) {
            return None;
        }
        let per_square = moves_per_square(size);
        let (square, within) = (index / per_square, index % per_square);
        Some(Self { file: square % size, rank: square / size, dir: within / (size - 1), dist: within % (size - 1) + 1 })
    }

    /// The destination square `(file, rank)`, or `None` when the move leaves the board.
    #[must_use]
    pub fn destination(self, size: usize) -> Option<(usize, usize)> {
        let (df, dr) = DIRECTIONS[self.dir];
        let dist = i32::try_from(self.dist).ok()?;
        let file = i32::try_from(self.file).ok()? + df * dist;
        let rank = i32::try_from(self.rank).ok()? + dr * dist;
        let on_board = |c: i32| usize::try_from(c).ok().filter(|&c| c < size);
        Some((on_board(file)?, on_board(rank)?))
    }
}

/// Softmax of `logits` restricted to the entries at `indices`, in that order: the priors of
/// the legal moves. Empty when `indices` is.
///
/// # Panics
/// If an index is out of bounds of `logits`.
#[must_use]
pub fn softmax_at(logits: &[f32], indices: &[usize]) -> Vec<f32> {
    let max = indices.iter().map(|&i| logits[i]).fold(f32::NEG_INFINITY, f32::max);
    let exps: Vec<f32> = indices.iter().map(|&i| (logits[i] - max).exp()).collect();
    let sum: f32 = exps.iter().sum();
    exps.into_iter().map(|e| e / sum).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_over_chosen_entries() {
        let logits = [0.0, 1000.0, 2.0_f32.ln(), 0.0];
        let priors = softmax_at(&logits, &[0, 2, 3]);
        assert_eq!(priors.len(), 3);
        assert!((priors[1] - 0.5).abs() < 1e-6 && (priors[0] - 0.25).abs() < 1e-6);
        assert!(softmax_at(&logits, &[]).is_empty());
    }

    #[test]
    fn copenhagen_policy_has_4840_entries() {
        assert_eq!(policy_len(11), 4840);
    }

    #[test]
    fn index_round_trips() {
        for size in [7, 9, 11, 13] {
            for index in 0..policy_len(size) {
                let m = PolicyMove::from_index(index, size).expect("in range");
                assert_eq!(m.index(size), index);
            }
            assert_eq!(PolicyMove::from_index(policy_len(size), size), None);
        }
    }

    #[test]
    fn layout_is_square_major_then_direction_then_distance() {
        assert_eq!(policy_index(0, 0, 0, 1, 11), 0);
        assert_eq!(policy_index(0, 0, 0, 2, 11), 1);
        assert_eq!(policy_index(0, 0, 1, 1, 11), 10);
        assert_eq!(policy_index(1, 0, 0, 1, 11), 40);
        assert_eq!(policy_index(0, 1, 0, 1, 11), 11 * 40);
    }

    #[test]
    fn destinations() {
        let north = PolicyMove { file: 3, rank: 4, dir: 0, dist: 2 };
        assert_eq!(north.destination(11), Some((3, 6)));
        let west = PolicyMove { file: 1, rank: 4, dir: 3, dist: 2 };
        assert_eq!(west.destination(11), None);
    }
}

//! The eight symmetries of the square board (the dihedral group D4), applied to input planes
//! and policy vectors stored as plain arrays.
//!
//! Numbering: 0 identity; 1, 2, 3 rotations by 90°, 180°, 270° counter-clockwise (north turns
//! west under 90°); 4 mirror of files (east ↔ west); 5 mirror of ranks (north ↔ south);
//! 6 transpose (file ↔ rank); 7 anti-transpose.
//!
//! Each symmetry is an integer 2x2 matrix acting on coordinates centred on the middle of the
//! board, so squares and directions transform by the same matrix and can never disagree.
//! Copenhagen's board (throne in the centre, corners) is invariant under all eight.

use crate::policy::{DIRECTIONS, PolicyMove, moves_per_square, policy_len};

/// Number of board symmetries.
pub const SYMMETRY_COUNT: u8 = 8;

/// Row-major 2x2 matrices `[a, b, c, d]`: `x' = a·x + b·y`, `y' = c·x + d·y`,
/// with x along files and y along ranks.
const MATRICES: [[i32; 4]; 8] = [
    [1, 0, 0, 1],
    [0, -1, 1, 0],
    [-1, 0, 0, -1],
    [0, 1, -1, 0],
    [-1, 0, 0, 1],
    [1, 0, 0, -1],
    [0, 1, 1, 0],
    [0, -1, -1, 0],
];

fn matrix(sym: u8) -> [i32; 4] {
    assert!(sym < SYMMETRY_COUNT, "symmetry {sym} is not in 0..8");
    MATRICES[usize::from(sym)]
}

fn apply(m: [i32; 4], (x, y): (i32, i32)) -> (i32, i32) {
    (m[0] * x + m[1] * y, m[2] * x + m[3] * y)
}

fn symmetry_of(m: [i32; 4]) -> u8 {
    let found = MATRICES.iter().position(|&candidate| candidate == m);
    // The matrices form a group, so products and inverses are always in the table.
    found.map_or(0, |i| i as u8)
}

/// The symmetry that undoes `sym`: `compose(sym, inverse(sym)) == 0`.
///
/// # Panics
/// If `sym >= 8`.
#[must_use]
pub fn inverse(sym: u8) -> u8 {
    let [a, b, c, d] = matrix(sym);
    // Orthogonal matrices: the inverse is the transpose.
    symmetry_of([a, c, b, d])
}

/// The symmetry equal to applying `first`, then `then`.
///
/// # Panics
/// If either argument is `>= 8`.
#[must_use]
pub fn compose(first: u8, then: u8) -> u8 {
    let (p, q) = (matrix(then), matrix(first));
    symmetry_of([
        p[0] * q[0] + p[1] * q[2],
        p[0] * q[1] + p[1] * q[3],
        p[2] * q[0] + p[3] * q[2],
        p[2] * q[1] + p[3] * q[3],
    ])
}

/// Image of square `(file, rank)` under `sym` on a `size x size` board.
///
/// # Panics
/// If `sym >= 8`; in debug builds if the square is off the board.
#[must_use]
pub fn transform_square(file: usize, rank: usize, size: usize, sym: u8) -> (usize, usize) {
    debug_assert!(file < size && rank < size, "square off the board");
    let last = size as i32 - 1;
    // Doubled coordinates keep the centre of an even board on the integer grid.
    let centred = (2 * file as i32 - last, 2 * rank as i32 - last);
    let (x, y) = apply(matrix(sym), centred);
    (((x + last) / 2) as usize, ((y + last) / 2) as usize)
}

/// Image of direction `dir` (0 north, 1 east, 2 south, 3 west) under `sym`.
///
/// # Panics
/// If `sym >= 8` or `dir >= 4`.
#[must_use]
pub fn transform_direction(dir: usize, sym: u8) -> usize {
    let image = apply(matrix(sym), DIRECTIONS[dir]);
    DIRECTIONS.iter().position(|&d| d == image).unwrap_or(dir)
}

/// Image of a move under `sym`; the distance is unchanged.
#[must_use]
pub fn transform_move(m: PolicyMove, size: usize, sym: u8) -> PolicyMove {
    let (file, rank) = transform_square(m.file, m.rank, size, sym);
    PolicyMove { file, rank, dir: transform_direction(m.dir, sym), dist: m.dist }
}

/// Transforms `n_planes` planes of `size x size` values, laid out `[plane][rank][file]`.
///
/// The value at a square moves to the square's image: `out[p][sym(sq)] = planes[p][sq]`.
///
/// # Panics
/// If `planes.len() != n_planes * size * size` or `sym >= 8`.
#[must_use]
pub fn transform_planes(planes: &[f32], n_planes: usize, size: usize, sym: u8) -> Vec<f32> {
    let area = size * size;
    assert_eq!(planes.len(), n_planes * area, "planes must be n_planes * size * size long");
    let targets: Vec<usize> = (0..area)
        .map(|sq| {
            let (file, rank) = transform_square(sq % size, sq / size, size, sym);
            rank * size + file
        })
        .collect();
    let mut out = vec![0.0; planes.len()];
    for (src_plane, dst_plane) in planes.chunks_exact(area).zip(out.chunks_exact_mut(area)) {
        for (sq, &value) in src_plane.iter().enumerate() {
            dst_plane[targets[sq]] = value;
        }
    }
    out
}

/// For each policy index, the index of its move's image under `sym`.
#[must_use]
pub fn policy_permutation(size: usize, sym: u8) -> Vec<usize> {
    let per_square = moves_per_square(size);
    (0..policy_len(size))
        .map(|index| {
            let (square, within) = (index / per_square, index % per_square);
            let m = PolicyMove {
                file: square % size,
                rank: square / size,
                dir: within / (size - 1),
                dist: within % (size - 1) + 1,
            };
            transform_move(m, size, sym).index(size)
        })
        .collect()
}

/// Transforms a policy vector laid out as in [`crate::policy`]:
/// `out[index(sym(move))] = policy[index(move)]`.
///
/// # Panics
/// If `policy.len() != policy_len(size)` or `sym >= 8`.
#[must_use]
pub fn transform_policy(policy: &[f32], size: usize, sym: u8) -> Vec<f32> {
    assert_eq!(policy.len(), policy_len(size), "policy must be policy_len(size) long");
    let mut out = vec![0.0; policy.len()];
    for (index, target) in policy_permutation(size, sym).into_iter().enumerate() {
        out[target] = policy[index];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::policy_index;

    const SIZE: usize = 11;

    fn all_moves(size: usize) -> impl Iterator<Item = PolicyMove> {
        (0..policy_len(size)).filter_map(move |i| PolicyMove::from_index(i, size))
    }

    #[test]
    fn rotation_by_90_turns_north_to_west() {
        assert_eq!(transform_direction(0, 1), 3);
        assert_eq!(transform_square(10, 0, SIZE, 1), (10, 10));
        assert_eq!(transform_square(5, 5, SIZE, 1), (5, 5));
    }

    #[test]
    fn transformed_one_hot_policy_is_the_transformed_move() {
        for sym in 0..SYMMETRY_COUNT {
            for m in all_moves(SIZE).step_by(7) {
                let mut policy = vec![0.0; policy_len(SIZE)];
                policy[m.index(SIZE)] = 1.0;
                let image = transform_move(m, SIZE, sym);
                let out = transform_policy(&policy, SIZE, sym);
                let hot = policy_index(image.file, image.rank, image.dir, image.dist, SIZE);
                assert_eq!(out[hot], 1.0, "sym {sym}, move {m:?}");
                assert_eq!(out.iter().sum::<f32>(), 1.0);
            }
        }
    }

    #[test]
    fn moves_stay_on_the_board_under_every_symmetry() {
        for sym in 0..SYMMETRY_COUNT {
            for m in all_moves(SIZE) {
                let dest = m.destination(SIZE).map(|(f, r)| transform_square(f, r, SIZE, sym));
                assert_eq!(transform_move(m, SIZE, sym).destination(SIZE), dest);
            }
        }
    }

    #[test]
    fn planes_and_policy_agree() {
        // A marker on a from-square must land where the transformed move starts.
        for sym in 0..SYMMETRY_COUNT {
            let m = PolicyMove { file: 2, rank: 7, dir: 1, dist: 3 };
            let mut plane = vec![0.0; SIZE * SIZE];
            plane[m.rank * SIZE + m.file] = 1.0;
            let out = transform_planes(&plane, 1, SIZE, sym);
            let image = transform_move(m, SIZE, sym);
            assert_eq!(out[image.rank * SIZE + image.file], 1.0, "sym {sym}");
        }
    }

    #[test]
    fn inverse_undoes_every_symmetry() {
        let planes: Vec<f32> = (0..3 * SIZE * SIZE).map(|i| i as f32).collect();
        let policy: Vec<f32> = (0..policy_len(SIZE)).map(|i| i as f32).collect();
        for sym in 0..SYMMETRY_COUNT {
            let inv = inverse(sym);
            assert_eq!(compose(sym, inv), 0);
            let back = transform_planes(&transform_planes(&planes, 3, SIZE, sym), 3, SIZE, inv);
            assert_eq!(back, planes, "planes, sym {sym}");
            let back = transform_policy(&transform_policy(&policy, SIZE, sym), SIZE, inv);
            assert_eq!(back, policy, "policy, sym {sym}");
        }
    }

    #[test]
    fn composition_matches_applying_in_turn() {
        let planes: Vec<f32> = (0..2 * SIZE * SIZE).map(|i| i as f32).collect();
        let policy: Vec<f32> = (0..policy_len(SIZE)).map(|i| i as f32).collect();
        for a in 0..SYMMETRY_COUNT {
            for b in 0..SYMMETRY_COUNT {
                let ab = compose(a, b);
                let twice = transform_planes(&transform_planes(&planes, 2, SIZE, a), 2, SIZE, b);
                assert_eq!(twice, transform_planes(&planes, 2, SIZE, ab), "planes {a} then {b}");
                let twice = transform_policy(&transform_policy(&policy, SIZE, a), SIZE, b);
                assert_eq!(twice, transform_policy(&policy, SIZE, ab), "policy {a} then {b}");
            }
        }
    }

    #[test]
    fn symmetries_are_distinct_and_even_boards_work() {
        let plane: Vec<f32> = (0..64).map(|i| i as f32).collect();
        let images: Vec<Vec<f32>> = (0..SYMMETRY_COUNT).map(|s| transform_planes(&plane, 1, 8, s)).collect();
        for (i, a) in images.iter().enumerate() {
            for b in &images[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }
}

//! What the network sees of a game, and where each move's logit is.
//!
//! # Input planes
//! [`INPUT_PLANES`] planes of `size x size` floats, laid out `[plane][rank][file]` (index
//! `plane · size² + rank · size + file`), the layout [`crate::model::TaflNet`] expects:
//!
//! | plane | content |
//! |---|---|
//! | 0 | attackers |
//! | 1 | defenders (soldiers, not the king) |
//! | 2 | the king |
//! | 3 | side to move: all ones when the defenders are to move |
//! | 4 | the throne |
//! | 5 | the corners, when the variant escapes to them |
//! | 6 | all ones when the current position occurred before (since the last capture) |
//! | 7 | all ones when it occurred twice before: one more and Copenhagen's defenders lose |
//! | 8 | plies since the last capture, `min(plies, 100) / 100` in steps of 0.05 |
//! | 9 | all ones, so that zero-padded convolutions see the edge of the board |
//!
//! Version 2 adds [`TACTICAL_PLANES`] planes of what either side could do with its next move,
//! whoever is to move ([`tafl_rules::tactics`]), for nets that ask for them
//! ([`TACTICAL_INPUT_PLANES`] inputs); a net of [`INPUT_PLANES`] inputs reads the first ten:
//!
//! | plane | content |
//! |---|---|
//! | 10 | the squares the king can move to |
//! | 11 | of those, the ones from which he would reach an escape square: 0.5 for one, 1 for two or more (a fork) |
//! | 12 | attackers that a defender move would capture |
//! | 13 | defenders, and the king, that an attacker move would capture |
//! | 14 | squares where an attacker move would capture |
//! | 15 | squares where a defender move would capture |
//!
//! The value the network predicts is from the side to move's point of view.
//!
//! The plies plane moves in steps of five plies, so an evaluation cache keyed by the position,
//! its repetition count and [`plies_bucket`] returns exactly what the net would say.
//!
//! # Policy
//! One logit per (from-square, direction, distance − 1), the layout of [`crate::policy`]:
//! `index = from_square · 4(size − 1) + dir · (size − 1) + (dist − 1)`, with
//! `from_square = rank · size + file` and directions numbered as [`tafl_rules::Direction`]
//! (0 north, 1 east, 2 south, 3 west).
//!
//! # Symmetries
//! [`transform_planes`] and [`transform_policy`] apply a [`tafl_rules::Symmetry`]; its numbering
//! is the one of [`crate::symmetry`] (checked by the tests), so they delegate to it.
//!
//! Change anything here and bump [`ENCODING_VERSION`]: checkpoints record the version of the
//! planes they read ([`version_of`] their number of inputs) and refuse to load under a build
//! that does not know it.

use tafl_rules::{Game, Move, Piece, Position, Side, Square, Symmetry, Variant};

use crate::{policy, symmetry};

/// The newest version of the input planes this build writes; each version writes the planes of
/// the ones before it first. The policy layout is the same in all ([`POLICY_VERSION`]).
pub const ENCODING_VERSION: u32 = 2;

/// Version of the policy layout (and of the policy indices in self-play shards).
pub const POLICY_VERSION: u32 = 1;

/// Input planes of version 1: what a net reads unless it asks for the tactical planes.
pub const INPUT_PLANES: usize = 10;

/// Planes version 2 adds.
pub const TACTICAL_PLANES: usize = 6;

/// Input planes of version 2: version 1's and the tactical ones.
pub const TACTICAL_INPUT_PLANES: usize = INPUT_PLANES + TACTICAL_PLANES;

/// The encoding version whose planes a net of `input_planes` inputs reads; `None` for a
/// number no version has.
#[must_use]
pub const fn version_of(input_planes: usize) -> Option<u32> {
    match input_planes {
        INPUT_PLANES => Some(1),
        TACTICAL_INPUT_PLANES => Some(2),
        _ => None,
    }
}

/// The input planes of encoding `version`; `None` for a version this build does not know.
#[must_use]
pub const fn planes_of(version: u32) -> Option<usize> {
    match version {
        1 => Some(INPUT_PLANES),
        2 => Some(TACTICAL_INPUT_PLANES),
        _ => None,
    }
}

/// Plies since the last capture at which the plies plane saturates at 1.
pub const PLIES_HORIZON: usize = 100;

/// Width in plies of one step of the plies plane.
pub const PLIES_STEP: usize = 5;

const ATTACKERS: usize = 0;
const DEFENDERS: usize = 1;
const KING: usize = 2;
/// The plane that says who is to move: all ones when the defenders are, zeros when the attackers
/// are (a net with heads by side reads it to pick its heads).
pub const DEFENDERS_TO_MOVE: usize = 3;
const THRONE: usize = 4;
const CORNERS: usize = 5;
const REPEATED_ONCE: usize = 6;
const REPEATED_TWICE: usize = 7;
const PLIES: usize = 8;
const ONES: usize = 9;
const KING_REACH: usize = 10;
const ESCAPE_THREATS: usize = 11;
const CAPTURABLE: usize = 12;
const CAPTURING: usize = 14;

/// Floats in the encoding of one position with `planes` planes on a `size x size` board:
/// `planes · size²`.
#[must_use]
pub const fn input_len(size: u8, planes: usize) -> usize {
    planes * size as usize * size as usize
}

/// Length of the policy vector on a `size x size` board (4840 for 11x11).
#[must_use]
pub const fn policy_len(size: u8) -> usize {
    policy::policy_len(size as usize)
}

/// The step of the plies plane that `plies_since_capture` falls in: `0..=PLIES_HORIZON / PLIES_STEP`.
/// Positions with equal pieces, side, repetition count and bucket encode identically.
#[must_use]
pub const fn plies_bucket(plies_since_capture: usize) -> usize {
    let plies = if plies_since_capture < PLIES_HORIZON { plies_since_capture } else { PLIES_HORIZON };
    plies / PLIES_STEP
}

fn fill(plane: &mut [f32], value: f32) {
    plane.iter_mut().for_each(|v| *v = value);
}

fn flag(on: bool) -> f32 {
    if on { 1.0 } else { 0.0 }
}

/// Writes the planes of `position` into `out`: as many as it holds, [`INPUT_PLANES`] or
/// [`TACTICAL_INPUT_PLANES`].
///
/// `repetitions` counts the occurrences of the position since the last capture, this one
/// included (as [`Game::repetitions`]); `plies_since_capture` as [`Game::plies_since_capture`].
///
/// # Panics
/// If `out.len()` is not `input_len(position.size(), planes)` for one of those two.
pub fn encode_position(position: &Position, repetitions: usize, plies_since_capture: usize, out: &mut [f32]) {
    let size = position.size();
    let n = usize::from(size);
    let area = n * n;
    let planes = out.len() / area;
    assert!(
        out.len().is_multiple_of(area) && version_of(planes).is_some(),
        "out must hold {INPUT_PLANES} or {TACTICAL_INPUT_PLANES} planes of {size}x{size}"
    );
    let (out, tactical) = out.split_at_mut(INPUT_PLANES * area);
    if !tactical.is_empty() {
        encode_tactics(position, tactical);
    }
    let (board, constants) = out.split_at_mut(DEFENDERS_TO_MOVE * area);
    fill(board, 0.0);
    for (plane, piece) in [(ATTACKERS, Piece::Attacker), (DEFENDERS, Piece::Defender), (KING, Piece::King)] {
        for sq in position.squares(piece) {
            board[plane * area + sq.index(size) as usize] = 1.0;
        }
    }
    let plane = |p: usize| (p - DEFENDERS_TO_MOVE) * area..(p - DEFENDERS_TO_MOVE + 1) * area;
    fill(&mut constants[plane(DEFENDERS_TO_MOVE)], flag(position.side_to_move() == Side::Defenders));
    let variant = position.variant();
    for (p, special) in [(THRONE, Variant::is_throne as fn(&Variant, Square) -> bool), (CORNERS, Variant::is_corner)] {
        let squares = &mut constants[plane(p)];
        for (i, v) in squares.iter_mut().enumerate() {
            *v = flag(special(variant, Square::from_index(i as u32, size)));
        }
    }
    fill(&mut constants[plane(REPEATED_ONCE)], flag(repetitions >= 2));
    fill(&mut constants[plane(REPEATED_TWICE)], flag(repetitions >= 3));
    let plies = (plies_bucket(plies_since_capture) * PLIES_STEP) as f32 / PLIES_HORIZON as f32;
    fill(&mut constants[plane(PLIES)], plies);
    fill(&mut constants[plane(ONES)], 1.0);
}

/// The tactical planes (10 to 15) of `position` into `out`, which holds just those.
fn encode_tactics(position: &Position, out: &mut [f32]) {
    let size = position.size();
    let area = usize::from(size) * usize::from(size);
    fill(out, 0.0);
    let plane = |p: usize| (p - INPUT_PLANES) * area;
    let tactics = tafl_rules::tactics(position);
    let mut mark = |p: usize, squares: &[Square], value: f32| {
        for sq in squares {
            out[plane(p) + sq.index(size) as usize] = value;
        }
    };
    mark(KING_REACH, &tactics.king_reach, 1.0);
    for (side, (capturable, capturing)) in tactics.capturable.iter().zip(&tactics.capturing).enumerate() {
        mark(CAPTURABLE + side, capturable, 1.0);
        mark(CAPTURING + side, capturing, 1.0);
    }
    for &(sq, escapes) in &tactics.escape_threats {
        mark(ESCAPE_THREATS, &[sq], if escapes >= 2 { 1.0 } else { 0.5 });
    }
}

/// Writes the planes of the current position of `game` into `out`, with its repetition count
/// and plies since the last capture.
///
/// # Panics
/// As [`encode_position`].
pub fn encode_game(game: &Game, out: &mut [f32]) {
    encode_position(game.position(), game.repetitions(), game.plies_since_capture(), out);
}

/// The `planes` planes ([`INPUT_PLANES`] or [`TACTICAL_INPUT_PLANES`]) of the current positions
/// of `games`, one after the other.
///
/// # Panics
/// If the games are not all on boards of `size`, or `planes` is neither.
#[must_use]
pub fn encode_games(games: &[&Game], size: u8, planes: usize) -> Vec<f32> {
    let len = input_len(size, planes);
    let mut planes = vec![0.0; games.len() * len];
    for (game, out) in games.iter().zip(planes.chunks_exact_mut(len)) {
        assert_eq!(game.position().size(), size, "every game must be on a {size}x{size} board");
        encode_game(game, out);
    }
    planes
}

/// Policy index of `m` on a `size x size` board.
///
/// # Panics
/// If `m` does not move along a rank or file, or leaves the board.
#[must_use]
pub fn move_index(m: Move, size: u8) -> usize {
    let Some((dir, dist)) = m.direction_and_distance() else {
        panic!("{m} is not a move along a rank or file");
    };
    assert!(m.from.on_board(size) && m.to.on_board(size), "{m} leaves the {size}x{size} board");
    policy::policy_index(
        usize::from(m.from.file()),
        usize::from(m.from.rank()),
        dir as usize,
        usize::from(dist),
        usize::from(size),
    )
}

/// The move at policy `index` on a `size x size` board; `None` when the index is out of range
/// or its move would leave the board.
#[must_use]
pub fn index_move(index: usize, size: u8) -> Option<Move> {
    let n = usize::from(size);
    let pm = policy::PolicyMove::from_index(index, n)?;
    let (file, rank) = pm.destination(n)?;
    let square = |f: usize, r: usize| Square::new(f as u8, r as u8);
    Some(Move::new(square(pm.file, pm.rank), square(file, rank)))
}

/// Planes (any whole number of `size x size` planes, `[plane][rank][file]`) as they are for
/// the board transformed by `sym`: encoding `sym.position(p)` equals transforming the
/// encoding of `p`.
///
/// # Panics
/// If `planes.len()` is not a multiple of `size²`.
#[must_use]
pub fn transform_planes(planes: &[f32], size: u8, sym: Symmetry) -> Vec<f32> {
    let area = usize::from(size) * usize::from(size);
    assert!(area > 0 && planes.len().is_multiple_of(area), "planes must be whole {size}x{size} planes");
    symmetry::transform_planes(planes, planes.len() / area, usize::from(size), sym.index())
}

/// A policy vector (of [`policy_len`]`(size)`) as it is for the board transformed by `sym`:
/// the entry of move `m` moves to the index of `sym.apply_move(m)`.
///
/// # Panics
/// If `policy.len() != policy_len(size)`.
#[must_use]
pub fn transform_policy(policy: &[f32], size: u8, sym: Symmetry) -> Vec<f32> {
    symmetry::transform_policy(policy, usize::from(size), sym.index())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use std::collections::HashSet;

    const VARIANTS: [&str; 4] = ["copenhagen", "tablut", "brandubh", "copenhagen-13"];

    /// Games of random moves from the start, with every position on the way.
    fn random_games(variant: &str, games: usize, plies: usize, seed: u64) -> Vec<Game> {
        let variant = Variant::preset(variant).expect("preset");
        let mut rng = StdRng::seed_from_u64(seed);
        let mut out = Vec::new();
        for _ in 0..games {
            let mut game = Game::new(variant);
            out.push(game.clone());
            for _ in 0..plies {
                let moves = game.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let m = moves[rng.random_range(0..moves.len())];
                game.play(m).expect("legal");
                out.push(game.clone());
            }
        }
        out
    }

    fn encoded(position: &Position, repetitions: usize, plies: usize) -> Vec<f32> {
        let mut out = vec![f32::NAN; input_len(position.size(), TACTICAL_INPUT_PLANES)];
        encode_position(position, repetitions, plies, &mut out);
        out
    }

    #[test]
    fn symmetry_numbering_matches_the_rules_crate() {
        for size in [7u8, 9, 11, 13] {
            for sym in Symmetry::ALL {
                for f in 0..size {
                    for r in 0..size {
                        let image = sym.square(Square::new(f, r), size);
                        let (nf, nr) = symmetry::transform_square(f.into(), r.into(), size.into(), sym.index());
                        assert_eq!((usize::from(image.file()), usize::from(image.rank())), (nf, nr), "{sym:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn start_position_planes() {
        let game = Game::new(Variant::copenhagen());
        let mut out = vec![0.0; input_len(11, INPUT_PLANES)];
        encode_game(&game, &mut out);
        let plane = |p: usize| &out[p * 121..(p + 1) * 121];
        let sum = |p: usize| plane(p).iter().sum::<f32>();
        assert_eq!((sum(ATTACKERS), sum(DEFENDERS), sum(KING)), (24.0, 12.0, 1.0));
        assert_eq!(plane(KING)[5 * 11 + 5], 1.0);
        // Attackers move first.
        assert_eq!(sum(DEFENDERS_TO_MOVE), 0.0);
        assert_eq!((sum(THRONE), sum(CORNERS)), (1.0, 4.0));
        assert_eq!((sum(REPEATED_ONCE), sum(REPEATED_TWICE), sum(PLIES)), (0.0, 0.0, 0.0));
        assert_eq!(sum(ONES), 121.0);
        let later = encoded(game.position(), 3, 1000);
        assert!(later[REPEATED_TWICE * 121..(ONES + 1) * 121].iter().all(|&v| v == 1.0));
        let early = encoded(game.position(), 2, 12);
        assert_eq!(early[REPEATED_ONCE * 121], 1.0);
        assert_eq!(early[REPEATED_TWICE * 121], 0.0);
        assert_eq!(early[PLIES * 121], 0.1);
    }

    #[test]
    fn tactical_planes_extend_the_first_ten() {
        for game in random_games("copenhagen", 2, 80, 5).iter().step_by(9) {
            let (position, reps, plies) = (game.position(), game.repetitions(), game.plies_since_capture());
            let mut short = vec![f32::NAN; input_len(11, INPUT_PLANES)];
            encode_position(position, reps, plies, &mut short);
            let long = encoded(position, reps, plies);
            assert_eq!(short[..], long[..short.len()], "version 2 starts with version 1's planes");
            let tactics = tafl_rules::tactics(position);
            let plane = |p: usize| &long[p * 121..(p + 1) * 121];
            let marked = |p: usize| plane(p).iter().filter(|&&v| v > 0.0).count();
            let distinct = |squares: &[Square]| squares.iter().collect::<HashSet<_>>().len();
            assert_eq!(marked(KING_REACH), distinct(&tactics.king_reach));
            assert_eq!(marked(ESCAPE_THREATS), tactics.escape_threats.len());
            assert_eq!(marked(CAPTURABLE), distinct(&tactics.capturable[0]));
            assert_eq!(marked(CAPTURABLE + 1), distinct(&tactics.capturable[1]));
            assert_eq!(marked(CAPTURING + 1), distinct(&tactics.capturing[1]));
            // Only squares of the named pieces are capturable.
            for (i, &v) in plane(CAPTURABLE).iter().enumerate() {
                assert!(v == 0.0 || plane(ATTACKERS)[i] == 1.0, "square {i} is marked capturable without an attacker");
            }
        }
        // The start: the king is shut in, and nothing can be taken in one move.
        let start = encoded(Game::new(Variant::copenhagen()).position(), 1, 0);
        assert!(start[KING_REACH * 121..].iter().all(|&v| v == 0.0));
    }

    #[test]
    #[should_panic(expected = "planes")]
    fn a_plane_count_of_no_version_is_refused() {
        let mut out = vec![0.0; input_len(11, 12)];
        encode_position(Game::new(Variant::copenhagen()).position(), 1, 0, &mut out);
    }

    #[test]
    fn versions_and_plane_counts_match() {
        for version in 1..=ENCODING_VERSION {
            let planes = planes_of(version).expect("every version up to the newest");
            assert_eq!(version_of(planes), Some(version));
        }
        assert_eq!((planes_of(0), planes_of(ENCODING_VERSION + 1), version_of(11)), (None, None, None));
    }

    #[test]
    fn encoding_commutes_with_every_symmetry() {
        for variant in VARIANTS {
            for game in random_games(variant, 3, 60, 7).iter().step_by(5) {
                let position = game.position();
                let size = position.size();
                let (reps, plies) = (game.repetitions(), game.plies_since_capture());
                let planes = encoded(position, reps, plies);
                for sym in Symmetry::ALL {
                    let moved = encoded(&sym.position(position), reps, plies);
                    assert_eq!(moved, transform_planes(&planes, size, sym), "{variant} {sym:?}");
                }
            }
        }
    }

    #[test]
    fn policy_indices_commute_with_every_symmetry() {
        for variant in VARIANTS {
            for game in random_games(variant, 2, 40, 11).iter().step_by(7) {
                let size = game.position().size();
                let moves = game.legal_moves();
                let mut policy = vec![0.0; policy_len(size)];
                for (k, &m) in moves.iter().enumerate() {
                    policy[move_index(m, size)] = (k + 1) as f32;
                }
                for sym in Symmetry::ALL {
                    let moved = transform_policy(&policy, size, sym);
                    let image = sym.position(game.position());
                    let image_moves: HashSet<Move> = image.legal_moves().iter().copied().collect();
                    for (k, &m) in moves.iter().enumerate() {
                        let m2 = sym.apply_move(m, size);
                        assert!(image_moves.contains(&m2), "{variant} {sym:?}: {m2} not legal in the image");
                        assert_eq!(moved[move_index(m2, size)], (k + 1) as f32, "{variant} {sym:?} {m}");
                    }
                    assert_eq!(moved.iter().sum::<f32>(), policy.iter().sum::<f32>());
                }
            }
        }
    }

    #[test]
    fn legal_moves_have_distinct_indices_that_invert() {
        for variant in VARIANTS {
            for game in random_games(variant, 3, 80, 3) {
                let size = game.position().size();
                let mut seen = HashSet::new();
                for &m in &game.legal_moves() {
                    let index = move_index(m, size);
                    assert!(index < policy_len(size));
                    assert!(seen.insert(index), "{variant}: {m} shares index {index}");
                    assert_eq!(index_move(index, size), Some(m));
                }
            }
        }
    }

    #[test]
    fn index_move_covers_the_layout() {
        for size in [7u8, 9, 11, 13] {
            let mut on_board = 0;
            for index in 0..policy_len(size) {
                if let Some(m) = index_move(index, size) {
                    assert_eq!(move_index(m, size), index);
                    on_board += 1;
                }
            }
            // Each square reaches 2(size − 1) squares along its rank and file.
            let n = usize::from(size);
            assert_eq!(on_board, n * n * 2 * (n - 1));
            assert_eq!(index_move(policy_len(size), size), None);
        }
        assert_eq!(policy_len(11), 4840);
        let m = Move::new(Square::new(0, 0), Square::new(0, 2));
        assert_eq!(move_index(m, 11), 1);
        let m = Move::new(Square::new(1, 0), Square::new(2, 0));
        assert_eq!(move_index(m, 11), 40 + 10);
    }
}

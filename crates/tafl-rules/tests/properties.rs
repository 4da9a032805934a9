//! Property tests over random reachable positions of every preset.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::collections::BTreeSet;

use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tafl_rules::{Game, Move, PRESETS, Piece, Position, Setup, Side, Square, Symmetry, Variant};

/// A position reached by `plies` random moves from a preset's start.
fn random_game(preset: usize, seed: u64, plies: usize) -> Game {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut game = Game::new(Variant::preset(PRESETS[preset % PRESETS.len()]).unwrap());
    for _ in 0..plies {
        let moves = game.legal_moves();
        if moves.is_empty() {
            break;
        }
        game.play_unchecked(moves[rng.random_range(0..moves.len())]);
    }
    game
}

/// Characters that turn a valid text into a near miss: digits, piece letters of both formats,
/// separators, and a multi-byte character.
const NEAR_MISS_CHARS: [char; 16] = ['0', '1', '9', 'a', 'd', 'k', 't', 'T', 'K', '/', ' ', '-', 'x', ',', '\n', 'é'];

/// `text` with each `(position, kind, char)` edit applied: 0 replaces, 1 deletes, 2 inserts.
fn near_miss(text: &str, edits: &[(usize, u8, char)]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for &(at, kind, with) in edits {
        let i = if chars.is_empty() { 0 } else { at % chars.len() };
        match kind {
            0 if !chars.is_empty() => chars[i] = with,
            1 if !chars.is_empty() => {
                chars.remove(i);
            }
            _ => chars.insert(i, with),
        }
    }
    chars.into_iter().collect()
}

fn move_set(p: &Position) -> BTreeSet<Move> {
    p.legal_moves().into_iter().collect()
}

fn counts(p: &Position) -> [u32; 3] {
    [p.count(Piece::Attacker), p.count(Piece::Defender), p.count(Piece::King)]
}

proptest! {
    // 256 cases (proptest's default): each case is a random game of at most 80 plies, well
    // under a millisecond, so the whole block stays within a few seconds in CI.
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn symmetries_map_moves_and_captures(preset in 0usize..4, seed in any::<u64>(), plies in 0usize..80) {
        let game = random_game(preset, seed, plies);
        let p = *game.position();
        let size = p.size();
        for sym in Symmetry::ALL {
            let q = sym.position(&p);
            let mapped: BTreeSet<Move> = move_set(&p).into_iter().map(|m| sym.apply_move(m, size)).collect();
            prop_assert_eq!(&mapped, &move_set(&q));
            for m in p.legal_moves() {
                let (mut a, mut b) = (p, q);
                let pa = a.play_unchecked(m);
                let pb = b.play_unchecked(sym.apply_move(m, size));
                let ca: BTreeSet<Square> = pa.captured.iter().map(|s| sym.square(*s, size)).collect();
                let cb: BTreeSet<Square> = pb.captured.iter().copied().collect();
                prop_assert_eq!(ca, cb);
                prop_assert_eq!(pa.king_captured, pb.king_captured);
                prop_assert_eq!(sym.position(&a), b);
            }
        }
    }

    #[test]
    fn random_games_keep_pieces_hashes_and_move_counts_consistent(preset in 0usize..4, seed in any::<u64>()) {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut game = Game::new(Variant::preset(PRESETS[preset]).unwrap());
        for _ in 0..300 {
            let p = *game.position();
            let moves = p.legal_moves();
            prop_assert_eq!(p.count_legal_moves() as usize, moves.len());
            prop_assert_eq!(p.has_legal_moves(), !moves.is_empty());
            let rebuilt = Position::from_setup(p.variant(), &p.to_setup()).unwrap();
            prop_assert_eq!(rebuilt.hash(), p.hash());
            if game.outcome().is_over() || moves.is_empty() {
                break;
            }
            let m = moves[rng.random_range(0..moves.len())];
            let before = counts(&p);
            let mover = p.side_to_move();
            let played = game.play(m).unwrap();
            let after = counts(game.position());
            let lost = played.captured.len() as u32;
            match mover {
                Side::Attackers => prop_assert_eq!(after, [before[0], before[1] - lost, before[2]]),
                Side::Defenders => prop_assert_eq!(after, [before[0] - lost, before[1], before[2]]),
            }
            prop_assert_eq!(game.position().side_to_move(), mover.opponent());
        }
    }

    #[test]
    fn check_move_agrees_with_the_generator(preset in 0usize..4, seed in any::<u64>(), plies in 0usize..60) {
        let p = *random_game(preset, seed, plies).position();
        let legal = move_set(&p);
        let size = p.size();
        for from in (0..size).flat_map(|f| (0..size).map(move |r| Square::new(f, r))) {
            for to in (0..size).flat_map(|f| (0..size).map(move |r| Square::new(f, r))) {
                if from.file() != to.file() && from.rank() != to.rank() {
                    continue;
                }
                let m = Move::new(from, to);
                prop_assert_eq!(p.check_move(m).is_ok(), legal.contains(&m), "{}", m);
            }
        }
    }

    #[test]
    fn fen_and_opentafl_round_trip(preset in 0usize..4, seed in any::<u64>(), plies in 0usize..80) {
        let p = *random_game(preset, seed, plies).position();
        let v = p.variant();
        prop_assert_eq!(Position::from_fen(v, &p.to_fen()).unwrap(), p);
        let side = p.side_to_move();
        prop_assert_eq!(Position::from_opentafl(v, &p.to_opentafl(), side).unwrap(), p);
        prop_assert_eq!(Setup::from_fen(&p.to_fen()).unwrap(), p.to_setup());
    }

    #[test]
    fn parsers_never_panic_on_near_misses(
        preset in 0usize..4,
        seed in any::<u64>(),
        plies in 0usize..60,
        edits in prop::collection::vec((any::<usize>(), 0u8..3, prop::sample::select(NEAR_MISS_CHARS.to_vec())), 1..3),
    ) {
        // Valid texts of every format, each with one or two characters replaced, deleted or
        // inserted: what a typo or a truncated message looks like. Whatever still parses must
        // print back to the same thing.
        let game = random_game(preset, seed, plies);
        let p = *game.position();
        let v = p.variant();
        let size = v.size();
        let fen = near_miss(&p.to_fen(), &edits);
        if let Ok(q) = Position::from_fen(v, &fen) {
            prop_assert_eq!(Position::from_fen(v, &q.to_fen()).unwrap(), q);
        }
        let _ = Setup::from_fen(&fen);
        let record = near_miss(&p.to_opentafl(), &edits);
        if let Ok(q) = Position::from_opentafl(v, &record, p.side_to_move()) {
            prop_assert_eq!(Position::from_opentafl(v, &q.to_opentafl(), p.side_to_move()).unwrap(), q);
        }
        let moves: Vec<String> = game.moves().iter().map(ToString::to_string).collect();
        let line = near_miss(&format!("{},0,0,Ongoing", moves.join(" ")), &edits);
        if let Ok(parsed) = tafl_rules::notation::parse_archive_line(&line, size) {
            let _ = tafl_rules::replay::replay(1, Position::start(v), &parsed.plies, true);
        }
        if let Some(first) = moves.first()
            && let Ok(m) = tafl_rules::parse_move(&near_miss(first, &edits), size)
        {
            prop_assert_eq!(tafl_rules::parse_move(&m.mv.to_string(), size).unwrap().mv, m.mv);
        }
        let toml = near_miss(&format!("base = '{}'\n[rules]\nmove-limit = 50\nrepetition = 'draw'\nthrone-hostile-to-defenders = 'never'\n", PRESETS[preset]), &edits);
        if let Ok(variant) = Variant::from_toml(&toml) {
            let _ = Game::new(variant.leak()).legal_moves();
        }
    }

    #[test]
    fn parsers_never_panic(text in "\\PC{0,80}") {
        let v = Variant::copenhagen();
        let _ = Position::from_fen(v, &text);
        let _ = Position::from_opentafl(v, &text, Side::Attackers);
        let _ = tafl_rules::parse_move(&text, 11);
        let _ = tafl_rules::notation::parse_archive_line(&text, 11);
        let _ = Variant::from_toml(&text);
    }
}

//! Every rule of RULES.md with concrete positions: the case that fires and the near miss.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::collections::BTreeSet;

use common::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tafl_rules::{Game, Move, Outcome, Piece, Position, Reason, Side, Square, Symmetry, Variant};

const A: Side = Side::Attackers;
const D: Side = Side::Defenders;

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fn won(winner: Side, reason: Reason) -> Outcome {
    Outcome::Decided { winner, reason }
}

fn variant(toml: &str) -> &'static Variant {
    Variant::from_toml(toml).expect("variant").leak()
}

// ----- 1. restricted squares -------------------------------------------------------------------

#[test]
fn soldiers_pass_the_empty_throne_but_never_stop_on_it() {
    let g = copenhagen(A, "X: f2  O: c6  K: c3");
    assert!(is_legal(&g, "f2-f5"));
    assert!(!is_legal(&g, "f2-f6"));
    assert!(is_legal(&g, "f2-f7"));
    assert!(is_legal(&g, "f2-f11"));
    let g = copenhagen(D, "X: f2  O: c6  K: c3");
    assert!(is_legal(&g, "c6-g6"));
    assert!(!is_legal(&g, "c6-f6"));
}

#[test]
fn only_the_king_stops_on_the_throne_and_corners() {
    let g = copenhagen(D, "X: a5  O: c6  K: f3");
    assert!(is_legal(&g, "f3-f6"));
    let g = copenhagen(A, "X: a5  O: c6  K: f3");
    assert!(is_legal(&g, "a5-a2"));
    assert!(!is_legal(&g, "a5-a1"));
    let g = copenhagen(D, "X: e9  O: c1  K: f3");
    assert!(!is_legal(&g, "c1-a1"));
    assert!(is_legal(&g, "c1-b1"));
    let g = copenhagen(D, "X: e9  O: e5  K: c1");
    assert!(is_legal(&g, "c1-a1"));
}

#[test]
fn an_occupied_throne_blocks_everyone() {
    let g = copenhagen(A, "X: f2  O: c4  K: f6");
    assert!(is_legal(&g, "f2-f5"));
    assert!(!is_legal(&g, "f2-f7"));
}

#[test]
fn illegal_moves_are_refused_with_the_reason() {
    let mut g = copenhagen(A, "X: f2  O: c6  K: c3");
    let before = g.position().to_fen();
    assert!(g.play(mv("f2-g3")).unwrap_err().to_string().contains("not along a rank or file"));
    assert!(g.play(mv("c6-c7")).unwrap_err().to_string().contains("no piece of the attackers"));
    assert!(g.play(mv("f2-f6")).unwrap_err().to_string().contains("only the king"));
    let g2 = copenhagen(D, "X: c5  O: c6  K: c3");
    assert!(g2.clone().play(mv("c3-c7")).unwrap_err().to_string().contains("blocked"));
    assert_eq!(g.position().to_fen(), before);
}

// ----- 2. custodial capture --------------------------------------------------------------------

#[test]
fn a_soldier_between_two_enemies_is_captured() {
    let mut g = copenhagen(A, "X: d4 h4  O: e4  K: b9");
    assert_eq!(play(&mut g, "h4-f4"), vec!["e4"]);
    assert_eq!(g.position().piece_at(sq("e4")), None);
}

#[test]
fn moving_into_a_trap_is_safe() {
    let mut g = copenhagen(D, "X: d4 f4  O: e7  K: b9");
    assert!(play(&mut g, "e7-e4").is_empty());
    assert_eq!(g.position().piece_at(sq("e4")), Some(Piece::Defender));
}

#[test]
fn one_move_captures_on_three_sides() {
    let mut g = copenhagen(A, "X: c5 e3 g5 e8  O: d5 e4 f5  K: a6");
    assert_eq!(sorted(play(&mut g, "e8-e5")), vec!["d5", "e4", "f5"]);
}

#[test]
fn diagonals_never_capture() {
    let mut g = copenhagen(A, "X: d5 g3  O: e4  K: a6");
    assert!(play(&mut g, "g3-f3").is_empty());
}

#[test]
fn the_king_is_not_captured_between_two_attackers_in_copenhagen() {
    let mut g = copenhagen(A, "X: d5 h5  O: b2  K: e5");
    assert!(play(&mut g, "h5-f5").is_empty());
    assert_eq!(g.outcome(), Outcome::Ongoing);
    assert_eq!(g.position().king(), Some(sq("e5")));
}

// ----- 3. hostile squares ----------------------------------------------------------------------

#[test]
fn corners_are_hostile_to_both_sides() {
    let mut g = copenhagen(A, "X: c4  O: b1  K: f6");
    assert_eq!(play(&mut g, "c4-c1"), vec!["b1"]);
    let mut g = copenhagen(D, "X: a2 h9  O: d3  K: f6");
    assert_eq!(play(&mut g, "d3-a3"), vec!["a2"]);
}

#[test]
fn the_empty_throne_is_hostile_to_both_sides() {
    let mut g = copenhagen(D, "X: f7  O: h8  K: b2");
    assert_eq!(play(&mut g, "h8-f8"), vec!["f7"]);
    let mut g = copenhagen(A, "X: h8  O: f7  K: b2");
    assert_eq!(play(&mut g, "h8-f8"), vec!["f7"]);
}

#[test]
fn the_occupied_throne_is_hostile_to_attackers_only() {
    let mut g = copenhagen(A, "X: h8  O: f7  K: f6");
    assert!(play(&mut g, "h8-f8").is_empty());
    let mut g = copenhagen(D, "X: f7  O: h8  K: f6");
    assert_eq!(play(&mut g, "h8-f8"), vec!["f7"]);
}

#[test]
fn the_board_edge_is_never_hostile() {
    let mut g = copenhagen(A, "X: c5  O: a5  K: f6");
    assert!(play(&mut g, "c5-b5").is_empty());
}

// ----- 4. armed king ---------------------------------------------------------------------------

#[test]
fn the_king_captures_as_mover_and_as_anvil() {
    let mut g = copenhagen(D, "X: d4 j9  O: c4  K: e8");
    assert_eq!(play(&mut g, "e8-e4"), vec!["d4"]);
    let mut g = copenhagen(D, "X: d4 j9  O: e8  K: c4");
    assert_eq!(play(&mut g, "e8-e4"), vec!["d4"]);
}

#[test]
fn an_unarmed_king_captures_nothing() {
    let v = variant("base = 'copenhagen'\n[rules]\nking-armed = false\n");
    let mut g = Game::from_position(position(v, D, "X: d4 j9  O: c4  K: e8"));
    assert!(play(&mut g, "e8-e4").is_empty());
    let mut g = Game::from_position(position(v, D, "X: d4 j9  O: e8  K: c4"));
    assert!(play(&mut g, "e8-e4").is_empty());
}

// ----- 5. capturing the king -------------------------------------------------------------------

#[test]
fn four_attackers_capture_the_king() {
    let mut g = copenhagen(A, "X: e6 e4 d5 h5  O: b2  K: e5");
    play(&mut g, "h5-f5");
    assert_eq!(g.outcome(), won(A, Reason::KingCaptured));
}

#[test]
fn three_attackers_and_the_throne_capture_the_king() {
    let mut g = copenhagen(A, "X: f8 e7 j7  O: b2  K: f7");
    play(&mut g, "j7-g7");
    assert_eq!(g.outcome(), won(A, Reason::KingCaptured));
}

#[test]
fn three_attackers_without_the_throne_do_not() {
    let mut g = copenhagen(A, "X: e6 e4 h5  O: b2  K: e5");
    play(&mut g, "h5-f5");
    assert_eq!(g.outcome(), Outcome::Ongoing);
}

#[test]
fn the_king_on_the_throne_needs_four() {
    let mut g = copenhagen(A, "X: f7 f5 e6 g9  O: b2  K: f6");
    play(&mut g, "g9-g6");
    assert_eq!(g.outcome(), won(A, Reason::KingCaptured));
    let mut g = copenhagen(A, "X: f7 f5 g9  O: b2  K: f6");
    play(&mut g, "g9-g6");
    assert_eq!(g.outcome(), Outcome::Ongoing);
}

#[test]
fn the_king_on_the_edge_is_never_captured() {
    let mut g = copenhagen(A, "X: a6 a4 c5  O: h2  K: a5");
    play(&mut g, "c5-b5");
    assert_eq!(g.outcome(), Outcome::Ongoing);
}

#[test]
fn the_king_moving_into_a_trap_is_safe() {
    let mut g = copenhagen(D, "X: e7 g7 f8 b9  O: b2  K: f6");
    play(&mut g, "f6-f7");
    assert_eq!(g.outcome(), Outcome::Ongoing);
    play(&mut g, "b9-b10");
    assert_eq!(g.outcome(), Outcome::Ongoing, "only a move that closes the trap captures");
}

#[test]
fn a_start_position_with_the_king_already_taken_is_decided() {
    let g = copenhagen(D, "X: e6 e4 d5 f5  O: b2  K: e5");
    assert_eq!(g.outcome(), won(A, Reason::KingCaptured));
    let g = copenhagen(A, "X: e6 e4 d5 f5  O: b2  K: e5");
    assert_eq!(g.outcome(), Outcome::Ongoing, "the defenders moved last");
}

// ----- 6. shieldwall ---------------------------------------------------------------------------

#[test]
fn a_shieldwall_is_captured_when_both_ends_close() {
    let mut g = copenhagen(A, "X: c1 d2 e2 f2 g5  O: d1 e1 f1  K: f6");
    assert_eq!(sorted(play(&mut g, "g5-g1")), vec!["d1", "e1", "f1"]);
}

#[test]
fn a_corner_closes_one_end_of_a_shieldwall() {
    let mut g = copenhagen(A, "X: b2 c2 d5  O: b1 c1  K: f6");
    assert_eq!(sorted(play(&mut g, "d5-d1")), vec!["b1", "c1"]);
}

#[test]
fn the_king_in_a_shieldwall_survives_but_his_defenders_do_not() {
    let mut g = copenhagen(A, "X: c1 d2 e2 f2 g5  O: d1 f1  K: e1");
    assert_eq!(sorted(play(&mut g, "g5-g1")), vec!["d1", "f1"]);
    assert_eq!(g.position().king(), Some(sq("e1")));
    assert_eq!(g.outcome(), Outcome::Ongoing);
}

#[test]
fn no_shieldwall_when_one_member_has_no_enemy_in_front() {
    let mut g = copenhagen(A, "X: c1 d2 f2 g5  O: d1 e1 f1  K: f6");
    assert!(play(&mut g, "g5-g1").is_empty());
}

#[test]
fn the_mover_must_close_the_shieldwall() {
    let mut g = copenhagen(A, "X: c1 f1 d2 e5  O: d1 e1  K: f6");
    assert!(play(&mut g, "e5-e2").is_empty());
}

#[test]
fn defenders_capture_attackers_in_a_shieldwall_and_the_king_may_close_it() {
    let mut g = copenhagen(D, "X: a4 a5 j9  O: b4 b5 a3 d6  K: f6");
    assert_eq!(sorted(play(&mut g, "d6-a6")), vec!["a4", "a5"]);
    let mut g = copenhagen(D, "X: a4 a5 j9  O: b4 b5 a3  K: d6");
    assert_eq!(sorted(play(&mut g, "d6-a6")), vec!["a4", "a5"]);
}

#[test]
fn shieldwalls_can_be_switched_off() {
    let v = variant("base = 'copenhagen'\n[rules]\nshieldwall = false\n");
    let mut g = Game::from_position(position(v, A, "X: c1 d2 e2 f2 g5  O: d1 e1 f1  K: f6"));
    assert!(play(&mut g, "g5-g1").is_empty());
}

// ----- 7. king escape --------------------------------------------------------------------------

#[test]
fn the_king_on_a_corner_wins() {
    let mut g = copenhagen(D, "X: e5 h8  O: b2  K: c1");
    play(&mut g, "c1-a1");
    assert_eq!(g.outcome(), won(D, Reason::KingEscaped));
    assert!(g.legal_moves().is_empty());
    assert!(g.play(mv("h8-h7")).is_err());
}

#[test]
fn the_king_on_the_edge_has_not_escaped_with_corner_escape() {
    let mut g = copenhagen(D, "X: e5 h8  O: b2  K: c3");
    play(&mut g, "c3-c1");
    assert_eq!(g.outcome(), Outcome::Ongoing);
}

#[test]
fn edge_escape_wins_on_any_edge_square_and_frees_the_corners() {
    let v = variant("base = 'copenhagen'\n[rules]\nescape = 'edge'\nexit-fort = false\n");
    let mut g = Game::from_position(position(v, D, "X: e5 h8  O: b2  K: c3"));
    play(&mut g, "c3-c1");
    assert_eq!(g.outcome(), won(D, Reason::KingEscaped));
    let g = Game::from_position(position(v, A, "X: a5 h8  O: b2  K: f6"));
    assert!(is_legal(&g, "a5-a1"));
}

#[test]
fn the_escape_the_king_threatens_is_seen_whoever_is_to_move() {
    // The lines from c3 end at c1, c11, a3 and k3: none of them a corner.
    let g = copenhagen(A, "X: e5 h8  O: b2  K: c3");
    assert_eq!(g.position().king_escape_move(), None);
    // From c1 the king sees a1 (b1 empty) but not k1 (h1 blocks).
    let g = copenhagen(A, "X: e5 h1  O: b2  K: c1");
    assert_eq!(g.position().king_escape_move(), Some(mv("c1-a1")));
    let g = copenhagen(D, "X: e5 h1  O: b2  K: c1");
    assert_eq!(g.position().king_escape_move(), Some(mv("c1-a1")));
    // A piece between him and the corner blocks the line.
    let g = copenhagen(A, "X: e5 b1  O: h1  K: c1");
    assert_eq!(g.position().king_escape_move(), None);
    // With edge escape every edge square is a target.
    let v = variant("base = 'copenhagen'\n[rules]\nescape = 'edge'\nexit-fort = false\n");
    let g = Game::from_position(position(v, A, "X: e5 h8  O: b2  K: c3"));
    assert!(g.position().king_escape_move().is_some());
    let g = Game::from_position(position(v, A, "X: c2 c4 b3 d3  O: h8  K: c3"));
    assert_eq!(g.position().king_escape_move(), None);
    // ... and the king crosses the empty throne (f6) on his way to f11.
    let g = Game::from_position(position(v, A, "X: f3 e4 g4  O: h8  K: f4"));
    assert_eq!(g.position().king_escape_move(), Some(mv("f4-f11")));
}

// ----- 8. exit fort ----------------------------------------------------------------------------

#[test]
fn an_exit_fort_wins_for_the_defenders() {
    let mut g = copenhagen(D, "X: a5 b7  O: d1 e2 f2 g4  K: e1");
    play(&mut g, "g4-g1");
    assert_eq!(g.outcome(), won(D, Reason::ExitFort));
}

#[test]
fn a_larger_fort_wins_and_an_attacker_inside_spoils_it() {
    let fort = "O: c1 c2 d3 e3 f3 g4 g1  K: e1";
    let mut g = copenhagen(D, &format!("X: a5 b7 {fort}"));
    play(&mut g, "g4-g2");
    assert_eq!(g.outcome(), won(D, Reason::ExitFort));
    let mut g = copenhagen(D, &format!("X: a5 b7 d2 {fort}"));
    play(&mut g, "g4-g2");
    assert_eq!(g.outcome(), Outcome::Ongoing);
}

#[test]
fn a_fort_with_a_breakable_wall_is_not_a_fort() {
    // e3 can be taken from d3 and f3.
    let mut g = copenhagen(D, "X: a5 b7  O: d1 f1 d2 f2 e4  K: e1");
    play(&mut g, "e4-e3");
    assert_eq!(g.outcome(), Outcome::Ongoing);
}

#[test]
fn a_king_that_cannot_move_has_no_fort() {
    let mut g = copenhagen(D, "X: a5 b7  O: d1 f1 e4  K: e1");
    play(&mut g, "e4-e2");
    assert_eq!(g.outcome(), Outcome::Ongoing);
}

#[test]
fn exit_forts_can_be_switched_off() {
    let v = variant("base = 'copenhagen'\n[rules]\nexit-fort = false\n");
    let mut g = Game::from_position(position(v, D, "X: a5 b7  O: d1 e2 f2 g4  K: e1"));
    play(&mut g, "g4-g1");
    assert_eq!(g.outcome(), Outcome::Ongoing);
}

/// Plays `text` after setting up `pieces` (defenders to move) in each of the eight symmetries of
/// the board, and returns the eight outcomes.
fn outcomes_in_every_symmetry(variant: &'static Variant, pieces: &str, text: &str) -> Vec<Outcome> {
    let base = position(variant, D, pieces);
    Symmetry::ALL
        .iter()
        .map(|&sym| {
            let mut g = Game::from_position(sym.position(&base));
            let m = sym.apply_move(mv(text), variant.size());
            g.play(m).unwrap_or_else(|e| panic!("{text} under {sym:?}: {e}"));
            g.outcome()
        })
        .collect()
}

/// The king steps onto the edge between his defenders: a5 and a7 stand beside him, c6 is guarded
/// by c5 and c7, which are not on the rim of the fort but guard each other with it.
const EDGE_FORT: &str = "X: f11 f1  O: a7 b7 c7 c6 a5 b5 c5  K: b6";

#[test]
fn the_king_between_his_defenders_on_the_edge_is_an_exit_fort_in_every_symmetry() {
    for outcome in outcomes_in_every_symmetry(Variant::copenhagen(), EDGE_FORT, "b6-a6") {
        assert_eq!(outcome, won(D, Reason::ExitFort));
    }
    let v13 = Variant::preset("copenhagen-13").expect("preset");
    let pieces = "X: g13 g1  O: a7 b7 c7 c6 a5 b5 c5  K: b6";
    for outcome in outcomes_in_every_symmetry(v13, pieces, "b6-a6") {
        assert_eq!(outcome, won(D, Reason::ExitFort));
    }
}

#[test]
fn the_edge_fort_holds_at_every_rank_of_the_edge_next_to_the_corner_too() {
    for (variant, attackers) in [("copenhagen", "X: f11 f1"), ("copenhagen-13", "X: g13 g1")] {
        let v = Variant::preset(variant).expect("preset");
        let size = v.size();
        // The king on a2 would stand next to the corner and could simply escape.
        for rank in 3..size - 1 {
            let (below, at, above) = (rank - 1, rank, rank + 1);
            let pieces =
                format!("{attackers}  O: a{above} b{above} c{above} c{at} a{below} b{below} c{below}  K: b{at}");
            for outcome in outcomes_in_every_symmetry(v, &pieces, &format!("b{at}-a{at}")) {
                assert_eq!(outcome, won(D, Reason::ExitFort), "{variant}, king to a{at}");
            }
        }
    }
}

#[test]
fn a_fort_with_the_king_in_its_middle_or_in_its_corner() {
    // The fort d1 e1 f1 with the king in its middle.
    let middle = "X: a6 k6  O: c1 d2 e2 f2 g3  K: e1";
    for outcome in outcomes_in_every_symmetry(Variant::copenhagen(), middle, "g3-g1") {
        assert_eq!(outcome, won(D, Reason::ExitFort));
    }
    // The fort a4 a5 b4 b5 with the king in its corner on a5.
    let corner = "X: f11 k6  O: a3 b3 c4 c5 a6 b8  K: a5";
    for outcome in outcomes_in_every_symmetry(Variant::copenhagen(), corner, "b8-b6") {
        assert_eq!(outcome, won(D, Reason::ExitFort));
    }
}

#[test]
fn a_fort_misses_when_a_rim_defender_can_be_taken_or_an_attacker_is_on_the_rim() {
    // Without c5 and c7, c6 can be taken from c5 and c7.
    let open = "X: f11 f1  O: a7 b7 c6 a5 b5  K: b6";
    for outcome in outcomes_in_every_symmetry(Variant::copenhagen(), open, "b6-a6") {
        assert_eq!(outcome, Outcome::Ongoing);
    }
    // Without c7 alone, c5 still guards c6: a fort.
    let guarded = "X: f11 f1  O: a7 b7 c6 a5 b5 c5  K: b6";
    for outcome in outcomes_in_every_symmetry(Variant::copenhagen(), guarded, "b6-a6") {
        assert_eq!(outcome, won(D, Reason::ExitFort));
    }
    // An attacker in place of c6.
    let breached = "X: f11 f1 c6  O: a7 b7 c7 a5 b5 c5  K: b6";
    for outcome in outcomes_in_every_symmetry(Variant::copenhagen(), breached, "b6-a6") {
        assert_eq!(outcome, Outcome::Ongoing);
    }
}

#[test]
fn any_defender_move_completes_a_fort_but_not_one_the_king_cannot_leave() {
    // The king already stands on a6; a defender far away moves.
    let fort = "X: f11 f1  O: a7 b7 c7 c6 a5 b5 c5 j3  K: a6";
    for outcome in outcomes_in_every_symmetry(Variant::copenhagen(), fort, "j3-j4") {
        assert_eq!(outcome, won(D, Reason::ExitFort));
    }
    // With a defender on b6 the king cannot move.
    let shut = "X: f11 f1  O: a7 b7 c7 b6 a5 b5 c5 j3  K: a6";
    for outcome in outcomes_in_every_symmetry(Variant::copenhagen(), shut, "j3-j4") {
        assert_eq!(outcome, Outcome::Ongoing);
    }
}

#[test]
fn a_rim_row_on_the_edge_that_ends_on_the_fort_is_safe_from_shieldwalls() {
    // b1 c1 d1 have attackers in front and the corner a1 at one end, but their other end is the
    // king's fort: no attacker can ever close the row there.
    let pieces = "X: b2 c2 d2 k6  O: b1 c1 d1 e2 f2 g3  K: e1";
    for outcome in outcomes_in_every_symmetry(Variant::copenhagen(), pieces, "g3-g1") {
        assert_eq!(outcome, won(D, Reason::ExitFort));
    }
    // The same row is taken at once where it has no fort to lean on.
    let mut g = copenhagen(A, "X: b2 c2 d2 e3 k6  O: b1 c1 d1  K: h8");
    assert_eq!(sorted(play(&mut g, "e3-e1")), vec!["b1", "c1", "d1"]);
}

/// The king steps from f2 to f1: the fort f1 f2 has the rim e1 e2 f3 g2 g1, and f3 is open on e3
/// and g3. A lone attacker cannot take it: a capture needs a second attacker or a hostile square.
const LONE_FORT: &str = "O: e1 g1 e2 g2 f3  K: f2";

#[test]
fn a_lone_attacker_cannot_break_a_fort_that_two_could() {
    let v13 = Variant::preset("copenhagen-13").expect("preset");
    for (variant, attackers) in [(Variant::copenhagen(), "X: h3"), (v13, "X: h3"), (Variant::copenhagen(), "")] {
        let pieces = format!("{attackers}  {LONE_FORT}");
        for outcome in outcomes_in_every_symmetry(variant, &pieces, "f2-f1") {
            assert_eq!(outcome, won(D, Reason::ExitFort), "{pieces} on {}x{}", variant.size(), variant.size());
        }
    }
    // A second attacker that can reach the open flank: e3 and g3 can each hold one.
    for second in ["c9", "e5", "k3"] {
        let pieces = format!("X: h3 {second}  {LONE_FORT}");
        for outcome in outcomes_in_every_symmetry(Variant::copenhagen(), &pieces, "f2-f1") {
            assert_eq!(outcome, Outcome::Ongoing, "{pieces}");
        }
    }
}

#[test]
fn a_lone_attacker_still_takes_a_wall_against_a_corner_or_the_empty_throne() {
    // The fort a3 b3 b2: b1 stands between the corner a1 and c1, where the attacker can arrive.
    let corner = "X: h8  O: a2 b1 a4 b4 c3 c2  K: b3";
    for outcome in outcomes_in_every_symmetry(Variant::copenhagen(), corner, "b3-a3") {
        assert_eq!(outcome, Outcome::Ongoing);
    }
    // With c1 held, b1 is guarded on that axis.
    let held = "X: h8  O: a2 b1 c1 a4 b4 c3 c2  K: b3";
    for outcome in outcomes_in_every_symmetry(Variant::copenhagen(), held, "b3-a3") {
        assert_eq!(outcome, won(D, Reason::ExitFort));
    }
    // The corridor f1-f5 reaches the throne f6, which is in the fort and empty, so hostile: e6,
    // g6 and f7 can each be taken against it by a lone attacker from d6, h6 and f8.
    let corridor = "O: e1 e2 e3 e4 e5 e6 g1 g2 g3 g4 g5 g6 f7";
    let open = format!("X: a9  {corridor}  K: f2");
    for outcome in outcomes_in_every_symmetry(Variant::copenhagen(), &open, "f2-f1") {
        assert_eq!(outcome, Outcome::Ongoing);
    }
    // With d6, h6 and f8 held, every wall has a guard or a flank only a second attacker could
    // use (e7 and g7 beside f7 are no anvil on their own) ...
    let guarded = format!("X: a9  {corridor} d6 h6 f8  K: f2");
    for outcome in outcomes_in_every_symmetry(Variant::copenhagen(), &guarded, "f2-f1") {
        assert_eq!(outcome, won(D, Reason::ExitFort));
    }
    // ... which a second attacker brings.
    let two = format!("X: a9 k9  {corridor} d6 h6 f8  K: f2");
    for outcome in outcomes_in_every_symmetry(Variant::copenhagen(), &two, "f2-f1") {
        assert_eq!(outcome, Outcome::Ongoing);
    }
}

/// The king steps onto a6: the fort a6 b6 has the rim a7 b7 c6 b5 a5, and c6 is open on c5 and
/// c7. But c7 is a pocket: b7, c6, d7 and c8 close it off and none of them can be taken (d7 is
/// guarded by the pocket and d8, c8 by the pocket and b8 or d8, b8 by b7, d8 by d7 and c8). No
/// attacker can ever stand on c7, so it guards c6 as the edge would.
const POCKET_FORT: &str = "O: a7 b7 c6 a5 b5 d7 c8 b8 d8  K: b6";

#[test]
fn a_square_no_attacker_can_reach_guards_a_wall_like_the_edge() {
    let v13 = Variant::preset("copenhagen-13").expect("preset");
    for (variant, attackers) in [(Variant::copenhagen(), "X: f11 f1 k5"), (v13, "X: g13 g1 m5")] {
        let pieces = format!("{attackers}  {POCKET_FORT}");
        for outcome in outcomes_in_every_symmetry(variant, &pieces, "b6-a6") {
            assert_eq!(outcome, won(D, Reason::ExitFort), "{pieces}");
        }
    }
    // The FEN of this fort in docs/rules.md.
    let pieces = format!("X: f11 f1 k5  {POCKET_FORT}");
    let fen = Position::from_fen(Variant::copenhagen(), "5a5/11/11/1ddd7/dd1d7/1kd8/dd8a/11/11/11/5a5 d").expect("FEN");
    assert_eq!(fen.to_fen(), position(Variant::copenhagen(), D, &pieces).to_fen());
    // A pocket with a breakable wall: without d8, d7 can be taken from d6 and d8, and then an
    // attacker can come to c7 and take c6 with one on c5.
    let breakable = "X: f11 f1 k5  O: a7 b7 c6 a5 b5 d7 c8 b8  K: b6";
    for outcome in outcomes_in_every_symmetry(Variant::copenhagen(), breakable, "b6-a6") {
        assert_eq!(outcome, Outcome::Ongoing);
    }
    // Without c8 the pocket is open to c9.
    let open = "X: f11 f1 k5  O: a7 b7 c6 a5 b5 d7 b8 d8  K: b6";
    for outcome in outcomes_in_every_symmetry(Variant::copenhagen(), open, "b6-a6") {
        assert_eq!(outcome, Outcome::Ongoing);
    }
    // An attacker already inside the pocket.
    let held = "X: f11 f1 c7  O: a7 b7 c6 a5 b5 d7 c8 b8 d8  K: b6";
    for outcome in outcomes_in_every_symmetry(Variant::copenhagen(), held, "b6-a6") {
        assert_eq!(outcome, Outcome::Ongoing);
    }
}

/// The rim of the king's fort: the defenders next to the region of empty squares he can reach.
fn fort_walls(p: &Position) -> BTreeSet<Square> {
    let size = p.size();
    let king = p.king().expect("king");
    let mut region = BTreeSet::from([king]);
    let mut todo = vec![king];
    let mut walls = BTreeSet::new();
    while let Some(at) = todo.pop() {
        let (f, r) = (i32::from(at.file()), i32::from(at.rank()));
        for (df, dr) in [(0, 1), (1, 0), (0, -1), (-1, 0)] {
            let (nf, nr) = (f + df, r + dr);
            if nf < 0 || nr < 0 || nf >= i32::from(size) || nr >= i32::from(size) {
                continue;
            }
            let next = Square::new(nf as u8, nr as u8);
            match p.piece_at(next) {
                None if region.insert(next) => todo.push(next),
                Some(Piece::Defender) => {
                    walls.insert(next);
                }
                _ => {}
            }
        }
    }
    walls
}

/// Every fort the tests above call unbreakable, checked against play: the attackers move (each
/// time no legal attacker move may take a wall; they take some other defender when they can,
/// else move at random) and the defenders stand still but for the king, who shuttles inside the
/// fort, which must stay a fort each time he is back on the edge.
#[test]
fn forts_declared_unbreakable_survive_attackers_that_try() {
    let v13 = Variant::preset("copenhagen-13").expect("preset");
    let forts: Vec<(&'static Variant, String, &str)> = vec![
        (Variant::copenhagen(), EDGE_FORT.to_string(), "b6-a6"),
        (Variant::copenhagen(), "X: b2 c2 d2 k6  O: b1 c1 d1 e2 f2 g3  K: e1".to_string(), "g3-g1"),
        (Variant::copenhagen(), format!("X: h3  {LONE_FORT}"), "f2-f1"),
        (v13, format!("X: h3  {LONE_FORT}"), "f2-f1"),
        (Variant::copenhagen(), "X: h8  O: a2 b1 c1 a4 b4 c3 c2  K: b3".to_string(), "b3-a3"),
        (
            Variant::copenhagen(),
            "X: a9  O: e1 e2 e3 e4 e5 e6 g1 g2 g3 g4 g5 g6 f7 d6 h6 f8  K: f2".to_string(),
            "f2-f1",
        ),
        (Variant::copenhagen(), format!("X: f11 f1 k5 d4 h9 j2  {POCKET_FORT}"), "b6-a6"),
        (v13, format!("X: g13 g1 m5 d4 h9 j2  {POCKET_FORT}"), "b6-a6"),
    ];
    for (variant, pieces, text) in &forts {
        let base = position(variant, D, pieces);
        for sym in Symmetry::ALL {
            for seed in 0..4 {
                let mut rng = StdRng::seed_from_u64(seed);
                let mut p = sym.position(&base);
                p.play(sym.apply_move(mv(text), variant.size())).expect("legal");
                assert!(p.exit_fort(), "{pieces} under {sym:?}");
                let walls = fort_walls(&p);
                for ply in 0..150 {
                    let moves = p.legal_moves();
                    let mut takes = Vec::new();
                    for &m in &moves {
                        let mut next = p;
                        let played = next.play_unchecked(m);
                        let taken: Vec<_> = played.captured.iter().filter(|sq| walls.contains(sq)).collect();
                        assert!(taken.is_empty(), "{pieces} under {sym:?}, ply {ply}: {m} takes {taken:?}");
                        if !played.captured.is_empty() {
                            takes.push(m);
                        }
                    }
                    let choice: &[Move] = if takes.is_empty() { &moves } else { &takes };
                    if choice.is_empty() {
                        break;
                    }
                    p.play_unchecked(choice[rng.random_range(0..choice.len())]);
                    let king = p.king().expect("king");
                    let shuttles: Vec<_> = p.legal_moves().into_iter().filter(|m| m.from == king).collect();
                    assert!(!shuttles.is_empty(), "{pieces} under {sym:?}, ply {ply}: the king is stuck");
                    let shuttle = shuttles[rng.random_range(0..shuttles.len())];
                    p.play_unchecked(shuttle);
                    let last = variant.size() - 1;
                    let on_edge = [shuttle.to.file(), shuttle.to.rank()].iter().any(|&c| c == 0 || c == last);
                    assert!(!on_edge || p.exit_fort(), "{pieces} under {sym:?}, ply {ply}: no fort after {shuttle}");
                    assert_eq!(fort_walls(&p), walls, "{pieces} under {sym:?}, ply {ply}");
                }
            }
        }
    }
}

// ----- 9. encirclement -------------------------------------------------------------------------

const RING: &str = "X: d6 e7 f7 h6 g5 f5 e5 g9  O: e6  K: f6";

#[test]
fn encircling_every_defender_wins_for_the_attackers() {
    let mut g = copenhagen(A, RING);
    play(&mut g, "g9-g7");
    assert_eq!(g.outcome(), won(A, Reason::Encirclement));
}

#[test]
fn one_defender_outside_the_ring_breaks_the_encirclement() {
    let mut g = copenhagen(A, &format!("{RING} O: b9"));
    play(&mut g, "g9-g7");
    assert_eq!(g.outcome(), Outcome::Ongoing);
}

#[test]
fn a_gap_in_the_ring_breaks_the_encirclement() {
    let mut g = copenhagen(A, RING);
    play(&mut g, "g9-g8");
    assert_eq!(g.outcome(), Outcome::Ongoing);
}

#[test]
fn encirclement_can_be_switched_off() {
    let v = variant("base = 'copenhagen'\n[rules]\nencirclement = false\n");
    let mut g = Game::from_position(position(v, A, RING));
    play(&mut g, "g9-g7");
    assert_eq!(g.outcome(), Outcome::Ongoing);
}

// ----- 10. repetition --------------------------------------------------------------------------

fn shuffle(g: &mut Game, times: usize) {
    for _ in 0..times {
        for m in ["b3-b4", "j9-j8", "b4-b3", "j8-j9"] {
            assert_eq!(g.outcome(), Outcome::Ongoing);
            play(g, m);
        }
    }
}

#[test]
fn the_third_repetition_loses_for_the_defenders() {
    let mut g = copenhagen(A, "X: b3  O: j9  K: f6");
    shuffle(&mut g, 1);
    assert_eq!(g.repetitions(), 2);
    assert_eq!(g.outcome(), Outcome::Ongoing);
    shuffle(&mut g, 1);
    assert_eq!(g.repetitions(), 3);
    assert_eq!(g.outcome(), won(A, Reason::Repetition));
}

#[test]
fn undo_restores_history_and_outcome() {
    let mut g = copenhagen(A, "X: b3  O: j9  K: f6");
    shuffle(&mut g, 2);
    assert_eq!(g.undo(), Some(mv("j8-j9")));
    assert_eq!(g.outcome(), Outcome::Ongoing);
    assert_eq!(g.repetitions(), 2);
}

#[test]
fn a_third_repetition_one_move_away_is_flagged_without_playing_a_move() {
    // Searches look for moves that end the game by repetition only where the flag is up; it is up
    // once a position with the other side to move has occurred twice (plies 5 to 7 here), and at
    // ply 7 the defenders' j8-j9 would bring the start back a third time.
    let mut g = copenhagen(A, "X: b3  O: j9  K: f6");
    let mut flags = Vec::new();
    for m in ["b3-b4", "j9-j8", "b4-b3", "j8-j9", "b3-b4", "j9-j8", "b4-b3", "j8-j9"] {
        let ends_by_repetition = g.legal_moves().iter().any(|&mv| {
            let mut next = g.clone();
            next.play(mv).is_ok() && next.outcome() == won(A, Reason::Repetition)
        });
        let flag = g.a_move_may_repeat_thrice();
        assert!(flag || !ends_by_repetition, "ply {}: a repeating move without the flag", g.ply());
        assert_eq!(ends_by_repetition, g.ply() == 7, "ply {}", g.ply());
        flags.push(flag);
        play(&mut g, m);
    }
    assert_eq!(flags, [false, false, false, false, false, true, true, true]);
    let mut tablut = game("tablut", A, "X: b3  O: h8  K: e5");
    for m in ["b3-b4", "h8-h7", "b4-b3", "h7-h8", "b3-b4", "h8-h7", "b4-b3"] {
        play(&mut tablut, m);
        assert!(!tablut.a_move_may_repeat_thrice(), "tablut has no repetition rule");
    }
}

#[test]
fn tablut_allows_any_number_of_repetitions() {
    let mut g = game("tablut", A, "X: b3  O: h8  K: e5");
    for _ in 0..4 {
        for m in ["b3-b4", "h8-h7", "b4-b3", "h7-h8"] {
            play(&mut g, m);
        }
    }
    assert_eq!(g.outcome(), Outcome::Ongoing);
}

// ----- 11. no legal move, 12. move limit -------------------------------------------------------

#[test]
fn a_player_without_moves_loses() {
    let mut g = copenhagen(A, "X: b1 c2 d5  K: c1");
    play(&mut g, "d5-d1");
    assert_eq!(g.outcome(), won(A, Reason::NoMoves));
}

#[test]
fn a_player_with_a_move_left_plays_on() {
    let mut g = copenhagen(A, "X: b1 c2 d5  K: c1");
    play(&mut g, "d5-d2");
    assert_eq!(g.outcome(), Outcome::Ongoing);
}

#[test]
fn the_move_limit_draws_without_captures() {
    let v = variant("base = 'copenhagen'\n[rules]\nmove-limit = 2\n");
    let mut g = Game::from_position(position(v, A, "X: b3  O: j9  K: f6"));
    for m in ["b3-b4", "j9-j8", "b4-b5"] {
        play(&mut g, m);
        assert_eq!(g.outcome(), Outcome::Ongoing);
    }
    play(&mut g, "j8-j7");
    assert_eq!(g.outcome(), Outcome::Draw { reason: Reason::MoveLimit });
}

// ----- Tablut ----------------------------------------------------------------------------------

#[test]
fn tablut_throne_cannot_be_passed_by_soldiers_but_the_king_may() {
    let g = game("tablut", A, "X: e3  O: a5  K: c8");
    assert!(is_legal(&g, "e3-e4"));
    assert!(!is_legal(&g, "e3-e5"));
    assert!(!is_legal(&g, "e3-e6"));
    let g = game("tablut", D, "X: a6  O: a5  K: e3");
    assert!(is_legal(&g, "e3-e5"));
    assert!(is_legal(&g, "e3-e7"));
}

#[test]
fn tablut_throne_is_hostile_to_defenders_even_under_the_king() {
    let mut g = game("tablut", A, "X: h7  O: e6  K: e5");
    assert_eq!(play(&mut g, "h7-e7"), vec!["e6"]);
}

#[test]
fn tablut_king_on_the_edge_is_captured_by_three() {
    let mut g = game("tablut", A, "X: b1 c2 d5  K: c1");
    play(&mut g, "d5-d1");
    assert_eq!(g.outcome(), won(A, Reason::KingCaptured));
}

#[test]
fn tablut_king_next_to_the_throne_is_captured_by_three() {
    let mut g = game("tablut", A, "X: e7 d6 h6  O: a3  K: e6");
    play(&mut g, "h6-f6");
    assert_eq!(g.outcome(), won(A, Reason::KingCaptured));
}

#[test]
fn tablut_has_no_shieldwall_fort_or_encirclement() {
    let mut g = game("tablut", A, "X: c1 d2 e2 f5  O: d1 e1  K: e5");
    assert_eq!(play(&mut g, "f5-f1"), Vec::<String>::new());
    let mut g = game("tablut", A, "X: c5 d6 d4 e3  O: d5  K: e5");
    play(&mut g, "e3-e4");
    assert_ne!(g.outcome().reason(), Some(Reason::Encirclement));
}

#[test]
fn tablut_without_moves_is_a_draw() {
    let mut g = game("tablut", A, "X: a3 b2 h5  O: a2");
    play(&mut g, "h5-h4");
    assert_eq!(g.outcome(), Outcome::Draw { reason: Reason::NoMoves });
}

#[test]
fn custodial_king_capture_option() {
    let v = variant("base = 'copenhagen'\n[rules]\nking-capture = 'custodial'\n");
    let mut g = Game::from_position(position(v, A, "X: d5 h5  O: b2  K: e5"));
    play(&mut g, "h5-f5");
    assert_eq!(g.outcome(), won(A, Reason::KingCaptured));
}

// ----- presets and variant files ----------------------------------------------------------------

#[test]
fn preset_layouts_have_the_right_pieces() {
    let count = |name: &str| {
        let p = Position::start(Variant::preset(name).unwrap());
        (p.size(), p.count(Piece::Attacker), p.count(Piece::Defender), p.count(Piece::King))
    };
    assert_eq!(count("copenhagen"), (11, 24, 12, 1));
    assert_eq!(count("copenhagen-13"), (13, 32, 16, 1));
    assert_eq!(count("tablut"), (9, 16, 8, 1));
    assert_eq!(count("brandubh"), (7, 8, 4, 1));
    assert_eq!(Position::start(Variant::preset("tablut").unwrap()).king(), Some(sq("e5")));
}

#[test]
fn variant_files_load_and_errors_name_the_problem() {
    let v = Variant::from_toml(
        "name = 'mini'\nlayout = '''\n..X..\n..O..\nXOKOX\n..O..\n..X..\n'''\n[rules]\nrepetition = 'off'\n",
    )
    .unwrap();
    assert_eq!(v.size(), 5);
    assert_eq!(v.name(), "mini");
    let e = Variant::from_toml("base = 'copenhagen'\n[rules]\nshieldwal = false\n").unwrap_err();
    assert!(e.to_string().contains("shieldwal"), "{e}");
    let e = Variant::from_toml("base = 'chess'\n").unwrap_err();
    assert!(e.to_string().contains("chess"), "{e}");
    let e = Variant::from_toml("layout = '''\n..X..\n..O..\nXOKOZ\n..O..\n..X..\n'''\n").unwrap_err();
    assert!(e.to_string().contains("line 4, column 5"), "{e}");
    let e = Variant::from_toml("layout = '''\n..X..\n..O..\nXOOOX\n..K..\n..X..\n'''\n").unwrap_err();
    assert!(e.to_string().contains("restricted"), "{e}");
    assert!(Variant::from_toml("layout = '..X..'").is_err());
    assert!(Variant::from_toml("[rules]\nescape = 'sky'\n").is_err());
}

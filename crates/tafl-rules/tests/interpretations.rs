//! The interpretations docs/rules.md and the crate docs state where the rules text is silent, the
//! rule options no other test exercises, and the rules on the 13x13 board (256-bit boards), each
//! with a concrete position: the case that fires and the near miss. (Exit forts are tested in
//! `rules.rs`.)
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::*;
use tafl_rules::{Game, Outcome, Reason, Side};

/// Plays `moves` in order; the game must stay on until the last.
fn play_all(g: &mut Game, moves: &[&str]) {
    for m in moves {
        assert_eq!(g.outcome(), Outcome::Ongoing, "before {m}");
        play(g, m);
    }
}

// ----- encirclement ----------------------------------------------------------------------------

/// A closed ring around e6, f6, g6 and a far attacker on b2 that can move without opening it.
const CLOSED_RING: &str = "X: d6 e7 f7 g7 h6 g5 f5 e5 b2  O: e6  K: f6";

#[test]
fn encirclement_is_judged_after_attacker_moves_only() {
    // With the attackers to move, the position is judged as if the defenders had just moved
    // into it: no encirclement yet. Any attacker move then ends the game.
    let mut g = copenhagen(A, CLOSED_RING);
    assert_eq!(g.outcome(), Outcome::Ongoing);
    play(&mut g, "b2-b3");
    assert_eq!(g.outcome(), won(A, Reason::Encirclement));
    // The same ring with the defenders to move: the attackers moved last, it is over at once.
    assert_eq!(copenhagen(D, CLOSED_RING).outcome(), won(A, Reason::Encirclement));
}

#[test]
fn a_defender_on_the_edge_breaks_the_encirclement_even_walled_in() {
    // The ring closes with g9-g7; a5 is walled in by a4, a6 and b5 but stands on the edge.
    let ring = "X: d6 e7 f7 h6 g5 f5 e5 g9  O: e6  K: f6";
    let mut g = copenhagen(A, &format!("{ring}  X: a4 a6 b5  O: a5"));
    play(&mut g, "g9-g7");
    assert_eq!(g.outcome(), Outcome::Ongoing);
    // Near miss: the same box one file in (c9 walled in by b9, d9, c10, c8) is encircled.
    let mut g = copenhagen(A, &format!("{ring}  X: b9 d9 c10 c8  O: c9"));
    play(&mut g, "g9-g7");
    assert_eq!(g.outcome(), won(A, Reason::Encirclement));
}

// ----- repetition ------------------------------------------------------------------------------

#[test]
fn the_defenders_lose_a_repetition_the_attackers_complete() {
    // Defenders to move: the start position recurs after each attacker move b4-b3, so the
    // attackers make the third occurrence; the defenders still lose.
    let mut g = copenhagen(D, "X: b3  O: j9  K: f6");
    let cycle = ["j9-j8", "b3-b4", "j8-j9", "b4-b3"];
    play_all(&mut g, &cycle);
    play_all(&mut g, &cycle);
    assert_eq!(g.repetitions(), 3);
    assert_eq!(g.moves().last().map(ToString::to_string).as_deref(), Some("b4-b3"));
    assert_eq!(g.outcome(), won(A, Reason::Repetition));
}

#[test]
fn repetition_counts_the_same_side_to_move_only() {
    // A 5-ply cycle (the attacker walks b3-b5-b4-b3, the defender j9-j8-j9) brings the board
    // back with the other side to move: those occurrences do not count together.
    let mut g = copenhagen(A, "X: b3  O: j9  K: f6");
    play_all(&mut g, &["b3-b5", "j9-j8", "b5-b4", "j8-j9", "b4-b3"]);
    assert_eq!(g.repetitions(), 1, "same board, defenders to move now");
    // The same the other way round: the defender walks three moves, the attacker two.
    play_all(&mut g, &["j9-j7", "b3-b4", "j7-j8", "b4-b3", "j8-j9"]);
    // Ten plies: the board of the start with the attackers to move, for the second time.
    assert_eq!(g.repetitions(), 2);
    assert_eq!(g.outcome(), Outcome::Ongoing);
}

#[test]
fn repetition_can_be_a_draw() {
    let v = variant("base = 'copenhagen'\n[rules]\nrepetition = 'draw'\n");
    let mut g = Game::from_position(position(v, A, "X: b3  O: j9  K: f6"));
    let cycle = ["b3-b4", "j9-j8", "b4-b3", "j8-j9"];
    play_all(&mut g, &cycle);
    play_all(&mut g, &cycle);
    assert_eq!(g.outcome(), Outcome::Draw { reason: Reason::Repetition });
}

// ----- the order of checks ---------------------------------------------------------------------

#[test]
fn an_escape_is_judged_before_the_attackers_lack_of_moves() {
    // No attackers at all: the king's escape leaves them without a move, but the reason is
    // the escape.
    let mut g = copenhagen(D, "O: e5  K: c1");
    play(&mut g, "c1-a1");
    assert_eq!(g.outcome(), won(D, Reason::KingEscaped));
}

#[test]
fn an_encirclement_is_judged_before_the_defenders_lack_of_moves() {
    // g8-g6 closes a ring so tight that neither e6 nor the king can move.
    let mut g = copenhagen(A, "X: d6 e7 f7 g8 f5 e5  O: e6  K: f6");
    play(&mut g, "g8-g6");
    assert!(g.position().legal_moves().is_empty());
    assert_eq!(g.outcome(), won(A, Reason::Encirclement));
}

#[test]
fn a_repetition_is_judged_before_the_move_limit() {
    // Move limit 4 (8 quiet plies): the eighth ply also makes the third occurrence.
    let v = variant("base = 'copenhagen'\n[rules]\nmove-limit = 4\n");
    let mut g = Game::from_position(position(v, A, "X: b3  O: j9  K: f6"));
    let cycle = ["b3-b4", "j9-j8", "b4-b3", "j8-j9"];
    play_all(&mut g, &cycle);
    play_all(&mut g, &cycle);
    assert_eq!(g.plies_since_capture(), 8);
    assert_eq!(g.outcome(), won(A, Reason::Repetition));
}

// ----- rule options ----------------------------------------------------------------------------

#[test]
fn a_capture_resets_the_move_limit() {
    // Move limit 2: four quiet plies draw. The capture on the third ply starts the count again.
    let v = variant("base = 'copenhagen'\n[rules]\nmove-limit = 2\n");
    let mut g = Game::from_position(position(v, A, "X: b3 c5 e8  O: j9 d5  K: f6"));
    play_all(&mut g, &["b3-b4", "j9-j8"]);
    assert_eq!(play(&mut g, "e8-e5"), vec!["d5"]);
    assert_eq!(g.plies_since_capture(), 0);
    play_all(&mut g, &["j8-j7", "b4-b3", "j7-j6"]);
    assert_eq!(g.outcome(), Outcome::Ongoing, "six plies, three since the capture");
    play(&mut g, "b3-b4");
    assert_eq!(g.outcome(), Outcome::Draw { reason: Reason::MoveLimit });
}

#[test]
fn a_throne_never_hostile_to_defenders_captures_none() {
    let v = variant("base = 'copenhagen'\n[rules]\nthrone-hostile-to-defenders = 'never'\n");
    let mut g = Game::from_position(position(v, A, "X: h8  O: f7  K: b2"));
    assert!(play(&mut g, "h8-f8").is_empty());
    // Still hostile to attackers.
    let mut g = Game::from_position(position(v, D, "X: f7  O: h8  K: b2"));
    assert_eq!(play(&mut g, "h8-f8"), vec!["f7"]);
}

#[test]
fn a_throne_not_hostile_to_attackers_captures_none() {
    let v = variant("base = 'copenhagen'\n[rules]\nthrone-hostile-to-attackers = false\n");
    let mut g = Game::from_position(position(v, D, "X: f7  O: h8  K: b2"));
    assert!(play(&mut g, "h8-f8").is_empty());
    // Still hostile to defenders when empty.
    let mut g = Game::from_position(position(v, A, "X: h8  O: f7  K: b2"));
    assert_eq!(play(&mut g, "h8-f8"), vec!["f7"]);
}

// ----- 13x13 -----------------------------------------------------------------------------------

fn c13(side: Side, pieces: &str) -> Game {
    game("copenhagen-13", side, pieces)
}

#[test]
fn thirteen_captures_beyond_the_eleventh_rank() {
    let mut g = c13(A, "X: h12 j9  O: i12  K: c3");
    assert_eq!(play(&mut g, "j9-j12"), vec!["i12"]);
    // Near miss: a gap at h12.
    let mut g = c13(A, "X: g12 j9  O: i12  K: c3");
    assert!(play(&mut g, "j9-j12").is_empty());
}

#[test]
fn thirteen_corners_and_throne_are_hostile() {
    let mut g = c13(A, "X: k9  O: l13  K: c3");
    assert_eq!(play(&mut g, "k9-k13"), vec!["l13"]);
    // The throne is g7 on 13x13: empty, it captures against attackers too.
    let mut g = c13(D, "X: g8  O: i9  K: c3");
    assert_eq!(play(&mut g, "i9-g9"), vec!["g8"]);
    // f6 is no throne here (it is on 11x11).
    let mut g = c13(D, "X: f7  O: h8  K: c3");
    assert!(play(&mut g, "h8-f8").is_empty());
}

#[test]
fn thirteen_shieldwall_against_the_far_corner() {
    let mut g = c13(A, "X: j12 k12 l12 i9  O: j13 k13 l13  K: c3");
    assert_eq!(sorted(play(&mut g, "i9-i13")), vec!["j13", "k13", "l13"]);
    // Near miss: k13 has no attacker in front.
    let mut g = c13(A, "X: j12 l12 i9  O: j13 k13 l13  K: c3");
    assert!(play(&mut g, "i9-i13").is_empty());
}

#[test]
fn thirteen_corner_escape() {
    let mut g = c13(D, "X: b2  O: c5  K: e13");
    play(&mut g, "e13-m13");
    assert_eq!(g.outcome(), won(D, Reason::KingEscaped));
    // Near miss: a square that is a corner on 11x11 only.
    let mut g = c13(D, "X: b2  O: c5  K: e11");
    play(&mut g, "e11-k11");
    assert_eq!(g.outcome(), Outcome::Ongoing);
}

#[test]
fn thirteen_encirclement() {
    // A ring around h10, i10, j10 closed by j13-j11.
    let ring = "X: g10 h11 i11 k10 j9 i9 h9 j13  O: h10  K: i10";
    let mut g = c13(A, ring);
    play(&mut g, "j13-j11");
    assert_eq!(g.outcome(), won(A, Reason::Encirclement));
    // Near miss: a defender outside the ring.
    let mut g = c13(A, &format!("{ring}  O: c4"));
    play(&mut g, "j13-j11");
    assert_eq!(g.outcome(), Outcome::Ongoing);
}

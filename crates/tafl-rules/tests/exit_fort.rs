//! The exit fort of RULES.md (rule 8) with concrete positions, the case that fires and the near
//! miss, and in every symmetry: the rule with the most interpretation (see tafl-rules' crate
//! docs), in a file of its own beside `rules.rs`.

mod common;

use std::collections::BTreeSet;

use common::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tafl_rules::{Game, Move, Outcome, Piece, Position, Reason, Square, Symmetry, Variant};

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

//! Every rule of RULES.md with concrete positions: the case that fires and the near miss.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::*;
use tafl_rules::{Game, Outcome, Piece, Position, Reason, Variant};

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

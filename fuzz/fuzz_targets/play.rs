#![no_main]
//! Random move bytes: each byte pair picks a legal move or tries an arbitrary (mostly illegal)
//! one. Checked play must refuse illegal moves without changing anything, and every generated
//! move must be accepted by the checker.
use libfuzzer_sys::fuzz_target;
use tafl_rules::{Game, Move, PRESETS, Square, Variant};

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else { return };
    let variant = Variant::preset(PRESETS[first as usize % PRESETS.len()]).unwrap();
    let size = variant.size();
    let mut game = Game::new(variant);
    for pair in rest.chunks_exact(2) {
        let moves = game.legal_moves();
        if moves.is_empty() {
            break;
        }
        if pair[0] & 1 == 0 {
            let m = moves[pair[1] as usize % moves.len()];
            assert!(game.position().check_move(m).is_ok(), "{m}");
            game.play(m).unwrap();
        } else {
            let from = Square::new(pair[0] >> 4, pair[1] & 15);
            let to = Square::new((pair[0] >> 1) & 7, pair[1] >> 4);
            let m = Move::new(from, to);
            let before = game.position().to_fen();
            match game.play(m) {
                Ok(_) => assert!(moves.contains(&m)),
                Err(_) => {
                    assert!(!moves.contains(&m) || !from.on_board(size));
                    assert_eq!(game.position().to_fen(), before);
                }
            }
        }
    }
});

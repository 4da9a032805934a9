#![no_main]
//! Random move bytes: each three bytes pick a legal move or try an arbitrary (mostly illegal)
//! one. Checked play must refuse illegal moves without changing anything, and every generated
//! move must be accepted by the checker.
use libfuzzer_sys::fuzz_target;
use tafl_rules::{Game, Move, PRESETS, Square, Variant};

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else { return };
    let variant = Variant::preset(PRESETS[first as usize % PRESETS.len()]).unwrap();
    let size = variant.size();
    let mut game = Game::new(variant);
    // Three bytes a step: the first picks a legal move or an arbitrary one, the others give
    // its from and to squares (file in the low nibble, rank in the high one), so that every
    // square of a 15x15 board can be named, off-board ones included.
    for step in rest.chunks_exact(3) {
        let moves = game.legal_moves();
        if moves.is_empty() {
            break;
        }
        if step[0] & 1 == 0 {
            let m = moves[((usize::from(step[1]) << 8) | usize::from(step[2])) % moves.len()];
            assert!(game.position().check_move(m).is_ok(), "{m}");
            game.play(m).unwrap();
        } else {
            let from = Square::new(step[1] & 15, step[1] >> 4);
            let to = Square::new(step[2] & 15, step[2] >> 4);
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

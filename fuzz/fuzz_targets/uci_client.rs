#![no_main]
//! UCI client side: whatever bytes an external engine writes, the line reader and the reply
//! parser never panic; values stay in [-1, 1] and best moves, when they parse, stay on the board.
use libfuzzer_sys::fuzz_target;
use tafl_protocol::htp::{CappedLines, MAX_LINE};
use tafl_protocol::uci_client::{Reply, parse_reply};
use tafl_rules::parse_move;

fuzz_target!(|data: &[u8]| {
    for line in CappedLines::new(data) {
        // Each invalid byte becomes U+FFFD (3 bytes): at most 3 bytes per byte kept.
        assert!(line.len() <= 3 * MAX_LINE && !line.contains('\n'));
        match parse_reply(&line) {
            Reply::Info(info) => {
                if let Some(v) = info.value() {
                    assert!((-1.0..=1.0).contains(&v), "{line:?} gave {v}");
                }
                assert!(info.winrate.is_none_or(|w| (0.0..=1.0).contains(&w)), "{line:?}");
                assert!(info.pv.iter().all(|m| !m.is_empty() && !m.contains(char::is_whitespace)), "{line:?}");
            }
            Reply::BestMove(text) => {
                assert!(!text.contains(char::is_whitespace), "{line:?}");
                for size in [7u8, 9, 11, 13] {
                    if let Ok(m) = parse_move(&text, size) {
                        assert!(m.mv.from.on_board(size) && m.mv.to.on_board(size), "{text:?} gave {}", m.mv);
                    }
                }
            }
            Reply::Option(option) => assert!(option.vars.iter().all(|v| !v.contains('\n'))),
            _ => {}
        }
    }
});

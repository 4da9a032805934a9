#![no_main]
//! HTP client side: whatever bytes an external engine writes, the client's line reader and its
//! reading of `generate_move` answers never panic; lines stay capped and moves stay on the board.
use libfuzzer_sys::fuzz_target;
use tafl_protocol::htp::{CappedLines, MAX_LINE, read_generated};
use tafl_rules::Side;

fuzz_target!(|data: &[u8]| {
    for line in CappedLines::new(data) {
        // Each invalid byte becomes U+FFFD (3 bytes): at most 3 bytes per byte kept.
        assert!(line.len() <= 3 * MAX_LINE && !line.contains('\n'));
        let reply = line.strip_prefix('=').unwrap_or(&line).trim();
        for (side, size) in [(Side::Attackers, 11u8), (Side::Defenders, 13), (Side::Defenders, 7)] {
            if let Ok(Some(mv)) = read_generated(reply, side, size) {
                assert!(mv.from.on_board(size) && mv.to.on_board(size), "{reply:?} gave {mv}");
            }
        }
    }
});

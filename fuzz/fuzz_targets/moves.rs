#![no_main]
//! Move and square parsing never panic; a parsed move prints back to an equivalent text.
use libfuzzer_sys::fuzz_target;
use tafl_rules::{parse_move, parse_square};

fuzz_target!(|text: &str| {
    let _ = parse_square(text, 11);
    if let Ok(m) = parse_move(text, 13) {
        assert_eq!(parse_move(&m.mv.to_string(), 13).unwrap().mv, m.mv);
    }
});

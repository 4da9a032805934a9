#![no_main]
//! FEN parsing never panics, and whatever parses prints back to the same position.
use libfuzzer_sys::fuzz_target;
use tafl_rules::{PRESETS, Position, Variant};

fuzz_target!(|text: &str| {
    for name in PRESETS {
        let v = Variant::preset(name).unwrap();
        if let Ok(p) = Position::from_fen(v, text) {
            assert_eq!(Position::from_fen(v, &p.to_fen()).unwrap(), p);
        }
    }
});

#![no_main]
//! Game records in the `moves` format (`tafl replay --format moves`) on every preset: parsing
//! never panics, and replaying whatever parses never panics.
use libfuzzer_sys::fuzz_target;
use tafl_rules::notation::parse_move_list;
use tafl_rules::replay::replay;
use tafl_rules::{PRESETS, Position, Variant};

fuzz_target!(|text: &str| {
    for name in PRESETS {
        let v = Variant::preset(name).expect("a preset");
        if let Ok((plies, _timeout)) = parse_move_list(text, v.size()) {
            let report = replay(1, Position::start(v), &plies, false);
            assert!(report.plies <= plies.len());
        }
    }
});

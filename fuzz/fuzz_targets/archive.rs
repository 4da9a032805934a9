#![no_main]
//! Archive lines: parsing never panics, and replaying whatever parses never panics.
use libfuzzer_sys::fuzz_target;
use tafl_rules::notation::parse_archive_line;
use tafl_rules::replay::replay;
use tafl_rules::{Position, Variant};

fuzz_target!(|text: &str| {
    if let Ok(game) = parse_archive_line(text, 11) {
        let report = replay(1, Position::start(Variant::copenhagen()), &game.plies, true);
        assert!(report.plies <= game.plies.len());
    }
});

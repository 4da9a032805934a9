//! Perft counts from the start positions.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
use tafl_rules::{Position, Variant};

#[test]
fn copenhagen_start_counts() {
    let start = Position::start(Variant::copenhagen());
    assert_eq!(start.count_legal_moves(), 116);
    assert_eq!(start.legal_moves().len(), 116);
    for (depth, expected) in [(1, 116), (2, 6_788), (3, 806_344)] {
        assert_eq!(start.perft(depth, true), expected, "bulk perft({depth})");
        assert_eq!(start.perft(depth, false), expected, "perft({depth})");
    }
}

/// Depth 4 as CI runs it (the test profile is optimised): about 50 M moves made one by one,
/// 4-6 s on 2 loaded cores. The counts of depths 1-4 are those of an independent
/// implementation: `scripts/reference-perft.sh` (the move generator of the reference engine,
/// crate hnefatafl-copenhagen 6.4.1) printed 116, 6 788, 806 344 and 50 456 804.
#[test]
fn copenhagen_start_perft_4() {
    let start = Position::start(Variant::copenhagen());
    assert_eq!(start.perft(4, true), 50_456_804, "bulk perft(4)");
    assert_eq!(start.perft(4, false), 50_456_804, "perft(4)");
}

#[test]
fn other_presets_generate_moves_for_both_widths() {
    for name in tafl_rules::PRESETS {
        let v = Variant::preset(name).unwrap();
        let start = Position::start(v);
        let listed = start.legal_moves().len() as u64;
        assert!(listed > 0, "{name}");
        assert_eq!(start.perft(1, true), listed, "{name}");
        assert_eq!(start.perft(2, true), start.perft(2, false), "{name}");
        assert_eq!(start.perft(3, true), start.perft(3, false), "{name}");
    }
}

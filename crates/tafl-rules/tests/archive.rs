//! All 876 recorded games of the archive replay with every ply legal and every capture matched,
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! and where the rules end a game, the recorded result agrees.

use tafl_rules::notation::parse_archive_line;
use tafl_rules::replay::replay;
use tafl_rules::{Position, Side, Variant};

const ARCHIVE: &str = include_str!("data/copenhagen-11x11-archive.csv");

#[test]
fn every_archived_game_replays_legally_with_matching_captures() {
    let start = Position::start(Variant::copenhagen());
    let mut games = 0;
    let mut decided = 0;
    let mut run_on_after_repetition = 0;
    for (i, line) in ARCHIVE.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        games += 1;
        let record = parse_archive_line(line, 11).unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        let report = replay(games, start, &record.plies, true);
        assert!(report.legal, "game {games}: {:?}", report.error);
        assert!(report.capture_mismatches.is_empty(), "game {games}: {:?}", report.capture_mismatches);
        let Some(outcome) = &report.outcome else { continue };
        // The server did not enforce repetition; every other ending must match the record.
        if outcome.reason == "repetition" {
            run_on_after_repetition += usize::from(report.ended_early);
        } else {
            decided += 1;
            let expected = match outcome.winner {
                Some(Side::Attackers) => "Black",
                Some(Side::Defenders) => "White",
                None => "Draw",
            };
            assert_eq!(record.result.as_deref(), Some(expected), "game {games}: {outcome:?}");
            assert!(!report.ended_early, "game {games} goes on after {outcome:?}");
        }
    }
    assert_eq!(games, 876);
    assert!(decided >= 150, "only {decided} games ended by the rules");
    // The figure of docs/rules.md: the games the server let run on after a third repetition.
    assert_eq!(run_on_after_repetition, 6);
}

//! Game records: the archive format that `tafl replay` reads, and OpenTafl game files.
//!
//! **Archive line** (see `tafl_rules::notation`): `moves,attacker_captures,defender_captures,result`,
//! moves `from-to[xSQ…]` separated by spaces (captures always written, sorted), result `Black`
//! (attackers won), `White` (defenders won) or `Draw`. A forfeit (an engine died, timed out or
//! moved illegally) ends the moves with the token `timeout`: the side to move lost. The record
//! starts at the variant's start (random openings are moves from it); for FEN openings the
//! arena writes a `# start FEN` comment line before the game.
//!
//! **OpenTafl game file** (`.otg`), after the OpenTafl notation spec, section 4: tag lines
//! `[key:value]`, an OTN rules string (`dim:11 … start:/…/`) and numbered turns
//! `1. d1-d3 e5-e2xe1`. The rules string is [`tafl_protocol::opentafl::write_rules`], beside
//! the parser that reads it back. Positions are written with
//! [`tafl_rules::Position::to_opentafl`]. King moves carry OTN's `K` prefix; the `+`/`-`
//! threat marks are not written. A forfeit ends the moves with OTN's resignation `---`.

use std::fmt::Write as _;

use tafl_rules::notation::{archive_result, ply_text, write_archive_line};
use tafl_rules::{Piece, Position, Side};

use crate::game::{PlayedGame, Termination};

/// The moves of a game as the archive format writes them.
#[must_use]
pub fn move_list(game: &PlayedGame) -> Vec<String> {
    game.moves()
        .iter()
        .zip(&game.captures)
        .map(|(m, caps)| {
            let mut caps = caps.clone();
            caps.sort();
            ply_text(*m, &caps)
        })
        .collect()
}

/// One archive line (without the newline).
#[must_use]
pub fn archive_line(game: &PlayedGame) -> String {
    write_archive_line(
        &move_list(game),
        matches!(game.termination, Termination::Forfeit { .. }),
        [game.captures_by(Side::Attackers), game.captures_by(Side::Defenders)],
        archive_result(Some(game.winner)),
    )
}

/// Names and context for an OpenTafl record.
#[derive(Clone, Debug, Default)]
pub struct OtgTags {
    /// Event name.
    pub event: String,
    /// Date `YYYY.MM.DD`.
    pub date: String,
    /// The attackers' player.
    pub attackers: String,
    /// The defenders' player.
    pub defenders: String,
    /// Round (game number).
    pub round: String,
}

/// An OpenTafl game file.
#[must_use]
pub fn otg(game: &PlayedGame, tags: &OtgTags) -> String {
    let start = game.game.start();
    let variant = start.variant();
    let result = match game.winner {
        Some(Side::Attackers) => "1",
        Some(Side::Defenders) => "-1",
        None => "0",
    };
    let termination = match &game.termination {
        Termination::Rules { reason } => reason.name().to_string(),
        Termination::MaxPlies { plies } => format!("draw by the arena's cap of {plies} plies"),
        Termination::Forfeit { loser, error } => format!("{loser} forfeit: {}", error.replace([']', '\n'], " ")),
    };
    let mut out = String::new();
    for (key, value) in [
        ("event", tags.event.as_str()),
        ("date", tags.date.as_str()),
        ("round", tags.round.as_str()),
        ("attackers", tags.attackers.as_str()),
        ("defenders", tags.defenders.as_str()),
        ("result", result),
        ("termination", termination.as_str()),
        ("variant", variant.name()),
    ] {
        let _ = writeln!(out, "[{key}:{}]", value.replace(']', ")"));
    }
    let _ = writeln!(out, "{}", tafl_protocol::opentafl::write_rules(start.variant()));
    if *start != Position::start(variant) {
        let _ = writeln!(out, "{}", start.to_opentafl());
    }
    out.push('\n');
    // OTN marks king moves with `K` and writes captures as `xa1/b2` (the archive: `xa1xb2`).
    let mut position = *start;
    let moves: Vec<String> = move_list(game)
        .iter()
        .zip(game.moves())
        .map(|(text, &mv)| {
            let king = if position.piece_at(mv.from) == Some(Piece::King) { "K" } else { "" };
            position.play_unchecked(mv);
            match text.split_once('x') {
                Some((m, caps)) => format!("{king}{m}x{}", caps.replace('x', "/")),
                None => format!("{king}{text}"),
            }
        })
        .collect();
    // Turn numbers count full turns; a game whose record starts with the defenders to move
    // begins with an empty attacker half.
    let offset = usize::from(start.side_to_move() == Side::Defenders);
    let mut halves: Vec<&str> = Vec::with_capacity(moves.len() + offset);
    if offset == 1 {
        halves.push("...");
    }
    halves.extend(moves.iter().map(String::as_str));
    for (turn, pair) in halves.chunks(2).enumerate() {
        let _ = writeln!(out, "{}. {}", turn + 1, pair.join(" "));
    }
    if matches!(game.termination, Termination::Forfeit { .. }) {
        let _ = writeln!(out, "---");
    }
    out
}

/// Today's date as `YYYY.MM.DD` (UTC).
#[must_use]
pub fn today() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}.{m:02}.{d:02}")
}

/// Howard Hinnant's days-to-civil-date algorithm.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::play_game;
    use crate::opening::Opening;
    use tafl_rules::Variant;
    use tafl_rules::notation::parse_archive_line;
    use tafl_rules::replay::replay;
    use tafl_search::{Limits, RandomPlayer};

    #[test]
    fn archive_lines_replay_cleanly() {
        let v = Variant::copenhagen();
        for seed in 0..10 {
            let (mut a, mut b) = (RandomPlayer::new(seed), RandomPlayer::new(seed + 100));
            let g = play_game(&Opening::start(v), &mut a, &Limits::default(), &mut b, &Limits::default(), 300);
            let line = archive_line(&g);
            let parsed = parse_archive_line(&line, 11).unwrap();
            let report = replay(1, Position::start(v), &parsed.plies, true);
            assert!(report.ok(), "{line}: {report:?}");
            assert_eq!(report.plies, g.moves().len());
            assert_eq!(parsed.result.as_deref(), Some(archive_result(Some(g.winner))));
            if let Termination::Rules { reason } = g.termination {
                assert_eq!(report.outcome.map(|o| o.reason), Some(reason.name().to_string()));
            }
            let total: usize = g.captures.iter().map(Vec::len).sum();
            assert_eq!(parsed.attacker_captures.unwrap() + parsed.defender_captures.unwrap(), total as u32);
        }
    }

    #[test]
    fn otg_has_tags_rules_and_turns() {
        let v = Variant::copenhagen();
        let (mut a, mut b) = (RandomPlayer::new(1), RandomPlayer::new(2));
        let g = play_game(&Opening::start(v), &mut a, &Limits::default(), &mut b, &Limits::default(), 5);
        let text = otg(
            &g,
            &OtgTags {
                event: "test".into(),
                date: today(),
                attackers: "a".into(),
                defenders: "b".into(),
                round: "1".into(),
            },
        );
        assert!(text.contains("[result:0]"), "{text}");
        let rules = text.lines().find(|l| l.starts_with("dim:11 name:copenhagen ")).expect("a rules line");
        let read = tafl_protocol::opentafl::parse_rules(rules).expect("our rules line parses");
        assert_eq!(read.rules, tafl_rules::Rules::COPENHAGEN, "{rules}");
        assert!(
            text.contains("start:/3ttttt3/5t5/11/t4T4t/t3TTT3t/tt1TTKTT1tt/t3TTT3t/t4T4t/11/5t5/3ttttt3/"),
            "{text}"
        );
        assert!(text.lines().any(|l| l.starts_with("3. ")), "{text}");
        assert!(!text.lines().any(|l| l.starts_with("4. ")), "{text}");
        // King moves carry a `K`.
        let g = play_game(&Opening::start(v), &mut a, &Limits::default(), &mut b, &Limits::default(), 200);
        let text = otg(&g, &OtgTags::default());
        let moves = text.split("\n\n").nth(1).unwrap_or_default();
        let king_moves =
            g.moves().len() - moves.split_whitespace().filter(|w| !w.ends_with('.') && !w.starts_with('K')).count();
        assert!(king_moves > 0 && moves.contains(" K"), "{text}");
    }

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_000), (2024, 10, 4));
    }
}

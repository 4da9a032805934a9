//! Game records: the archive format (one game per CSV line) and plain move lists.
//!
//! Archive line: `moves,attacker_captures,defender_captures,result`, where `moves` is a
//! space-separated list of plies `from-to[xSQ…]`, possibly ending with the token `timeout`
//! (the side to move lost on time), and `result` is `Black` (attackers won), `White`
//! (defenders won), `Draw` or `Ongoing`.

use std::fmt::Write as _;

use super::{MoveText, ParseError, parse_move};
use crate::game::Outcome;
use crate::square::{Move, Side, Square};

/// One ply as written in a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedPly {
    /// The text of the ply.
    pub text: String,
    /// 1-based column where it starts in the line.
    pub column: usize,
    /// The parsed move and listed captures.
    pub mv: MoveText,
}

/// A game of the archive format.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ArchiveGame {
    /// The plies in order.
    pub plies: Vec<RecordedPly>,
    /// The record ends with `timeout`.
    pub timeout: bool,
    /// Captures made by the attackers, as recorded.
    pub attacker_captures: Option<u32>,
    /// Captures made by the defenders, as recorded.
    pub defender_captures: Option<u32>,
    /// The result column as written (`Black`, `White`, `Draw`, `Ongoing`).
    pub result: Option<String>,
}

/// Parses whitespace-separated plies (the `moves` format, and the first archive column). A
/// final `timeout` token is accepted.
pub fn parse_move_list(text: &str, size: u8) -> Result<(Vec<RecordedPly>, bool), ParseError> {
    let mut plies = Vec::new();
    let mut timeout = false;
    let mut offset = 0;
    for token in text.split_inclusive(char::is_whitespace) {
        let column = offset + 1;
        offset += token.len();
        let word = token.trim();
        if word.is_empty() {
            continue;
        }
        if timeout {
            return Err(ParseError::at(column, format!("`{word}` after `timeout`")));
        }
        if word == "timeout" {
            timeout = true;
            continue;
        }
        let mv: MoveText = parse_move(word, size).map_err(|e| e.shifted(column - 1))?;
        plies.push(RecordedPly { text: word.to_string(), column, mv });
    }
    Ok((plies, timeout))
}

/// Parses one line of the archive format.
pub fn parse_archive_line(line: &str, size: u8) -> Result<ArchiveGame, ParseError> {
    let mut fields = line.trim_end().split(',');
    let moves = fields.next().unwrap_or_default();
    let (plies, timeout) = parse_move_list(moves, size)?;
    let mut column = moves.len() + 2;
    let mut count = |name: &str, field: Option<&str>| -> Result<Option<u32>, ParseError> {
        let Some(f) = field else { return Ok(None) };
        let at = column;
        column += f.len() + 1;
        f.trim().parse().map(Some).map_err(|_| ParseError::at(at, format!("{name} must be a number, found `{f}`")))
    };
    let attacker_captures = count("attacker_captures", fields.next())?;
    let defender_captures = count("defender_captures", fields.next())?;
    let result = fields.next().map(|r| r.trim().to_string());
    if let Some(extra) = fields.next() {
        return Err(ParseError::at(line.len() - extra.len() + 1, "more than four columns"));
    }
    Ok(ArchiveGame { plies, timeout, attacker_captures, defender_captures, result })
}

/// The result column of an archive line: `Black` when the attackers won, `White` when the
/// defenders won, `Draw` (`Some(None)`), and `Ongoing` while the game goes on (`None`).
#[must_use]
pub fn archive_result(winner: Option<Option<Side>>) -> &'static str {
    match winner {
        Some(Some(Side::Attackers)) => "Black",
        Some(Some(Side::Defenders)) => "White",
        Some(None) => "Draw",
        None => "Ongoing",
    }
}

/// The result column of a game with `outcome` ([`archive_result`]).
#[must_use]
pub fn outcome_result(outcome: Outcome) -> &'static str {
    archive_result(match outcome {
        Outcome::Ongoing => None,
        Outcome::Draw { .. } => Some(None),
        Outcome::Decided { winner, .. } => Some(Some(winner)),
    })
}

/// A ply as an archive line writes it: `from-to`, then `xSQ` for each capture, in the order
/// given.
#[must_use]
pub fn ply_text(mv: Move, captures: &[Square]) -> String {
    let mut text = mv.to_string();
    for c in captures {
        let _ = write!(text, "x{c}");
    }
    text
}

/// One archive line, without the newline: the plies (as [`ply_text`] writes them) separated by
/// spaces, then the token `timeout` when the side to move lost on time, the captures of the
/// attackers and of the defenders, and the result column ([`archive_result`]). The line
/// [`parse_archive_line`] reads.
#[must_use]
pub fn write_archive_line<S: AsRef<str>>(plies: &[S], timeout: bool, captures: [usize; 2], result: &str) -> String {
    let mut moves = String::new();
    for ply in plies {
        if !moves.is_empty() {
            moves.push(' ');
        }
        moves.push_str(ply.as_ref());
    }
    if timeout {
        if !moves.is_empty() {
            moves.push(' ');
        }
        moves.push_str("timeout");
    }
    format!("{moves},{},{},{result}", captures[0], captures[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_an_archive_line() {
        let g = parse_archive_line("d1-d3 e5-e2 a8-b8xb7 timeout,1,0,Ongoing", 11).unwrap();
        assert_eq!(g.plies.len(), 3);
        assert!(g.timeout);
        assert_eq!(g.plies[2].column, 13);
        assert_eq!(g.plies[2].mv.captures.as_ref().map(Vec::len), Some(1));
        assert_eq!(g.result.as_deref(), Some("Ongoing"));
    }

    #[test]
    fn writes_the_line_it_parses() {
        let mv = parse_move("a8-b8", 11).unwrap().mv;
        let b7 = super::super::parse_square("b7", 11).unwrap();
        let plies = ["d1-d3".to_string(), "e5-e2".to_string(), ply_text(mv, &[b7])];
        let line = write_archive_line(&plies, true, [1, 0], archive_result(None));
        assert_eq!(line, "d1-d3 e5-e2 a8-b8xb7 timeout,1,0,Ongoing");
        let parsed = parse_archive_line(&line, 11).unwrap();
        assert_eq!(parsed.plies.iter().map(|p| p.text.as_str()).collect::<Vec<_>>(), plies);
        assert_eq!(
            write_archive_line::<&str>(&[], true, [0, 0], archive_result(Some(Some(Side::Defenders)))),
            "timeout,0,0,White"
        );
        assert_eq!(
            write_archive_line(&["d1-d3"], false, [0, 2], outcome_result(Outcome::Ongoing)),
            "d1-d3,0,2,Ongoing"
        );
        assert_eq!(archive_result(Some(Some(Side::Attackers))), "Black");
        assert_eq!(archive_result(Some(None)), "Draw");
    }

    #[test]
    fn errors_name_the_column() {
        let e = parse_archive_line("d1-d3 e5-q2,0,0,Ongoing", 11).unwrap_err();
        assert_eq!(e.column, 10);
        let e = parse_archive_line("d1-d3,zero,0,Ongoing", 11).unwrap_err();
        assert_eq!(e.column, 7);
        assert!(parse_archive_line("timeout d1-d3", 11).is_err());
    }
}

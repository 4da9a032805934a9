//! Text formats: squares and moves, FEN-like positions, OpenTafl position records, a text board
//! for people, and game records. Every parser says where the text is wrong.

mod board;
mod fen;
mod opentafl;
mod ranks;
mod record;

pub use record::{
    ArchiveGame, RecordedPly, archive_result, outcome_result, parse_archive_line, parse_move_list, ply_text,
    write_archive_line,
};

use crate::square::{Move, Square};

/// A parse failure: what is wrong and at which 1-based column (character) of the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: {message}")]
pub struct ParseError {
    /// 1-based column of the offending character.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl ParseError {
    pub(crate) fn at(column: usize, message: impl Into<String>) -> ParseError {
        ParseError { column, message: message.into() }
    }
    /// The same error, `offset` characters further right (when the text was part of a line).
    #[must_use]
    pub fn shifted(mut self, offset: usize) -> ParseError {
        self.column += offset;
        self
    }
}

/// Parses a square such as `a1` or `k11` on a board of side `size`.
pub fn parse_square(text: &str, size: u8) -> Result<Square, ParseError> {
    let (sq, used) = parse_square_prefix(text, size, 1)?;
    if used != text.len() {
        return Err(ParseError::at(used + 1, format!("unexpected `{}` after square", &text[used..])));
    }
    Ok(sq)
}

/// Parses a square at the start of `text`; returns it and the bytes used. `column` is where
/// `text` starts, for errors.
fn parse_square_prefix(text: &str, size: u8, column: usize) -> Result<(Square, usize), ParseError> {
    let bytes = text.as_bytes();
    let Some(&f) = bytes.first() else {
        return Err(ParseError::at(column, "expected a square, found the end"));
    };
    let last_file = (b'a' + size - 1) as char;
    let file = f.to_ascii_lowercase().wrapping_sub(b'a');
    if !f.is_ascii_alphabetic() || file >= size {
        return Err(ParseError::at(column, format!("expected a file a..{last_file}, found `{}`", f as char)));
    }
    let digits = bytes[1..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 2 {
        return Err(ParseError::at(column + 1, "expected a rank number after the file"));
    }
    let rank: u8 = text[1..1 + digits].parse().map_err(|_| ParseError::at(column + 1, "bad rank"))?;
    if rank == 0 || rank > size {
        return Err(ParseError::at(column + 1, format!("rank {rank} is off the board (1..{size})")));
    }
    Ok((Square::new(file, rank - 1), 1 + digits))
}

/// A move as written: the move and, when the text lists them (`xd5xe6`), its captures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoveText {
    /// The move.
    pub mv: Move,
    /// Captured squares listed after the move, if any were written.
    pub captures: Option<Vec<Square>>,
}

/// Parses `a4-d4`, `a4d4`, or either with a capture suffix such as `xd5xe6`.
pub fn parse_move(text: &str, size: u8) -> Result<MoveText, ParseError> {
    let (from, mut at) = parse_square_prefix(text, size, 1)?;
    if text[at..].starts_with('-') {
        at += 1;
    }
    let (to, used) = parse_square_prefix(&text[at..], size, at + 1)?;
    at += used;
    let mut captures = None;
    while at < text.len() {
        if !text[at..].starts_with(['x', 'X']) {
            return Err(ParseError::at(at + 1, format!("expected `x` and a captured square, found `{}`", &text[at..])));
        }
        at += 1;
        let (sq, used) = parse_square_prefix(&text[at..], size, at + 1)?;
        at += used;
        captures.get_or_insert_with(Vec::new).push(sq);
    }
    if from == to {
        return Err(ParseError::at(1, "a move must go somewhere"));
    }
    Ok(MoveText { mv: Move::new(from, to), captures })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_moves_in_both_spellings() {
        let m = parse_move("a4-d4", 11).unwrap();
        assert_eq!(m.mv.to_string(), "a4-d4");
        assert_eq!(m.captures, None);
        assert_eq!(parse_move("a4d4", 11).unwrap().mv, m.mv);
        let c = parse_move("k10-k11xj11xa1", 11).unwrap();
        assert_eq!(c.captures.unwrap().len(), 2);
    }

    #[test]
    fn errors_say_where() {
        assert_eq!(parse_move("a4-z4", 11).unwrap_err().column, 4);
        assert_eq!(parse_move("a12-a1", 11).unwrap_err().column, 2);
        assert_eq!(parse_move("a4-a5y", 11).unwrap_err().column, 6);
        assert_eq!(parse_move("a4-a5x", 11).unwrap_err().column, 7);
        assert!(parse_square("", 11).is_err());
        assert!(parse_move("a4-a4", 11).is_err());
        assert!(parse_square("é1", 11).is_err());
    }
}

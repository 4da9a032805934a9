//! The rank syntax FEN and OpenTafl records share: piece letters and digits for runs of empty
//! squares. Only the letters and the order of the ranks differ.

use super::ParseError;
use crate::setup::Setup;
use crate::square::{Piece, Square};

/// The letters a format uses for attacker, defender and king.
pub(crate) struct Letters(pub char, pub char, pub char);

/// FEN: `a`, `d`, `k`.
pub(crate) const FEN: Letters = Letters('a', 'd', 'k');
/// OpenTafl: `t`, `T`, `K`.
pub(crate) const OPENTAFL: Letters = Letters('t', 'T', 'K');

impl Letters {
    fn letter(&self, piece: Piece) -> char {
        match piece {
            Piece::Attacker => self.0,
            Piece::Defender => self.1,
            Piece::King => self.2,
        }
    }
    fn piece(&self, c: char) -> Option<Piece> {
        [Piece::Attacker, Piece::Defender, Piece::King].into_iter().find(|&p| self.letter(p) == c)
    }
}

/// Appends one rank of `setup`.
pub(crate) fn write_rank(setup: &Setup, rank: u8, letters: &Letters, out: &mut String) {
    let mut empty = 0;
    for file in 0..setup.size {
        match setup.get(Square::new(file, rank)) {
            None => empty += 1,
            Some(p) => {
                if empty > 0 {
                    out.push_str(&empty.to_string());
                    empty = 0;
                }
                out.push(letters.letter(p));
            }
        }
    }
    if empty > 0 {
        out.push_str(&empty.to_string());
    }
}

/// Parses one rank into `setup`; `column` is where `text` starts in the whole record.
pub(crate) fn parse_rank(
    text: &str,
    rank: u8,
    setup: &mut Setup,
    column: usize,
    letters: &Letters,
) -> Result<(), ParseError> {
    let size = setup.size as usize;
    let too_long = || format!("rank {} has more than {size} squares", rank + 1);
    let mut file: usize = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let col = column + i;
        if let Some(mut run) = c.to_digit(10).map(|d| d as usize) {
            while let Some(d) = chars.peek().and_then(|&(_, d)| d.to_digit(10)) {
                // Saturating: a long digit run is an error below (too many squares), not an
                // overflow (found by fuzzing).
                run = run.saturating_mul(10).saturating_add(d as usize);
                chars.next();
            }
            if run == 0 {
                return Err(ParseError::at(col, "an empty run cannot be 0"));
            }
            file = file.saturating_add(run);
            if file > size {
                return Err(ParseError::at(col, too_long()));
            }
            continue;
        }
        let Some(piece) = letters.piece(c) else {
            let Letters(a, d, k) = letters;
            return Err(ParseError::at(col, format!("unexpected `{c}` (use {a}, {d}, {k} or a digit)")));
        };
        if file >= size {
            return Err(ParseError::at(col, too_long()));
        }
        setup.set(Square::new(file as u8, rank), Some(piece));
        file += 1;
    }
    if file != size {
        return Err(ParseError::at(
            column + text.len(),
            format!("rank {} has {file} squares, expected {size}", rank + 1),
        ));
    }
    Ok(())
}

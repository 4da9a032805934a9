//! OpenTafl position records: `/3ttttt3/5t5/…/`, one rank per segment, rank 1 first; `t`
//! attacker, `T` defender, `K` king, digits for runs of empty squares.

use super::ParseError;
use crate::position::Position;
use crate::setup::Setup;
use crate::square::{Piece, Side, Square, MAX_SIZE};
use crate::variant::Variant;

impl Setup {
    /// Parses an OpenTafl position record; the record does not say who moves, so `side_to_move`
    /// is given.
    pub fn from_opentafl(text: &str, side_to_move: Side) -> Result<Setup, ParseError> {
        let text = text.trim();
        let inner = text
            .strip_prefix('/')
            .and_then(|t| t.strip_suffix('/'))
            .ok_or_else(|| ParseError::at(1, "an OpenTafl record starts and ends with `/`"))?;
        let ranks: Vec<&str> = inner.split('/').collect();
        let size = ranks.len();
        if size < 5 || size > MAX_SIZE as usize {
            return Err(ParseError::at(1, format!("{size} ranks: boards have 5 to {MAX_SIZE}")));
        }
        let mut setup = Setup::empty(size as u8, side_to_move);
        let mut column = 2;
        for (rank, rank_text) in ranks.iter().enumerate() {
            let mut file = 0usize;
            let mut chars = rank_text.char_indices().peekable();
            while let Some((i, c)) = chars.next() {
                let col = column + i;
                let piece = match c {
                    't' => Piece::Attacker,
                    'T' => Piece::Defender,
                    'K' => Piece::King,
                    '0'..='9' => {
                        let mut run = c as usize - '0' as usize;
                        while let Some(&(_, d @ '0'..='9')) = chars.peek() {
                            run = run * 10 + (d as usize - '0' as usize);
                            chars.next();
                        }
                        file += run;
                        if run == 0 || file > size {
                            return Err(ParseError::at(col, format!("bad run of empty squares on rank {}", rank + 1)));
                        }
                        continue;
                    }
                    _ => return Err(ParseError::at(col, format!("unexpected `{c}` (use t, T, K or a digit)"))),
                };
                if file >= size {
                    return Err(ParseError::at(col, format!("rank {} has more than {size} squares", rank + 1)));
                }
                setup.set(Square::new(file as u8, rank as u8), Some(piece));
                file += 1;
            }
            if file != size {
                return Err(ParseError::at(column + rank_text.len(), format!("rank {} has {file} squares, expected {size}", rank + 1)));
            }
            column += rank_text.len() + 1;
        }
        Ok(setup)
    }

    /// Writes the board as an OpenTafl position record.
    #[must_use]
    pub fn to_opentafl(&self) -> String {
        let mut out = String::from("/");
        for rank in 0..self.size {
            let mut empty = 0;
            for file in 0..self.size {
                match self.get(Square::new(file, rank)) {
                    None => empty += 1,
                    Some(p) => {
                        if empty > 0 {
                            out.push_str(&empty.to_string());
                            empty = 0;
                        }
                        out.push(match p {
                            Piece::Attacker => 't',
                            Piece::Defender => 'T',
                            Piece::King => 'K',
                        });
                    }
                }
            }
            if empty > 0 {
                out.push_str(&empty.to_string());
            }
            out.push('/');
        }
        out
    }
}

impl Position {
    /// Parses an OpenTafl position record for `variant`.
    pub fn from_opentafl(variant: &'static Variant, text: &str, side_to_move: Side) -> Result<Position, ParseError> {
        let setup = Setup::from_opentafl(text, side_to_move)?;
        Position::from_setup(variant, &setup).map_err(|e| ParseError::at(1, e.to_string()))
    }

    /// The board as an OpenTafl position record.
    #[must_use]
    pub fn to_opentafl(&self) -> String {
        self.to_setup().to_opentafl()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copenhagen_start_matches_opentafl() {
        let v = Variant::copenhagen();
        let record = "/3ttttt3/5t5/11/t4T4t/t3TTT3t/tt1TTKTT1tt/t3TTT3t/t4T4t/11/5t5/3ttttt3/";
        assert_eq!(Position::start(v).to_opentafl(), record);
        assert_eq!(Position::from_opentafl(v, record, Side::Attackers).unwrap(), Position::start(v));
        assert!(Position::from_opentafl(v, "/3ttttt3/", Side::Attackers).is_err());
        assert_eq!(Setup::from_opentafl("/3ttttt3/5t5/11/t4T4t/t3TTT3t/tt1TTKTT1tt/t3TxT3t/t4T4t/11/5t5/3ttttt3/", Side::Attackers).unwrap_err().column, 46);
    }
}

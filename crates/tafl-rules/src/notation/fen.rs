//! FEN-like positions: ranks from the top, `a` attacker, `d` defender, `k` king, digits for runs
//! of empty squares, then the side to move (`a` or `d`).
//! Example (the Copenhagen start):
//! `3aaaaa3/5a5/11/a4d4a/a3ddd3a/aa1ddkdd1aa/a3ddd3a/a4d4a/11/5a5/3aaaaa3 a`.

use super::ParseError;
use super::ranks::{FEN, parse_rank, write_rank};
use crate::position::Position;
use crate::setup::Setup;
use crate::square::{MAX_SIZE, Side};
use crate::variant::Variant;

impl Setup {
    /// Parses a FEN into plain data (the board size is the number of ranks).
    pub fn from_fen(text: &str) -> Result<Setup, ParseError> {
        let text = text.trim();
        let (board, side) = match text.rsplit_once(char::is_whitespace) {
            Some((b, s)) => (b.trim_end(), s),
            None => {
                return Err(ParseError::at(text.len() + 1, "expected the side to move (`a` or `d`) after the board"));
            }
        };
        let side_column = text.len() - side.len() + 1;
        let side_to_move = match side {
            "a" | "A" => Side::Attackers,
            "d" | "D" => Side::Defenders,
            _ => return Err(ParseError::at(side_column, format!("side to move must be `a` or `d`, found `{side}`"))),
        };
        let ranks: Vec<&str> = board.split('/').collect();
        let size = ranks.len();
        if size < 5 || size > MAX_SIZE as usize {
            return Err(ParseError::at(1, format!("{size} ranks: boards have 5 to {MAX_SIZE}")));
        }
        let mut setup = Setup::empty(size as u8, side_to_move);
        let mut column = 1;
        for (row, rank_text) in ranks.iter().enumerate() {
            let rank = (size - 1 - row) as u8;
            parse_rank(rank_text, rank, &mut setup, column, &FEN)?;
            column += rank_text.len() + 1;
        }
        Ok(setup)
    }

    /// Writes the setup as a FEN.
    #[must_use]
    pub fn to_fen(&self) -> String {
        let mut out = String::new();
        for rank in (0..self.size).rev() {
            write_rank(self, rank, &FEN, &mut out);
            if rank > 0 {
                out.push('/');
            }
        }
        out.push(' ');
        out.push(if self.side_to_move == Side::Attackers { 'a' } else { 'd' });
        out
    }
}

impl Position {
    /// Parses a FEN for `variant`; rejects a wrong size, two kings or a soldier on a restricted
    /// square.
    pub fn from_fen(variant: &'static Variant, text: &str) -> Result<Position, ParseError> {
        let setup = Setup::from_fen(text)?;
        Position::from_setup(variant, &setup).map_err(|e| ParseError::at(1, e.to_string()))
    }

    /// The position as a FEN.
    #[must_use]
    pub fn to_fen(&self) -> String {
        self.to_setup().to_fen()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "3aaaaa3/5a5/11/a4d4a/a3ddd3a/aa1ddkdd1aa/a3ddd3a/a4d4a/11/5a5/3aaaaa3 a";

    #[test]
    fn the_copenhagen_start_round_trips() {
        let v = Variant::copenhagen();
        assert_eq!(Position::start(v).to_fen(), START);
        assert_eq!(Position::from_fen(v, START).unwrap(), Position::start(v));
    }

    #[test]
    fn bad_fens_say_where() {
        let v = Variant::copenhagen();
        let e = Position::from_fen(v, "3aaaaa3/5a5/11/a4d4a/a3ddd3a/aa1ddkdd1aa/a3ddd3a/a4d4a/11/5a5/3aaaaa3 x")
            .unwrap_err();
        assert!(e.message.contains("side to move"), "{e}");
        let e = Setup::from_fen("3aaaaa3/5a5/11/a4d4a/a3ddd3a/aa1ddkdd1aa/a3dqd3a/a4d4a/11/5a5/3aaaaa3 a").unwrap_err();
        assert_eq!(e.column, 45);
        let e = Setup::from_fen("3aaaaa4/5a5/11/a4d4a/a3ddd3a/aa1ddkdd1aa/a3ddd3a/a4d4a/11/5a5/3aaaaa3 a").unwrap_err();
        assert!(e.message.contains("more than 11"), "{e}");
        let two_kings = "11/11/11/11/11/5k5/11/11/11/11/k10 a";
        assert!(Position::from_fen(v, two_kings).unwrap_err().message.contains("two kings"));
        let on_throne = "11/11/11/11/11/5d5/11/11/11/11/11 a";
        assert!(Position::from_fen(v, on_throne).unwrap_err().message.contains("restricted"));
        assert!(Position::from_fen(v, "").is_err());
        assert!(Position::from_fen(v, "9/9/9/9/9/9/9/9/9 a").unwrap_err().message.contains("9x9"));
    }

    #[test]
    fn a_long_digit_run_is_an_error_not_an_overflow() {
        // Found by the fen and opentafl fuzz targets: the run, or the file count after it,
        // overflowed usize (a panic with overflow checks, a wrapped count without: 2^64 + 11
        // would wrap to 11).
        for run in [
            "26066060222222222222222220",
            "18446744073709551627",
            "a99999999999999999999999",
            "dk111111111111111260620600",
        ] {
            let fen = format!("{run}/11/11/11/11/11/11/11/11/11/11 a");
            let e = Setup::from_fen(&fen).unwrap_err();
            assert!(e.message.contains("more than"), "{run}: {e}");
        }
    }
}

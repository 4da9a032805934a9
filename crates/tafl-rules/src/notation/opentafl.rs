//! OpenTafl position records: `/3ttttt3/5t5/…/`, one rank per segment, rank 1 first; `t`
//! attacker, `T` defender, `K` king, digits for runs of empty squares.

use super::ParseError;
use super::ranks::{OPENTAFL, parse_rank, write_rank};
use crate::position::Position;
use crate::setup::Setup;
use crate::square::{MAX_SIZE, Side};
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
            parse_rank(rank_text, rank as u8, &mut setup, column, &OPENTAFL)?;
            column += rank_text.len() + 1;
        }
        Ok(setup)
    }

    /// Writes the board as an OpenTafl position record.
    #[must_use]
    pub fn to_opentafl(&self) -> String {
        let mut out = String::from("/");
        for rank in 0..self.size {
            write_rank(self, rank, &OPENTAFL, &mut out);
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
        assert_eq!(
            Setup::from_opentafl(
                "/3ttttt3/5t5/11/t4T4t/t3TTT3t/tt1TTKTT1tt/t3TxT3t/t4T4t/11/5t5/3ttttt3/",
                Side::Attackers
            )
            .unwrap_err()
            .column,
            46
        );
    }
}

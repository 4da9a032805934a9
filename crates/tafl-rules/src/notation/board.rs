//! A text board for people, with files and ranks labelled.

use std::fmt::Write;

use crate::position::Position;
use crate::square::{Piece, Side, Square};

impl Position {
    /// The board as text, each square drawn by `cell` (after a space): rank numbers on both
    /// sides, files above and below. [`Position::pretty`] and the coloured board of `tafl play`
    /// are drawn with it.
    #[must_use]
    pub fn board_text(&self, mut cell: impl FnMut(Square) -> String) -> String {
        let size = self.size();
        let files: String = (0..size).map(|f| format!(" {}", (b'a' + f) as char)).collect();
        let mut out = format!("   {files}\n");
        for rank in (0..size).rev() {
            let _ = write!(out, "{:>2} ", rank + 1);
            for file in 0..size {
                let _ = write!(out, " {}", cell(Square::new(file, rank)));
            }
            let _ = writeln!(out, "  {}", rank + 1);
        }
        let _ = writeln!(out, "   {files}");
        out
    }

    /// The board as text: `X` attackers, `O` defenders, `K` the king, `+` an empty throne or
    /// corner, `.` other empty squares; rank numbers on both sides, files above and below.
    #[must_use]
    pub fn pretty(&self) -> String {
        let mut out = self.board_text(|sq| {
            let c = match self.piece_at(sq) {
                Some(Piece::Attacker) => 'X',
                Some(Piece::Defender) => 'O',
                Some(Piece::King) => 'K',
                None if self.variant().is_restricted(sq) => '+',
                None => '.',
            };
            c.to_string()
        });
        let to_move = if self.side_to_move() == Side::Attackers { "attackers (X)" } else { "defenders (O, K)" };
        let _ = writeln!(out, "{to_move} to move");
        out
    }
}

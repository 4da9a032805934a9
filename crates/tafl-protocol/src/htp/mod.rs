//! The Hnefatafl Text Protocol (HTP): a line protocol in the style of GTP.
//!
//! The engine reads one command per line and answers `= RESPONSE` on success or `? ERROR` on
//! failure. Squares are a file letter and a rank number with `a1` bottom-left (the same as
//! ours), lowercase on 7x7 and 11x11, uppercase on 13x13 (engines accept both). Roles are
//! `attacker` and `defender` (`a` and `d` are accepted too). The commands the client uses:
//!
//! | command | reply |
//! |---|---|
//! | `board_size N` | resets the engine to the start position of an N x N board |
//! | `play ROLE FROM TO` | plays a move; replies with the captured squares |
//! | `generate_move [ROLE]` | the engine chooses *and plays* a move: `play ROLE FROM TO[, …]` or `play ROLE resigns _` |
//! | `quit` | ends the engine |
//!
//! Engines may print other lines (the reference engine logs its search to stdout); the client
//! skips every line that does not start with `=` or `?`.

pub mod client;
pub mod server;

pub use client::{CappedLines, HtpConfig, HtpEngine, HtpError, HtpPlayer, MAX_LINE, read_generated};
pub use server::{HtpReply, HtpServer, HtpServerOptions};

use tafl_rules::{Side, Square};

/// The HTP name of a side: `attacker` or `defender`.
#[must_use]
pub const fn role_name(side: Side) -> &'static str {
    match side {
        Side::Attackers => "attacker",
        Side::Defenders => "defender",
    }
}

/// Parses an HTP role (`attacker`, `defender`, `a`, `d`, any case).
#[must_use]
pub fn parse_role(text: &str) -> Option<Side> {
    match text.to_ascii_lowercase().as_str() {
        "a" | "attacker" | "attackers" => Some(Side::Attackers),
        "d" | "defender" | "defenders" => Some(Side::Defenders),
        _ => None,
    }
}

/// A square as HTP writes it on a board of side `size`: lowercase up to 11x11, uppercase above.
#[must_use]
pub fn square_name(square: Square, size: u8) -> String {
    let name = square.to_string();
    if size > 11 { name.to_ascii_uppercase() } else { name }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_roles_and_squares() {
        assert_eq!(role_name(Side::Attackers), "attacker");
        assert_eq!(parse_role("D"), Some(Side::Defenders));
        assert_eq!(parse_role("x"), None);
        assert_eq!(square_name(Square::new(3, 0), 11), "d1");
        assert_eq!(square_name(Square::new(12, 12), 13), "M13");
    }
}

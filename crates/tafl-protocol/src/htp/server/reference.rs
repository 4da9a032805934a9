//! The reference engine's own ways, where they differ from ours (the module docs' `# Rules`):
//! its legality checks and their words, the defenders' no-repetition rule and the move played
//! instead of a repeating one, whose turn it says it is, and how it reads roles and squares.
//! Apart from the commands so that what is the reference's, not ours, is in one place.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use tafl_rules::{IllegalMove, Move, Outcome, Piece, Setup, Side, Square};
use tafl_search::alphabeta::evaluate;

use super::HtpServer;

/// A pieces-only hash of a board, for the defenders' no-repetition rule.
pub(super) fn board_key(setup: &Setup) -> u64 {
    let mut h = DefaultHasher::new();
    setup.board.hash(&mut h);
    h.finish()
}

impl HtpServer {
    /// The reference's legality checks, in its order and with its words.
    pub(super) fn check_reference_rules(&self, role: Side, m: Move) -> Result<(), String> {
        let position = self.game.position();
        let piece = position.piece_at(m.from);
        if piece.map(Piece::side) != Some(role) || role != position.side_to_move() {
            return Err("play: it isn't your turn".to_string());
        }
        if m.from.file() != m.to.file() && m.from.rank() != m.to.rank() {
            return Err("play: you can only play in a straight line".to_string());
        }
        if m.from == m.to {
            return Err("play: you have to change location".to_string());
        }
        match position.check_move(m) {
            Ok(()) => {}
            Err(IllegalMove::Blocked(_)) => return Err("play: you have to play through empty locations".to_string()),
            Err(IllegalMove::Restricted(_)) => {
                return Err("play: only the king may move to a restricted square".to_string());
            }
            Err(e) => return Err(format!("play: {e}")),
        }
        if role == Side::Defenders && !self.options.defender_repeats && self.repeats_a_board(m) {
            return Err("play: you already reached that position".to_string());
        }
        Ok(())
    }

    /// Whether the board right after `m` (before its captures, as the reference compares)
    /// has occurred before.
    pub(super) fn repeats_a_board(&self, m: Move) -> bool {
        let mut setup = self.game.position().to_setup();
        let piece = setup.get(m.from);
        setup.set(m.from, None);
        setup.set(m.to, piece);
        self.boards.contains(&board_key(&setup))
    }

    /// The move, among those that repeat no board, after which the static evaluation is best
    /// for the mover (a move that wins at once first).
    pub(super) fn best_unrepeated_move(&self) -> Option<Move> {
        let mover = self.game.position().side_to_move();
        self.game.legal_moves().iter().copied().filter(|&m| !self.repeats_a_board(m)).max_by_key(|&m| {
            let mut after = self.game.clone();
            after.play_unchecked(m);
            match after.outcome() {
                Outcome::Decided { winner, .. } if winner == mover => i64::MAX,
                Outcome::Decided { .. } => i64::MIN,
                Outcome::Draw { .. } => 0,
                Outcome::Ongoing => -i64::from(evaluate(after.position())),
            }
        })
    }

    /// Whose turn the reference says it is: after the move that ends a game it does not pass
    /// the turn, and a resignation leaves it with the side that resigned.
    pub(super) fn reference_turn(&self) -> Side {
        let to_move = self.game.position().side_to_move();
        match self.resigned {
            Some(side) => side,
            None if self.over() && self.game.ply() > 0 => to_move.opponent(),
            None => to_move,
        }
    }

    pub(super) fn reference_allows(&self, side: Side, m: Move) -> bool {
        side != Side::Defenders || self.options.defender_repeats || !self.repeats_a_board(m)
    }
}

/// A role as the reference parses it: `a`, `attacker`, `d`, `defender`, any case.
pub(super) fn reference_role(text: &str) -> Result<Side, String> {
    let lower = text.to_lowercase();
    match lower.as_str() {
        "a" | "attacker" => Ok(Side::Attackers),
        "d" | "defender" => Ok(Side::Defenders),
        _ => Err(format!("Error trying to convert '{lower}' to a Role!")),
    }
}

/// A square as the reference parses it: a letter of the board (any case) and a rank number
/// (Rust's unsigned integer syntax), with the reference's error texts.
pub(super) fn reference_square(text: &str, size: u8) -> Result<Square, String> {
    let mut chars = text.chars();
    let Some(letter) = chars.next() else { return Err("play: invalid coordinate".to_string()) };
    let letter = letter.to_ascii_uppercase();
    let letters = &"ABCDEFGHIJKLMNO"[..size as usize];
    let file = letters.find(letter).ok_or("play: the first letter is not a legal char")?;
    let rank: usize = chars.as_str().parse().map_err(|e: std::num::ParseIntError| e.to_string())?;
    if rank == 0 || rank > size as usize {
        return Err("play: invalid coordinate".to_string());
    }
    Ok(Square::new(file as u8, rank as u8 - 1))
}

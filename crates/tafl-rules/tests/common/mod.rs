//! Helpers for building test positions.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
#![allow(dead_code)]

use tafl_rules::{
    Game, Move, Outcome, Piece, Played, Position, Reason, Setup, Side, Square, Variant, parse_move, parse_square,
};

pub const A: Side = Side::Attackers;
pub const D: Side = Side::Defenders;

/// A win for `winner` by `reason`.
pub fn won(winner: Side, reason: Reason) -> Outcome {
    Outcome::Decided { winner, reason }
}

/// A variant from a TOML text, leaked for the `'static` a position wants.
pub fn variant(toml: &str) -> &'static Variant {
    Variant::from_toml(toml).expect("variant").leak()
}

/// `v` in order, for comparing lists of moves or squares as sets.
pub fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// A position from a piece list such as `"X: d4 f4  O: e4  K: e1"` (X attackers, O defenders,
/// K king), with `side` to move.
pub fn position(variant: &'static Variant, side: Side, pieces: &str) -> Position {
    let size = variant.size();
    let mut setup = Setup::empty(size, side);
    let mut piece = Piece::Attacker;
    for word in pieces.split_whitespace() {
        match word {
            "X:" => piece = Piece::Attacker,
            "O:" => piece = Piece::Defender,
            "K:" => piece = Piece::King,
            sq => setup.set(parse_square(sq, size).expect("square"), Some(piece)),
        }
    }
    Position::from_setup(variant, &setup).expect("valid setup")
}

/// A Copenhagen game from a piece list.
pub fn copenhagen(side: Side, pieces: &str) -> Game {
    Game::from_position(position(Variant::copenhagen(), side, pieces))
}

/// A game of any preset.
pub fn game(variant: &str, side: Side, pieces: &str) -> Game {
    Game::from_position(position(Variant::preset(variant).expect("preset"), side, pieces))
}

/// A move such as `d4-e4`.
pub fn mv(text: &str) -> Move {
    parse_move(text, 15).expect("move").mv
}

/// A square.
pub fn sq(text: &str) -> Square {
    parse_square(text, 15).expect("square")
}

/// Plays a move that must be legal and returns the captured squares as names.
pub fn play(game: &mut Game, text: &str) -> Vec<String> {
    let played: Played = game.play(mv(text)).unwrap_or_else(|e| panic!("{text}: {e}"));
    played.captured.iter().map(|s| s.to_string()).collect()
}

/// True when `text` is among the legal moves.
pub fn is_legal(game: &Game, text: &str) -> bool {
    game.legal_moves().contains(&mv(text))
}

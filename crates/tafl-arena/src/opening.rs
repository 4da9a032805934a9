//! Opening positions, so that the games of a match differ: the variant's start, positions
//! after a few random plies from the start (reproducible from a seed), or FENs from a file.
//! Each opening is played twice, once with each player on each side.

use std::collections::HashSet;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tafl_rules::{Game, Move, Position, Variant};

/// A position to start games from: a start position and the moves played from it.
#[derive(Clone, Debug, PartialEq)]
pub struct Opening {
    /// Where the record starts (the variant's start, or a FEN).
    pub start: Position,
    /// Moves played from `start` before the players take over.
    pub moves: Vec<Move>,
}

impl Opening {
    /// The variant's start position.
    #[must_use]
    pub fn start(variant: &'static Variant) -> Opening {
        Opening { start: Position::start(variant), moves: Vec::new() }
    }

    /// The game the players take over.
    #[must_use]
    pub fn game(&self) -> Game {
        let mut game = Game::from_position(self.start);
        for &m in &self.moves {
            game.play_unchecked(m);
        }
        game
    }

    /// A short description: the moves, or the FEN.
    #[must_use]
    pub fn describe(&self) -> String {
        let mut s = if self.start == Position::start(self.start.variant()) {
            String::new()
        } else {
            format!("[{}] ", self.start.to_fen())
        };
        s += &self.moves.iter().map(ToString::to_string).collect::<Vec<_>>().join(" ");
        if s.is_empty() { "start".to_string() } else { s }
    }
}

/// `count` distinct openings of `plies` uniformly random moves from the start, none of them
/// over. Fewer come back only when the variant has fewer such positions.
#[must_use]
pub fn random_openings(variant: &'static Variant, count: usize, plies: usize, seed: u64) -> Vec<Opening> {
    if plies == 0 {
        return vec![Opening::start(variant)];
    }
    let mut rng = StdRng::seed_from_u64(seed);
    let mut seen = HashSet::new();
    let mut openings = Vec::with_capacity(count);
    let mut tries = 0;
    while openings.len() < count && tries < count * 100 {
        tries += 1;
        let mut game = Game::new(variant);
        let mut moves = Vec::with_capacity(plies);
        while moves.len() < plies && !game.outcome().is_over() {
            let legal = game.legal_moves();
            if legal.is_empty() {
                break;
            }
            let m = legal[rng.random_range(0..legal.len())];
            game.play_unchecked(m);
            moves.push(m);
        }
        if game.outcome().is_over() || moves.len() < plies || !seen.insert(game.position().hash()) {
            continue;
        }
        openings.push(Opening { start: Position::start(variant), moves });
    }
    openings
}

/// A bad line in an openings file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct OpeningError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Openings from text: one FEN per line; blank lines and `#` comments are skipped. A FEN may
/// be followed by `;` and moves to play from it (`FEN ; d1-d3 e5-e2`). Positions already over
/// are refused.
pub fn parse_openings(variant: &'static Variant, text: &str) -> Result<Vec<Opening>, OpeningError> {
    let mut openings = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let err = |message: String| OpeningError { line: i + 1, message };
        let (fen, moves_text) = line.split_once(';').unwrap_or((line, ""));
        let fen = fen.trim();
        let start = if fen == "start" {
            Position::start(variant)
        } else {
            Position::from_fen(variant, fen).map_err(|e| err(e.to_string()))?
        };
        let mut game = Game::from_position(start);
        let mut moves = Vec::new();
        for word in moves_text.split_whitespace() {
            let m = tafl_rules::parse_move(word, variant.size()).map_err(|e| err(format!("`{word}`: {e}")))?.mv;
            game.play(m).map_err(|e| err(format!("`{word}`: {e}")))?;
            moves.push(m);
        }
        if game.outcome().is_over() {
            return Err(err("the game is already over there".into()));
        }
        openings.push(Opening { start, moves });
    }
    if openings.is_empty() {
        return Err(OpeningError { line: 0, message: "no openings in the file".into() });
    }
    Ok(openings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_openings_are_distinct_and_reproducible() {
        let v = Variant::copenhagen();
        let a = random_openings(v, 20, 4, 1);
        assert_eq!(a.len(), 20);
        assert!(a.iter().all(|o| o.moves.len() == 4 && !o.game().outcome().is_over()));
        let hashes: HashSet<u64> = a.iter().map(|o| o.game().position().hash()).collect();
        assert_eq!(hashes.len(), 20);
        assert_eq!(a, random_openings(v, 20, 4, 1));
        assert_ne!(a, random_openings(v, 20, 4, 2));
    }

    #[test]
    fn parses_an_openings_file() {
        let v = Variant::copenhagen();
        let text = "# openings\nstart\nstart ; d1-d3 e5-e2\n\n3aaaaa3/5a5/11/a4d4a/a3ddd3a/aa1ddkdd1aa/a3ddd3a/a4d4a/11/5a5/3aaaaa3 a\n";
        let o = parse_openings(v, text).unwrap();
        assert_eq!(o.len(), 3);
        assert_eq!(o[1].moves.len(), 2);
        assert_eq!(o[1].describe(), "d1-d3 e5-e2");
        let e = parse_openings(v, "start ; d1-d9").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(parse_openings(v, "# nothing\n").is_err());
    }
}

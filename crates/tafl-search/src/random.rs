//! The random player: a uniformly random legal move from a seeded generator.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tafl_rules::Game;

use crate::player::{Limits, MoveChoice, Player, PlayerError};

/// Plays a uniformly random legal move; the same seed gives the same moves.
pub struct RandomPlayer {
    seed: u64,
    rng: StdRng,
}

impl RandomPlayer {
    /// A random player with a seed.
    #[must_use]
    pub fn new(seed: u64) -> RandomPlayer {
        RandomPlayer { seed, rng: StdRng::seed_from_u64(seed) }
    }
}

impl Player for RandomPlayer {
    fn name(&self) -> String {
        format!("random:seed={}", self.seed)
    }

    fn choose(&mut self, game: &Game, _limits: &Limits) -> Result<MoveChoice, PlayerError> {
        let moves = game.legal_moves();
        if moves.is_empty() {
            return Err(PlayerError::NoMoves);
        }
        Ok(MoveChoice::just(moves[self.rng.random_range(0..moves.len())]))
    }
}

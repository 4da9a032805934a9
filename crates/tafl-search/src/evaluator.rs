//! The `Evaluator` trait: what MCTS asks of a network.

use tafl_rules::Game;

/// A prior over the legal moves and a value.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// One prior per move of `game.legal_moves()`, in that order; sums to 1.
    pub policy: Vec<f32>,
    /// The value for the side to move, in [-1, 1].
    pub value: f32,
}

/// Evaluates a batch of positions at once (a network does one forward pass for the batch).
/// Games rather than positions are passed so that the evaluator can see the history
/// (repetition counts).
pub trait Evaluator: Send + Sync {
    /// One evaluation per game, in order. Games must be ongoing.
    fn evaluate(&self, games: &[&Game]) -> Vec<Evaluation>;
}

/// Uniform priors and value 0: search guided by nothing but the rules.
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformEvaluator;

impl Evaluator for UniformEvaluator {
    fn evaluate(&self, games: &[&Game]) -> Vec<Evaluation> {
        games
            .iter()
            .map(|g| {
                let n = g.legal_moves().len().max(1);
                Evaluation { policy: vec![1.0 / n as f32; n], value: 0.0 }
            })
            .collect()
    }
}

impl<E: Evaluator + ?Sized> Evaluator for &E {
    fn evaluate(&self, games: &[&Game]) -> Vec<Evaluation> {
        (**self).evaluate(games)
    }
}

impl<E: Evaluator + ?Sized> Evaluator for Box<E> {
    fn evaluate(&self, games: &[&Game]) -> Vec<Evaluation> {
        (**self).evaluate(games)
    }
}

impl<E: Evaluator + ?Sized> Evaluator for std::sync::Arc<E> {
    fn evaluate(&self, games: &[&Game]) -> Vec<Evaluation> {
        (**self).evaluate(games)
    }
}

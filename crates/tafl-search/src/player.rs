//! The `Player` trait: choose a move for a game under limits.

use std::time::Duration;

use tafl_rules::{Game, Move};

/// Limits on one move's search. `None` means "the player's own default"; a player honours the
/// limits that apply to it (visits for MCTS, nodes and depth for alpha-beta, time for all) and
/// stops at the first one reached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// MCTS visits (simulations).
    pub visits: Option<u64>,
    /// Search nodes.
    pub nodes: Option<u64>,
    /// Search depth in plies.
    pub depth: Option<u32>,
    /// Wall-clock time for this move: the move is returned within it.
    pub time: Option<Duration>,
}

/// A chosen move and what the search learnt on the way.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveChoice {
    /// The move to play.
    pub mv: Move,
    /// The player's evaluation, from the side to move's view, in [-1, 1], if it has one.
    pub value: Option<f32>,
    /// The principal variation, starting with `mv`, if known.
    pub pv: Vec<Move>,
    /// Depth reached (alpha-beta) or visits made (MCTS) or 0.
    pub depth: u32,
    /// Nodes searched or visits made.
    pub nodes: u64,
}

impl MoveChoice {
    /// A bare move with nothing else known.
    #[must_use]
    pub fn just(mv: Move) -> MoveChoice {
        MoveChoice { mv, value: None, pv: vec![mv], depth: 0, nodes: 0 }
    }
}

/// Why a player could not produce a move.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlayerError {
    /// The game is over or the side to move has no move.
    #[error("no legal move to choose from")]
    NoMoves,
    /// An external engine died, timed out, answered garbage or chose an illegal move.
    #[error("engine failure: {0}")]
    Engine(String),
    /// The player gave the game up (an external engine's resignation): a loss, not a failure.
    #[error("resigned")]
    Resigned,
}

/// Something that chooses moves: a search, a network, an external engine or a person.
pub trait Player: Send {
    /// A short name for tables and records, e.g. `alphabeta:depth=3`.
    fn name(&self) -> String;

    /// Chooses a move for the side to move of an ongoing game.
    fn choose(&mut self, game: &Game, limits: &Limits) -> Result<MoveChoice, PlayerError>;

    /// Forgets anything kept from an earlier game (trees, tables); called before each game.
    fn new_game(&mut self) {}
}

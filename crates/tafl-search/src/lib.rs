//! # tafl-search
//!
//! Players: the [`Player`] trait every player implements (random, alpha-beta, MCTS, external
//! engines), the [`Evaluator`] trait a network implements for MCTS, and the searches themselves.
//! Nothing here depends on Burn: tests use hand-written evaluators.

pub mod alphabeta;
pub mod clock;
pub mod evaluator;
pub mod mcts;
pub mod player;
pub mod random;

pub use alphabeta::AlphaBeta;
pub use clock::{Clock, ManualClock, WallClock};
pub use evaluator::{Evaluation, Evaluator, UniformEvaluator};
pub use mcts::{MctsPlayer, Search, SearchParams, SearchResult};
pub use player::{Limits, Line, MAX_LINES, MAX_SEARCH_COUNT, MoveChoice, Player, PlayerError, Stop, StopOnDrop};
pub use random::RandomPlayer;

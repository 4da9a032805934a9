//! Monte Carlo tree search guided by an [`Evaluator`](crate::Evaluator): PUCT with Dirichlet
//! noise, or a Gumbel root (Danihelka et al. 2022) that learns with 16–32 visits per move.
//!
//! * [`SearchParams`]: every knob, in one serde struct for the config files.
//! * [`Search`]: one tree over one game, driven from outside one batch of leaves at a time
//!   ([`Search::next_leaves`], [`Search::pending_games`], [`Search::feed`]), so self-play can
//!   keep hundreds of games in one evaluator batch ([`step_searches`]) and an engine can gather
//!   a batch from one tree with virtual loss ([`Search::run`]). The tree is kept between moves
//!   ([`Search::advance`]).
//! * [`MctsPlayer`]: the [`Player`](crate::Player) for matches, with visit and time limits.
//! * [`bench`](mod@bench): throughput with many searches in flight.
//!
//! ## Choices
//! * **Exact ends (MCTS-solver).** Terminal positions are proven wins, losses or draws, and
//!   proofs propagate up the tree: a node is won when one move reaches a lost node, lost when
//!   every move reaches a won one, drawn when every move is proven and the best is a draw.
//!   Proven nodes are never evaluated or expanded again; their exact value is backed up.
//!   When a node is first reached, the moves that could end the game at once (king moves for
//!   the defenders, moves next to the king for the attackers) are played: an immediate win
//!   proves the node without asking the evaluator. At the root every child is opened this way,
//!   so moves that let the opponent win at once (not blocking a king one move from a corner)
//!   are known lost before the first visit. The root plays a proven win at once.
//! * **Open lines and forks.** When a node with the attackers to move is opened while the king
//!   sees an escape square, every move that leaves him one is proven lost on the spot, and the
//!   node is lost when no move closes every line. When a node with the defenders to move is
//!   opened, each king move that opens a line has its child opened the same way, so a fork (two
//!   lines that one move cannot close) proves the node won. Opened at the root's children, this
//!   keeps the attackers out of forks two moves deep for the cost of move generation, not of
//!   evaluations (the ignored test `mcts_overhead` measures it; it matters most in the endgame, where a net
//!   trained on few games misjudges a king with open lines).
//! * **Below a Gumbel root** the selection is Gumbel MuZero's deterministic one,
//!   `argmax pi'(a) - N(a) / (1 + sum N)` with `pi' = softmax(logits + sigma(completed Q))`;
//!   with PUCT the whole tree uses PUCT with first-play urgency.
//! * **Completed Q** uses the paper's `v_mix`; `sigma(q) = (c_visit + max N) * c_scale * q`
//!   with `q` rescaled to [0, 1] by the node's smallest and largest completed Q (mctx's
//!   `qtransform_completed_by_mix_value`); moves proven lost take no part and get no mass.
//! * **Sequential halving** follows `mctx`: simulation `i` visits the best action among those
//!   with the scheduled visit count, so any number of simulations may be in flight. With a
//!   kept tree, the schedule counts only this search's visits; Q-values use all of them.
//! * **Virtual loss**: a simulation in flight counts as a loss for the side choosing it.

pub mod bench;
mod gumbel;
mod noise;
mod params;
mod player;
mod proof;
mod search;
mod select;
mod tree;

#[cfg(test)]
mod tests;

pub use bench::{BenchReport, searches_in_flight};
pub use params::SearchParams;
pub use player::MctsPlayer;
pub use search::{Search, SearchResult, step_searches};
pub use tree::Proof;

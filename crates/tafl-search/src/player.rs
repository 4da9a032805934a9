//! The `Player` trait: choose a move for a game under limits.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tafl_rules::{Game, Move};

/// The most visits or nodes a search may be asked for: far beyond any time a person or a match
/// waits (hours at the fastest search here), and small enough that what is allocated per visit
/// up front (a Gumbel search's visit schedule) stays within memory.
pub const MAX_SEARCH_COUNT: u64 = 1 << 24;

/// A flag that ends a search from outside: set it (from another thread) and the search returns
/// its best move so far within a fraction of a second. Cloning shares the flag. The default
/// never fires.
#[derive(Clone, Debug, Default)]
pub struct Stop(Option<Arc<AtomicBool>>);

impl Stop {
    /// A flag not yet set.
    #[must_use]
    pub fn new() -> Stop {
        Stop(Some(Arc::new(AtomicBool::new(false))))
    }

    /// Asks every search watching this flag to end.
    pub fn stop(&self) {
        if let Some(flag) = &self.0 {
            flag.store(true, Ordering::Relaxed);
        }
    }

    /// True once [`Stop::stop`] was called on this flag or a clone of it.
    #[must_use]
    pub fn is_set(&self) -> bool {
        self.0.as_ref().is_some_and(|flag| flag.load(Ordering::Relaxed))
    }
}

impl PartialEq for Stop {
    /// The same flag (or both none).
    fn eq(&self, other: &Stop) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }
}

impl Eq for Stop {}

/// Sets its flag when dropped: a request handler holds one, so that a search ends when the
/// request is abandoned (its future dropped) as well as when it finishes.
#[derive(Debug)]
pub struct StopOnDrop(pub Stop);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// Limits on one move's search. `None` means "the player's own default"; a player honours the
/// limits that apply to it (visits for MCTS, nodes and depth for alpha-beta, time and the stop
/// flag for all) and stops at the first one reached.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// MCTS visits (simulations).
    pub visits: Option<u64>,
    /// Search nodes.
    pub nodes: Option<u64>,
    /// Search depth in plies.
    pub depth: Option<u32>,
    /// Wall-clock time for this move: the move is returned within it.
    pub time: Option<Duration>,
    /// Ends the search early when set (a client gone, `stop`); the best move so far is returned.
    pub stop: Stop,
    /// How many of the best root moves to report with their lines in [`MoveChoice::lines`]
    /// (a GUI's MultiPV); `None` reports none. An MCTS reads them off its tree at no cost; an
    /// alpha-beta searches each extra line at every depth, so it sees less deep in the same time.
    pub lines: Option<usize>,
}

impl Limits {
    /// These limits with `time` as the time.
    #[must_use]
    pub fn with_time(&self, time: Option<Duration>) -> Limits {
        Limits { time, ..self.clone() }
    }
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
    /// Depth reached (alpha-beta), the principal variation's length (MCTS) or 0.
    pub depth: u32,
    /// Nodes searched or visits made.
    pub nodes: u64,
    /// With [`Limits::lines`], the best root moves with their lines, the chosen move's first,
    /// then best first (empty otherwise).
    pub lines: Vec<Line>,
}

impl MoveChoice {
    /// A bare move with nothing else known.
    #[must_use]
    pub fn just(mv: Move) -> MoveChoice {
        MoveChoice { mv, value: None, pv: vec![mv], depth: 0, nodes: 0, lines: Vec::new() }
    }

    /// This choice with `lines` as its lines, the chosen move's line put first: moved up when it
    /// is among them (a search may rank another move higher than the one its rule chose), else
    /// made from the choice itself in place of the last.
    #[must_use]
    pub fn with_lines(mut self, mut lines: Vec<Line>) -> MoveChoice {
        match lines.iter().position(|line| line.pv.first() == Some(&self.mv)) {
            Some(i) => lines[..=i].rotate_right(1),
            None if !lines.is_empty() => {
                lines.pop();
                let own = Line { pv: self.pv.clone(), value: self.value, nodes: self.nodes };
                lines.insert(0, own);
            }
            None => {}
        }
        self.lines = lines;
        self
    }
}

/// The most lines a search reports ([`Limits::lines`]): more than the legal moves of most
/// positions, and a bound on what a request can make an alpha-beta search per depth.
pub const MAX_LINES: usize = 256;

/// One root move and what the search found after it (one line of a MultiPV report).
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// The line, starting with the root move.
    pub pv: Vec<Move>,
    /// The value of the root move for the side to move, in [-1, 1], if the search has one.
    pub value: Option<f32>,
    /// Visits of the root move (MCTS), or the nodes searched when the line was found, counted
    /// from the start of the move's search (alpha-beta).
    pub nodes: u64,
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

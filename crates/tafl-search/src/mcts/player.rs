//! `MctsPlayer`: MCTS behind the [`Player`] trait, keeping its tree between moves.

use std::sync::Arc;
use std::time::Duration;

use tafl_rules::Game;

use super::params::SearchParams;
use super::search::{Search, SearchResult};
use crate::clock::{Clock, WallClock};
use crate::evaluator::Evaluator;
use crate::player::{Limits, MoveChoice, Player, PlayerError};

/// An MCTS player. One tree per game: when the next position it is asked about follows from the
/// last one (its own move and the opponent's reply), the search goes on from the kept subtree.
pub struct MctsPlayer<E: Evaluator> {
    evaluator: E,
    params: SearchParams,
    batch: usize,
    seed: u64,
    search: Option<Search>,
    clock: Arc<dyn Clock>,
}

impl<E: Evaluator> MctsPlayer<E> {
    /// A player searching with `evaluator` and `params` (visits are the default limit), one leaf
    /// per evaluator call and seed 0.
    #[must_use]
    pub fn new(evaluator: E, params: SearchParams) -> MctsPlayer<E> {
        MctsPlayer { evaluator, params, batch: 1, seed: 0, search: None, clock: Arc::new(WallClock) }
    }

    /// Gathers up to `batch` leaves from the tree per evaluator call (virtual loss).
    #[must_use]
    pub fn with_batch(mut self, batch: usize) -> MctsPlayer<E> {
        self.batch = batch.max(1);
        self
    }

    /// Seeds the noise and the move sampling.
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> MctsPlayer<E> {
        self.seed = seed;
        self
    }

    /// Reads the time from `clock` (tests drive a [`crate::ManualClock`]; the default is the
    /// wall clock).
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> MctsPlayer<E> {
        self.clock = clock;
        self
    }

    /// The evaluator.
    pub fn evaluator(&self) -> &E {
        &self.evaluator
    }

    /// The result of the last search, if any.
    #[must_use]
    pub fn last_result(&self) -> Option<SearchResult> {
        self.search.as_ref().map(Search::result)
    }

    /// The search standing on `game`: the kept tree advanced along the moves played since, or a
    /// fresh one.
    fn search_for(&mut self, game: &Game) -> Search {
        if let Some(mut search) = self.search.take() {
            let known = search.game().moves();
            let same_start = search.game().start() == game.start() && game.moves().starts_with(known);
            if same_start {
                let rest = game.moves()[known.len()..].to_vec();
                if rest.iter().all(|&mv| search.advance(mv).is_ok()) {
                    search.set_params(self.params.clone());
                    return search;
                }
            }
        }
        self.seed = self.seed.wrapping_add(1);
        Search::new(game.clone(), self.params.clone(), self.seed)
    }
}

impl<E: Evaluator> Player for MctsPlayer<E> {
    fn name(&self) -> String {
        let kind = if self.params.use_gumbel { "gumbel" } else { "puct" };
        format!("mcts:{kind},visits={}", self.params.visits)
    }

    fn choose(&mut self, game: &Game, limits: &Limits) -> Result<MoveChoice, PlayerError> {
        if game.legal_moves().is_empty() {
            return Err(PlayerError::NoMoves);
        }
        let started = self.clock.now();
        let mut search = self.search_for(game);
        let visits = limits.visits.map_or(self.params.visits, |v| u32::try_from(v).unwrap_or(u32::MAX));
        search.start(visits);
        // Time is checked between batches: stop when the next batch might not fit, judged by
        // twice the slowest so far plus a twentieth of the time for the scheduler's whims.
        let mut slowest = Duration::ZERO;
        while !search.done() {
            if let Some(time) = limits.time
                && self.clock.now() - started + 2 * slowest + time / 20 >= time
                && search.root_visits() > 0
            {
                break;
            }
            let t = self.clock.now();
            if search.next_leaves(self.batch) == 0 {
                break;
            }
            let evaluations = self.evaluator.evaluate(&search.pending_games());
            search.feed(evaluations);
            slowest = slowest.max(self.clock.now() - t);
        }
        let result = search.result();
        self.search = Some(search);
        let mv = result.best_move.ok_or(PlayerError::NoMoves)?;
        let mut pv = result.pv;
        if pv.first() != Some(&mv) {
            pv = vec![mv];
        }
        Ok(MoveChoice { mv, value: Some(result.root_value), pv, depth: result.visits, nodes: u64::from(result.visits) })
    }

    fn new_game(&mut self) {
        self.search = None;
    }
}

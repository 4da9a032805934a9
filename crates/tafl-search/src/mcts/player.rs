//! `MctsPlayer`: MCTS behind the [`Player`] trait, keeping its tree between moves.

use std::sync::Arc;
use std::time::Duration;

use tafl_rules::{Game, Move};

use super::params::SearchParams;
use super::search::{Search, SearchResult};
use super::tree::Proof;
use crate::alphabeta::AlphaBeta;
use crate::clock::{Clock, WallClock};
use crate::evaluator::Evaluator;
use crate::player::{Limits, MAX_LINES, MAX_SEARCH_COUNT, MoveChoice, Player, PlayerError};

/// An MCTS player. One tree per game: when the next position it is asked about follows from the
/// last one (its own move and the opponent's reply), the search goes on from the kept subtree.
pub struct MctsPlayer<E: Evaluator> {
    evaluator: E,
    params: SearchParams,
    batch: usize,
    seed: u64,
    search: Option<Search>,
    clock: Arc<dyn Clock>,
    guard: Option<Guard>,
}

/// The tactical check of the move a search chose: an alpha-beta search of the position after it,
/// which must not find a forced win for the opponent. It is meant for short forcing lines (a
/// king that reaches two escape lines in three plies, say) that a shallow full-width search
/// sees at once and a net can misjudge; a move it proves lost is replaced by the search's next
/// best. Measured on the shipped net, it rarely changes a move (docs/training.md, "Is it the search or
/// the net?").
struct Guard {
    depth: u32,
    alphabeta: AlphaBeta,
}

/// How many of the search's moves the guard looks at, best first, before it gives up and plays
/// the search's choice.
const GUARD_MOVES: usize = 16;

impl<E: Evaluator> MctsPlayer<E> {
    /// A player searching with `evaluator` and `params` (visits are the default limit), one leaf
    /// per evaluator call and seed 0.
    #[must_use]
    pub fn new(evaluator: E, params: SearchParams) -> MctsPlayer<E> {
        MctsPlayer { evaluator, params, batch: 1, seed: 0, search: None, clock: Arc::new(WallClock), guard: None }
    }

    /// Checks each chosen move with an alpha-beta search of `depth` plies after it (0: no check):
    /// a move after which the opponent wins by force within them is replaced by the search's
    /// next best move that it does not prove lost.
    #[must_use]
    pub fn with_guard(mut self, depth: u32) -> MctsPlayer<E> {
        self.guard = (depth > 0).then(|| Guard { depth, alphabeta: AlphaBeta::with_depth(depth).tt_mib(4) });
        self
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
        let guard = self.guard.as_ref().map_or(String::new(), |g| format!(",guard={}", g.depth));
        format!("mcts:{kind},visits={}{guard}", self.params.visits)
    }

    fn choose(&mut self, game: &Game, limits: &Limits) -> Result<MoveChoice, PlayerError> {
        if game.legal_moves().is_empty() {
            return Err(PlayerError::NoMoves);
        }
        let started = self.clock.now();
        let mut search = self.search_for(game);
        // (`Search::start` bounds the count.)
        let visits =
            limits.visits.map_or(self.params.visits, |v| u32::try_from(v.min(MAX_SEARCH_COUNT)).unwrap_or(u32::MAX));
        search.start(visits);
        // Time is checked between batches: stop when the next batch might not fit, judged by
        // twice the slowest so far plus a twentieth of the time for the scheduler's whims.
        let mut slowest = Duration::ZERO;
        while !search.done() {
            let out_of_time =
                limits.time.is_some_and(|time| self.clock.now() - started + 2 * slowest + time / 20 >= time);
            if (out_of_time || limits.stop.is_set()) && search.root_visits() > 0 {
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
        let lines = limits.lines.map_or_else(Vec::new, |n| search.lines(n.clamp(1, MAX_LINES)));
        self.search = Some(search);
        let chosen = result.best_move.ok_or(PlayerError::NoMoves)?;
        // The guard gets what is left of the move's time, and the same stop flag.
        let left = limits.time.map(|t| t.saturating_sub(self.clock.now() - started));
        let mv = self.guarded(game, chosen, &result, &limits.with_time(left));
        let mut pv = result.pv;
        if pv.first() != Some(&mv) {
            pv = vec![mv];
        }
        // An MCTS has no depth of its own: the principal variation's length stands for it.
        let depth = u32::try_from(pv.len()).unwrap_or(u32::MAX);
        let choice = MoveChoice {
            mv,
            value: Some(result.root_value),
            pv,
            depth,
            nodes: u64::from(result.visits),
            lines: Vec::new(),
        };
        Ok(choice.with_lines(lines))
    }

    fn new_game(&mut self) {
        self.search = None;
        if let Some(guard) = &mut self.guard {
            guard.alphabeta.new_game();
        }
    }
}

impl<E: Evaluator> MctsPlayer<E> {
    /// `chosen`, or with a guard and `chosen` proven lost, the first of the search's other moves
    /// (most visited first) that the guard does not prove lost; `chosen` when all it looks at are.
    pub(crate) fn guarded(&mut self, game: &Game, chosen: Move, result: &SearchResult, limits: &Limits) -> Move {
        let Some(guard) = &mut self.guard else { return chosen };
        if result.proof == Some(Proof::Win) {
            return chosen;
        }
        let mut ranked: Vec<(Move, f32)> =
            result.improved_policy.iter().copied().filter(|&(m, _)| m != chosen).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
        let candidates = std::iter::once(chosen).chain(ranked.into_iter().map(|(m, _)| m)).take(GUARD_MOVES);
        for mv in candidates {
            let mut next = game.clone();
            if limits.stop.is_set() {
                return chosen;
            }
            let within = Limits { depth: Some(guard.depth), nodes: None, visits: None, ..limits.clone() };
            if next.play(mv).is_ok() && !guard.alphabeta.wins_by_force_within(&next, &within) {
                return mv;
            }
        }
        chosen
    }
}

//! Throughput of many searches in flight, as self-play runs them: one evaluator batch per round.

use std::time::{Duration, Instant};

use tafl_rules::{Game, Variant};

use super::params::SearchParams;
use super::search::Search;
use crate::evaluator::{Evaluation, Evaluator};

/// What [`searches_in_flight`] measured.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchReport {
    /// Positions evaluated per second of wall time.
    pub evaluations_per_s: f64,
    /// Simulations per second (evaluated leaves plus leaves resolved by the rules).
    pub simulations_per_s: f64,
    /// Moves played per second over all games.
    pub moves_per_s: f64,
    /// Share of the wall time spent inside `Evaluator::evaluate`; the rest is search overhead.
    pub share_of_time_in_evaluator: f64,
    /// Mean number of positions per evaluator call.
    pub mean_batch: f64,
    /// Wall time measured.
    pub seconds: f64,
}

/// Counts the time spent in an evaluator.
struct Timed<'a, E: ?Sized> {
    inner: &'a E,
    spent: std::sync::Mutex<Duration>,
}

impl<E: Evaluator + ?Sized> Evaluator for Timed<'_, E> {
    fn evaluate(&self, games: &[&Game]) -> Vec<Evaluation> {
        let t = Instant::now();
        let out = self.inner.evaluate(games);
        if let Ok(mut spent) = self.spent.lock() {
            *spent += t.elapsed();
        }
        out
    }
}

/// Plays `n_games` Copenhagen games at once for about `seconds`, each move a Gumbel search of
/// `visits` simulations, all leaves of a round evaluated in one batch.
pub fn searches_in_flight<E: Evaluator + ?Sized>(
    evaluator: &E,
    n_games: usize,
    visits: u32,
    seconds: f64,
) -> BenchReport {
    searches_in_flight_with(
        evaluator,
        &Game::new(Variant::copenhagen()),
        &SearchParams::gumbel(visits),
        n_games,
        seconds,
    )
}

/// [`searches_in_flight`] from any start and with any parameters. A game that ends starts again.
pub fn searches_in_flight_with<E: Evaluator + ?Sized>(
    evaluator: &E,
    start: &Game,
    params: &SearchParams,
    n_games: usize,
    seconds: f64,
) -> BenchReport {
    let timed = Timed { inner: evaluator, spent: std::sync::Mutex::new(Duration::ZERO) };
    let mut searches: Vec<Search> =
        (0..n_games.max(1)).map(|i| Search::new(start.clone(), params.clone(), i as u64)).collect();
    let (mut evaluations, mut calls, mut simulations, mut moves) = (0u64, 0u64, 0u64, 0u64);
    let began = Instant::now();
    let limit = Duration::from_secs_f64(seconds.max(0.0));
    while began.elapsed() < limit {
        let n = super::search::step_searches(searches.iter_mut(), &timed, 1);
        evaluations += n as u64;
        calls += u64::from(n > 0);
        for (i, search) in searches.iter_mut().enumerate() {
            if !search.done() {
                continue;
            }
            let result = search.result();
            simulations += u64::from(result.visits);
            moves += 1;
            let next = result.best_move.and_then(|mv| search.advance(mv).ok());
            if next.is_none() || search.game().outcome().is_over() {
                *search = Search::new(start.clone(), params.clone(), (n_games + i) as u64 ^ moves);
            }
        }
    }
    let wall = began.elapsed().as_secs_f64().max(1e-9);
    let spent = timed.spent.lock().map(|d| d.as_secs_f64()).unwrap_or(0.0);
    BenchReport {
        evaluations_per_s: evaluations as f64 / wall,
        simulations_per_s: simulations as f64 / wall,
        moves_per_s: moves as f64 / wall,
        share_of_time_in_evaluator: spent / wall,
        mean_batch: if calls == 0 { 0.0 } else { evaluations as f64 / calls as f64 },
        seconds: wall,
    }
}

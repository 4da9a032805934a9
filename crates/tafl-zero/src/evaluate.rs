//! Evaluation: the best model against the fixed ladder (`alphabeta:depth=1..3`, as configured)
//! and earlier best models, in paired games. Each match logs an `eval` event (score, Elo and
//! its 95% interval against that opponent, with the model's samples and games) and the whole
//! evaluation goes to `arena/eval-<id>.json`, its games to `arena/eval-<id>.csv`.

use std::time::Instant;

use tafl_arena::{ArenaConfig, PlayerSpec, random_openings, run_match};
use tafl_nn::evaluator::expected_for;
use tafl_players::ZeroFactory;
use tafl_rules::Variant;
use tafl_run::metrics::{EvalResult, EvalRow, Event};
use tafl_run::rundir::{RunDir, eval_records_name};

use crate::config::RunConfig;
use crate::gate::{match_score, model_spec};
use crate::{Observer, ZeroError};

/// Earlier best models, oldest first: the random start and every model that passed its gate.
#[must_use]
pub fn best_history(run: &RunDir) -> Vec<String> {
    let mut history: Vec<String> = run
        .models()
        .into_iter()
        .enumerate()
        .filter(|(i, id)| *i == 0 || run.gate_result(id).is_some_and(|r| r.passed))
        .map(|(_, id)| id)
        .collect();
    history.dedup();
    history
}

/// `count` of `earlier` models: the oldest, then spread evenly towards the newest.
#[must_use]
pub fn pick_previous(earlier: &[String], count: usize) -> Vec<String> {
    if count == 0 || earlier.is_empty() {
        return Vec::new();
    }
    if earlier.len() <= count {
        return earlier.to_vec();
    }
    let mut picked: Vec<String> = (0..count).map(|k| earlier[k * (earlier.len() - 1) / count.max(1)].clone()).collect();
    picked.dedup();
    picked
}

/// Evaluates `model` against the configured opponents and earlier best models.
///
/// # Errors
/// A match cannot run (a bad opponent spec, a checkpoint that does not load) or a file cannot
/// be written.
pub fn evaluate(
    run: &RunDir,
    config: &RunConfig,
    variant: &'static Variant,
    model: &str,
    factory: &ZeroFactory,
    observer: &dyn Observer,
) -> Result<EvalResult, ZeroError> {
    let e = &config.evaluate;
    let info = run.model_info(model, &expected_for(variant))?;
    let me = model_spec(run, model, e.visits, e.batch);
    let mut opponents: Vec<PlayerSpec> = e.opponents.clone();
    let earlier: Vec<String> = best_history(run).into_iter().filter(|id| id.as_str() < model).collect();
    for id in pick_previous(&earlier, e.previous) {
        opponents.push(model_spec(run, &id, e.visits, e.batch));
    }
    let pairs = e.games.div_ceil(2).max(1);
    let mut rows = Vec::new();
    let mut records = String::new();
    let started = Instant::now();
    for (k, opponent) in opponents.iter().enumerate() {
        let seed = config.run.seed ^ 0xE7A1 ^ (k as u64) << 32;
        let arena = ArenaConfig {
            variant,
            openings: random_openings(variant, pairs, e.opening_plies, seed),
            pairs,
            max_plies: e.max_plies,
            threads: e.threads.max(1),
            seed,
            sprt: None,
        };
        observer.stage(&format!("evaluate {model} vs {}", opponent.name()), 2 * pairs as u64, "games");
        let progress = |p: &tafl_arena::Progress| observer.progress(p.done as u64, &p.message);
        let results = match run_match(&me, opponent, &arena, factory, &progress) {
            Ok(r) => r,
            Err(err) => {
                observer.finish();
                observer.warn(&format!("evaluation of {model} against {}: {err}", opponent.name()));
                continue;
            }
        };
        observer.finish();
        let pairing = results.pairings.first().copied().unwrap_or_default();
        let row = EvalRow {
            model: model.to_string(),
            iteration: info.iteration,
            opponent: opponent.name().to_string(),
            baseline: k == 0,
            result: match_score(&pairing),
            score_attacking: pairing.a_attacking.score(),
            score_defending: pairing.a_defending.score(),
            samples_seen: info.samples_seen,
            games_total: info.games_total,
        };
        run.log(Event::Eval(row.clone()));
        observer.info(&format!("  {model} vs {}: {}", opponent.name(), row.result));
        records += &format!("# {model} (player 0) vs {}\n", opponent.name());
        for r in &results.games {
            records += &tafl_arena::record::archive_line(&r.played);
            records.push('\n');
        }
        rows.push(row);
    }
    let result = EvalResult {
        model: model.to_string(),
        iteration: info.iteration,
        seconds: started.elapsed().as_secs_f64(),
        matches: rows,
    };
    run.write_arena_text(&eval_records_name(model), &records)?;
    run.write_eval_result(&result)?;
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_oldest_then_spreads() {
        let ids: Vec<String> = (0..10).map(tafl_run::rundir::model_id).collect();
        assert_eq!(pick_previous(&ids, 1), vec!["m000000"]);
        assert_eq!(pick_previous(&ids, 3), vec!["m000000", "m000003", "m000006"]);
        assert_eq!(pick_previous(&ids[..2], 3).len(), 2);
        assert!(pick_previous(&ids, 0).is_empty());
    }
}

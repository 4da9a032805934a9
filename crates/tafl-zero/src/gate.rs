//! Gating: the candidate plays the best model in paired games (sides swapped, random
//! openings); it becomes the best when an SPRT accepts it or, without a decision, when its
//! score reaches the threshold. Results go to `arena/gate-<id>.json` and the games to
//! `arena/gate-<id>.csv` (archive lines); `models/best` is rewritten atomically on a pass.

use std::time::Instant;

use tafl_arena::{
    ArenaConfig, EloEstimate, NetSearch, PairingStats, PlayerKind, PlayerSpec, SprtDecision, random_openings, run_match,
};
use tafl_nn::checkpoint;
use tafl_nn::evaluator::expected_for;
use tafl_players::ZeroFactory;
use tafl_rules::Variant;
pub use tafl_run::metrics::GateResult;
use tafl_run::metrics::{Event, MatchScore};
use tafl_run::rundir::{RunDir, gate_records_name, gate_result_name};

use crate::config::RunConfig;
use crate::{Observer, ZeroError};

/// The first player's result in a match of one pairing, with its Elo by pairs.
#[must_use]
pub fn match_score(pairing: &PairingStats) -> MatchScore {
    let total = pairing.total();
    let elo = EloEstimate::pentanomial(&pairing.pairs);
    MatchScore {
        games: total.games(),
        wins: total.wins,
        draws: total.draws,
        losses: total.losses,
        score: total.score(),
        elo: elo.elo,
        elo_lower: elo.lower,
        elo_upper: elo.upper,
    }
}

/// The spec of a model of the run as a noise-free MCTS player.
#[must_use]
pub fn model_spec(run: &RunDir, id: &str, visits: u32, batch: usize) -> PlayerSpec {
    let search = NetSearch { visits: Some(u64::from(visits)), batch: Some(batch), ..NetSearch::default() };
    PlayerSpec::new(PlayerKind::Mcts { model: Some(run.model_dir(id)), search }, id)
}

/// Gates `candidate` against the best model, promotes it on a pass, and records the result.
///
/// # Errors
/// The match cannot run (a checkpoint does not load) or a file cannot be written.
pub fn gate(
    run: &RunDir,
    config: &RunConfig,
    variant: &'static Variant,
    candidate: &str,
    factory: &ZeroFactory,
    observer: &dyn Observer,
) -> Result<GateResult, ZeroError> {
    let g = &config.gate;
    // A net with NaN or infinite weights plays (every game a draw, say) and may pass.
    let loaded = checkpoint::load(&run.model_dir(candidate), &expected_for(variant), &tafl_nn::device())
        .map_err(|e| ZeroError::Model { id: candidate.to_string(), message: e.to_string() })?;
    if !loaded.model.weights_finite() {
        return Err(ZeroError::NotFinite { model: candidate.to_string(), what: "weights" });
    }
    let best = run.best_model().unwrap_or_else(|| candidate.to_string());
    let started = Instant::now();
    let mut result = GateResult {
        candidate: candidate.to_string(),
        best: best.clone(),
        result: MatchScore { score: 0.5, ..MatchScore::default() },
        sprt: None,
        passed: true,
        skipped: true,
        seconds: 0.0,
    };
    if g.enabled && best != candidate {
        let (a, b) = (model_spec(run, candidate, g.visits, g.batch), model_spec(run, &best, g.visits, g.batch));
        let pairs = g.games.div_ceil(2).max(1);
        let seed = config.run.seed ^ 0x6A7E ^ tafl_run::rundir::model_number(candidate).map_or(0, u64::from);
        let arena = ArenaConfig {
            variant,
            openings: random_openings(variant, pairs, g.opening_plies, seed),
            pairs,
            max_plies: g.max_plies,
            threads: g.threads.max(1),
            seed,
            sprt: g.sprt,
        };
        observer.stage(&format!("gate {candidate} vs {best}"), 2 * pairs as u64, "games");
        let progress = |p: &tafl_arena::Progress| observer.progress(p.done as u64, &p.message);
        let results = run_match(&a, &b, &arena, factory, &progress)?;
        observer.finish();
        let pairing = results.pairings.first().copied().unwrap_or_default();
        result.result = match_score(&pairing);
        result.skipped = false;
        // Judged on every finished pair: games that were in flight when the test stopped the
        // match count too (and may move the ratio back inside the bounds).
        let decision = g.sprt.map(|sprt| sprt.status(sprt.llr_pentanomial(&pairing.pairs)).decision);
        result.sprt = decision.map(|d| {
            match d {
                SprtDecision::AcceptH0 => "accept-h0",
                SprtDecision::AcceptH1 => "accept-h1",
                SprtDecision::Continue => "continue",
            }
            .to_string()
        });
        result.passed = match decision {
            Some(SprtDecision::AcceptH1) => true,
            Some(SprtDecision::AcceptH0) => false,
            _ => result.result.score >= g.threshold,
        };
        let records: String =
            results.games.iter().map(|r| tafl_arena::record::archive_line(&r.played) + "\n").collect();
        let header = format!(
            "# gate: {candidate} (player 0) vs {best}; games alternate sides, see {}\n",
            gate_result_name(candidate)
        );
        run.write_arena_text(&gate_records_name(candidate), &(header + &records))?;
    }
    result.seconds = started.elapsed().as_secs_f64();
    // Promote first: if killed before the result is written, the gate runs again, finds the
    // candidate already best and records the pass.
    if result.passed {
        run.set_best(candidate)?;
    }
    run.write_gate_result(&result)?;
    run.log(Event::Gate(result.clone()));
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::NetSection;
    use tafl_nn::{INPUT_PLANES, TrainBatch, TrainConfig, Trainer};
    use tafl_run::rundir::ModelInfo;

    #[test]
    fn a_model_whose_weights_are_not_finite_is_never_made_best() {
        let variant = Variant::preset("brandubh").expect("preset");
        let root = std::env::temp_dir().join(format!("tafl-gate-not-finite-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let run = RunDir::open(&root).unwrap();
        let mut config = RunConfig::default();
        config.run.variant = "brandubh".into();
        config.net = NetSection {
            blocks: 1,
            channels: 8,
            global_pool_interval: 0,
            policy_channels: 2,
            value_channels: 2,
            value_hidden: 8,
            tactical_planes: false,
            ownership_head: false,
            heads_by_side: false,
        };
        crate::optimize::ensure_initial_model(&run, &config, variant).unwrap();
        // One step at a NaN learning rate: every weight it touches is NaN.
        let net_config = config.net_config(variant.size());
        let mut trainer =
            Trainer::new(net_config.init(&tafl_nn::device()), TrainConfig::new().with_learning_rate(f64::NAN));
        let moves = net_config.policy_len();
        let mut policy = vec![0.0; 2 * moves];
        (policy[0], policy[moves]) = (1.0, 1.0);
        let planes = vec![0.0; 2 * INPUT_PLANES * 49];
        let batch = TrainBatch::from_slices(
            &net_config,
            &planes,
            &policy,
            &vec![true; 2 * moves],
            &[0.0, 0.0],
            &trainer.device(),
        )
        .unwrap();
        trainer.step(&batch);
        let info = ModelInfo {
            id: "m000001".into(),
            parent: Some("m000000".into()),
            iteration: 1,
            net: net_config.name(),
            ..ModelInfo::default()
        };
        tafl_nn::checkpoint::save(
            &run.model_dir("m000001"),
            &trainer.model(),
            &net_config,
            &info.into_meta(variant.name(), net_config.input_planes),
            None,
        )
        .unwrap();
        let factory = ZeroFactory::new(variant);
        // Gated or not (promoted without games), it stays out.
        for enabled in [false, true] {
            config.gate.enabled = enabled;
            let e = gate(&run, &config, variant, "m000001", &factory, &crate::Plain).unwrap_err();
            assert!(matches!(e, ZeroError::NotFinite { what: "weights", .. }), "{e}");
            assert!(e.to_string().contains("m000001"), "{e}");
            assert_eq!(run.best_model().as_deref(), Some("m000000"));
        }
        // A sound model passes the same check.
        config.gate.enabled = false;
        assert!(gate(&run, &config, variant, "m000000", &factory, &crate::Plain).unwrap().passed);
        let _ = std::fs::remove_dir_all(&root);
    }
}

//! The trainer: one round of training on the replay window, written as a new checkpoint.
//!
//! * **Replay window** (KataGo-style): the newest
//!   `clamp(window-scale * total^window-exponent, window-min, window-max)` samples, at most all
//!   of them; it grows with the data, so early, weak games leave it quickly at first and ever
//!   more slowly later.
//! * **Steps per round**: `new samples * reuse / batch-size`, clamped to
//!   `min-steps..=max-steps`: each sample is trained on about `reuse` times.
//! * **Symmetries**: each sample is drawn under one of the eight board symmetries at random.
//! * **Continuity**: a round starts from the newest checkpoint with its optimiser state (not
//!   from the best model: gating decides what self-play uses, not what training continues).
//! * **Resumable**: every `resume-every-seconds` of training, and when asked to stop, the round
//!   writes a point ([`crate::resume`]); a round killed part-way goes on from its last point
//!   with the same shards, steps and per-step random draws.

use std::path::Path;

use rand::Rng;
use tafl_nn::TrainConfig;
use tafl_nn::checkpoint::{self, CheckpointError};
use tafl_nn::encoding::{encode_position, index_move, move_index, policy_len};
use tafl_nn::evaluator::expected_for;
use tafl_nn::train::OptimizerKind;
use tafl_rules::{Square, Symmetry, Variant};
pub use tafl_run::metrics::RoundReport;
use tafl_run::rundir::{ModelInfo, RunDir, ShardInfo, model_id, model_number};
use tafl_run::shard::{Ending, Sample, ShardExpect, read_shard};
use tafl_run::storage::Put;
use tafl_run::writer::now;

use crate::config::{LrSchedule, NetSection, OptimizeConfig, Optimizer, RunConfig};
use crate::{Observer, ZeroError};

mod round;
pub use round::train_round;

/// The replay window for `total` samples.
#[must_use]
pub fn window_size(config: &OptimizeConfig, total: u64) -> u64 {
    let grown = config.window_scale * (total as f64).powf(config.window_exponent);
    let window = grown.clamp(config.window_min as f64, config.window_max as f64) as u64;
    window.min(total)
}

/// Steps of a round that brings `new_samples` new samples.
#[must_use]
pub fn steps_for(config: &OptimizeConfig, new_samples: u64) -> u32 {
    let steps = (new_samples as f64 * config.reuse / config.batch_size as f64).ceil() as u64;
    steps.clamp(u64::from(config.min_steps), u64::from(config.max_steps)) as u32
}

/// The learning rate of step `step` of `steps` in this round, at `iteration`, after
/// `steps_before` steps in earlier rounds.
#[must_use]
pub fn learning_rate(config: &OptimizeConfig, iteration: u32, step: u32, steps: u32, steps_before: u64) -> f64 {
    let base = config.learning_rate;
    let mut lr = match config.lr_schedule {
        LrSchedule::Constant => base,
        LrSchedule::Cosine => {
            let t = f64::from(step) / f64::from(steps.max(1));
            base * (config.lr_final + (1.0 - config.lr_final) * 0.5 * (1.0 + (std::f64::consts::PI * t).cos()))
        }
        LrSchedule::Step => base * config.lr_final.powi((iteration / config.lr_step_iterations.max(1)) as i32),
    };
    let global = steps_before + u64::from(step);
    if global < u64::from(config.lr_warmup_steps) {
        lr *= (global + 1) as f64 / f64::from(config.lr_warmup_steps);
    }
    lr
}

/// The shard expectations of a variant under this build's encoding.
#[must_use]
pub fn shard_expect(variant: &Variant) -> ShardExpect {
    ShardExpect { variant: variant.name().to_string(), encoding_version: tafl_nn::POLICY_VERSION }
}

/// Games and samples in the shards.
#[must_use]
pub fn totals(shards: &[ShardInfo]) -> (u64, u64) {
    shards.iter().fold((0, 0), |(g, s), sh| (g + sh.header.games, s + sh.header.count))
}

/// Model ids a round tries after its parent's: other trainers of the run may hold some.
const ID_TRIES: u32 = 100;

/// Saves the round's model (`save`) under the first free id after `parent`'s and publishes
/// it: an id another trainer saved or published first is skipped.
fn publish_next_id(
    run: &RunDir,
    parent: &str,
    save: impl Fn(&str) -> Result<(), CheckpointError>,
) -> Result<String, ZeroError> {
    let first = model_number(parent).unwrap_or(0) + 1;
    for number in first..first + ID_TRIES {
        let id = model_id(number);
        match save(&id) {
            Ok(()) if run.publish_model(&id)? == Put::Created => return Ok(id),
            // Saved, but another trainer published this id first.
            Ok(()) => {
                let _ = std::fs::remove_dir_all(run.local_model_dir(&id));
            }
            // Another trainer saved this id first.
            Err(CheckpointError::AlreadyExists(_)) => {}
            Err(e) => return Err(model_error(&id)(e)),
        }
    }
    Err(ZeroError::ModelId { run: run.location(), message: format!("no free model id after {parent}") })
}

fn model_error(id: &str) -> impl FnOnce(CheckpointError) -> ZeroError + '_ {
    move |e| ZeroError::Model { id: id.to_string(), message: e.to_string() }
}

/// Writes the random start `m000000` and points `models/best` at it, unless the run has a
/// model already. Returns the id of the newest model.
///
/// # Errors
/// The checkpoint cannot be written.
pub fn ensure_initial_model(run: &RunDir, config: &RunConfig, variant: &'static Variant) -> Result<String, ZeroError> {
    if let Some(id) = run.latest_model() {
        return Ok(id);
    }
    let id = model_id(0);
    let net_config = config.net_config(variant.size());
    let net = net_config.init(&tafl_nn::device());
    let info = ModelInfo { id: id.clone(), created: now(), net: net_config.name(), ..ModelInfo::default() };
    match checkpoint::save(
        &run.model_dir(&id),
        &net,
        &net_config,
        &info.into_meta(variant.name(), net_config.input_planes),
        None,
    ) {
        Ok(()) | Err(CheckpointError::AlreadyExists(_)) => {}
        Err(e) => return Err(model_error(&id)(e)),
    }
    // Several workers of a new run in object storage may each make a random start: the
    // first one published wins, the others drop theirs and use it.
    if run.publish_model(&id)? == Put::Exists {
        let mine = run.local_model_dir(&id);
        let _ = std::fs::remove_dir_all(&mine);
        run.fetch_model(&id)?;
    }
    if run.best_model().is_none() || run.needs_best_hint() {
        run.set_best(&id)?;
    }
    Ok(id)
}

/// Starts a new run from the trained checkpoint at `source` (a checkpoint directory, a bundle, or
/// a run directory's best model) instead of a random net and the warm start: it is
/// written as model 1, the best model, with no optimiser state. The checkpoint's net shape wins
/// over the config's `[net]`, but for its input planes and heads: a net of fewer planes
/// than `net` asks for grows the new ones in at zero weight
/// ([`tafl_nn::TaflNet::with_input_planes`]), one without the ownership head that `net` asks for
/// grows it ([`tafl_nn::TaflNet::with_ownership_head`]), and one pair of heads grows a pair for
/// each side ([`tafl_nn::TaflNet::with_heads_by_side`]). Returns `None` when the run has a model
/// already (a resumed run).
///
/// # Errors
/// The checkpoint does not load or is for another variant; the model cannot be written.
pub fn init_from(
    run: &RunDir,
    variant: &'static Variant,
    source: &Path,
    net: &NetSection,
) -> Result<Option<String>, ZeroError> {
    if run.latest_model().is_some() {
        return Ok(None);
    }
    let dir = tafl_players::players::resolve_model(source);
    let loaded = checkpoint::load(&dir, &expected_for(variant), &tafl_nn::device())
        .map_err(|e| ZeroError::Model { id: format!("--init-from {}", dir.display()), message: e.to_string() })?;
    if !loaded.model.weights_finite() {
        return Err(ZeroError::NotFinite { model: format!("--init-from {}", dir.display()), what: "weights" });
    }
    let (model, config) = if net.input_planes() > loaded.config.input_planes {
        loaded.model.with_input_planes(&loaded.config, net.input_planes())
    } else {
        (loaded.model, loaded.config)
    };
    let (model, config) = if net.ownership_head && !config.has_ownership_head() {
        model.with_ownership_head(&config, &tafl_nn::device())
    } else {
        (model, config)
    };
    let (model, config) = if net.heads_by_side && !config.has_heads_by_side() {
        model.with_heads_by_side(&config)
    } else {
        (model, config)
    };
    let id = model_id(1);
    let info = ModelInfo { id: id.clone(), iteration: 1, created: now(), net: config.name(), ..ModelInfo::default() };
    checkpoint::save(&run.model_dir(&id), &model, &config, &info.into_meta(variant.name(), config.input_planes), None)
        .map_err(model_error(&id))?;
    if run.publish_model(&id)? == Put::Exists {
        return Err(ZeroError::ModelId { run: run.location(), message: format!("model {id} exists already") });
    }
    run.set_best(&id)?;
    Ok(Some(id))
}

fn train_config(config: &OptimizeConfig) -> TrainConfig {
    TrainConfig::new()
        .with_learning_rate(config.learning_rate)
        .with_weight_decay(config.weight_decay)
        .with_optimizer(match config.optimizer {
            Optimizer::Adamw => OptimizerKind::AdamW,
            Optimizer::Sgd => OptimizerKind::Sgd,
        })
        .with_momentum(config.momentum)
        .with_value_weight(config.value_weight)
        .with_ownership_weight(config.ownership_weight)
        .with_king_weight(config.king_weight)
}

/// Flat arrays of a training batch.
#[derive(Debug, Default)]
pub struct BatchArrays {
    /// `[batch][plane][rank][file]`.
    pub planes: Vec<f32>,
    /// `[batch][policy_len]`.
    pub policy: Vec<f32>,
    /// `[batch][policy_len]`.
    pub legal: Vec<bool>,
    /// `[batch]`.
    pub value: Vec<f32>,
    /// Who holds each square at the end, `[batch][size · size]` (see `tafl_nn::train::OwnershipTarget`).
    pub owner: Vec<f32>,
    /// 1 where the sample knows its game's end, `[batch]`.
    pub known: Vec<f32>,
    /// The king's last square, one-hot, `[batch][size · size]`.
    pub king: Vec<f32>,
}

/// Encodes samples into `planes` input planes each (the trained net's), under one random
/// symmetry each (or none), with value targets
/// `(1 - value_mix) * outcome + value_mix * root value`. Samples whose position does not rebuild
/// are left out.
pub fn encode_batch(
    samples: &[&Sample],
    variant: &'static Variant,
    planes: usize,
    symmetries: bool,
    value_mix: f32,
    rng: &mut impl Rng,
) -> BatchArrays {
    let size = variant.size();
    let area = usize::from(size) * usize::from(size);
    let moves = policy_len(size);
    let mut out = BatchArrays::default();
    for sample in samples {
        let Some(position) = sample.position(variant) else { continue };
        let sym = if symmetries { Symmetry::new(rng.random_range(0..8u8)) } else { Symmetry::IDENTITY };
        let position = sym.position(&position);
        let start = out.planes.len();
        out.planes.resize(start + planes * area, 0.0);
        encode_position(
            &position,
            usize::from(sample.repetitions),
            usize::from(sample.plies_since_capture),
            &mut out.planes[start..],
        );
        let row = out.policy.len();
        out.policy.resize(row + moves, 0.0);
        out.legal.resize(row + moves, false);
        for &m in &position.legal_moves() {
            out.legal[row + move_index(m, size)] = true;
        }
        for &(index, p) in &sample.policy {
            if let Some(m) = index_move(usize::from(index), size) {
                let i = move_index(sym.apply_move(m, size), size);
                out.policy[row + i] += p;
                out.legal[row + i] = true;
            }
        }
        out.value.push((1.0 - value_mix) * sample.value + value_mix * sample.root_value);
        push_ending(&mut out, sample.ending.as_ref(), sym, size);
    }
    out
}

/// The ownership targets of one sample under `sym`: zeros where its end is not known.
fn push_ending(out: &mut BatchArrays, ending: Option<&Ending>, sym: Symmetry, size: u8) {
    let area = usize::from(size) * usize::from(size);
    let row = out.owner.len();
    out.owner.resize(row + area, 0.0);
    out.king.resize(row + area, 0.0);
    out.known.push(if ending.is_some() { 1.0 } else { 0.0 });
    let Some(ending) = ending else { return };
    let to = |i: u32| sym.square(Square::from_index(i, size), size).index(size) as usize;
    for i in 0..area as u32 {
        out.owner[row + to(i)] = ending.owner(i);
    }
    if let Some(k) = ending.king_square().filter(|&k| (k as usize) < area) {
        out.king[row + to(k)] = 1.0;
    }
}

/// The shards without those played by a model more than `lag` models older than `newest`
/// (`lag` 0: all of them); imported shards and shards of unnumbered models always stay.
fn without_stale(shards: Vec<ShardInfo>, newest: &str, lag: u32, observer: &dyn Observer) -> Vec<ShardInfo> {
    let Some(newest) = model_number(newest).filter(|_| lag > 0) else { return shards };
    let before = shards.len();
    let kept: Vec<ShardInfo> = shards
        .into_iter()
        .filter(|s| model_number(&s.header.model).is_none_or(|n| n.saturating_add(lag) >= newest))
        .collect();
    if kept.len() < before {
        observer.info(&format!(
            "optimize: left out {} shards of models more than {lag} older than m{newest:06} (optimize.max-model-lag)",
            before - kept.len()
        ));
    }
    kept
}

/// The samples of the newest shards that fill a window of `window` samples, imported ones with
/// their weight scaled by `import_weight`; samples of weight 0 are left out.
fn window_samples(
    run: &RunDir,
    shards: &[ShardInfo],
    window: u64,
    import_weight: f32,
    variant: &'static Variant,
    observer: &dyn Observer,
) -> Vec<Sample> {
    let mut samples: Vec<Sample> = Vec::new();
    let import_dir = run.import_dir();
    for shard in shards.iter().rev() {
        if samples.len() as u64 >= window {
            break;
        }
        let factor = if shard.path.starts_with(&import_dir) { import_weight } else { 1.0 };
        match read_shard(&shard.path, &shard_expect(variant)) {
            Ok((_, s)) => samples
                .extend(s.into_iter().map(|s| Sample { weight: s.weight * factor, ..s }).filter(|s| s.weight > 0.0)),
            Err(e) => observer.warn(&format!("skipping shard {e}")),
        }
    }
    samples
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::OptimizeConfig;
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    #[test]
    fn shards_of_models_older_than_the_lag_are_left_out() {
        let variant = Variant::preset("brandubh").expect("preset");
        let shard = |model: &str| ShardInfo {
            path: format!("{model}.bin").into(),
            header: tafl_run::shard::ShardHeader::new(variant, 1, model.into()),
        };
        let shards = || vec![shard("m000001"), shard("m000003"), shard("import"), shard("m000005")];
        let kept = |lag| {
            without_stale(shards(), "m000005", lag, &crate::Plain)
                .iter()
                .map(|s| s.header.model.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(kept(0), ["m000001", "m000003", "import", "m000005"]);
        assert_eq!(kept(2), ["m000003", "import", "m000005"]);
        assert_eq!(kept(1), ["import", "m000005"]);
    }

    #[test]
    fn imported_samples_are_drawn_at_the_import_weight() {
        use tafl_rules::Game;
        let variant = Variant::preset("brandubh").expect("preset");
        let root = std::env::temp_dir().join(format!("tafl-window-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let run = RunDir::open(&root).expect("run");
        let game = Game::new(variant);
        let mut sample = Sample::of_position(game.position(), 1, 0, 0);
        sample.policy = vec![(move_index(game.legal_moves()[0], 7) as u16, 1.0)];
        std::fs::create_dir_all(run.import_dir()).expect("dir");
        let header = tafl_run::shard::ShardHeader::new(variant, 1, "import".into());
        tafl_run::shard::write_shard(&run.import_dir().join("a.bin"), header, &[sample.clone(), sample.clone()])
            .expect("shard");
        let own = run.selfplay_dir(&model_id(1));
        std::fs::create_dir_all(&own).expect("dir");
        let header = tafl_run::shard::ShardHeader::new(variant, 1, model_id(1));
        tafl_run::shard::write_shard(&own.join("b.bin"), header, &[sample]).expect("shard");
        let (shards, _) = run.shards(&shard_expect(variant));
        assert_eq!(shards.len(), 2);
        let weights = |import_weight: f32| -> Vec<f32> {
            let mut w: Vec<f32> = window_samples(&run, &shards, 10, import_weight, variant, &crate::Plain)
                .iter()
                .map(|s| s.weight)
                .collect();
            w.sort_by(f32::total_cmp);
            w
        };
        assert_eq!(weights(0.2), vec![0.2, 0.2, 1.0]);
        assert_eq!(weights(1.0), vec![1.0, 1.0, 1.0]);
        assert_eq!(weights(0.0), vec![1.0], "weight 0 leaves the imports out");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_new_run_starts_from_another_runs_net_once() {
        let base = std::env::temp_dir().join(format!("tafl-init-from-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let brandubh = Variant::preset("brandubh").expect("preset");
        let source = RunDir::open(&base.join("source")).expect("run");
        let config = RunConfig::from_toml(crate::config::DEFAULT_CONFIG).expect("config");
        ensure_initial_model(&source, &config, brandubh).expect("a net");
        let run = RunDir::open(&base.join("new")).expect("run");
        let net = &NetSection::default();
        let e = init_from(&run, Variant::preset("copenhagen").expect("preset"), source.root(), net)
            .expect_err("another variant");
        assert!(e.to_string().contains("--init-from"), "{e}");
        assert_eq!(init_from(&run, brandubh, source.root(), net).expect("starts"), Some(model_id(1)));
        assert_eq!(run.best_model(), Some(model_id(1)));
        let info = run.model_info(&model_id(1), &expected_for(brandubh)).expect("info");
        assert_eq!((info.iteration, info.parent), (1, None));
        assert_eq!(init_from(&run, brandubh, source.root(), net).expect("resumes"), None);
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn a_run_starts_from_the_builtin_net() {
        let root = std::env::temp_dir().join(format!("tafl-builtin-run-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let run = RunDir::open(&root).expect("run");
        let variant = Variant::preset("copenhagen").expect("preset");
        let started = init_from(&run, variant, Path::new(tafl_players::builtin::BUILTIN), &NetSection::default());
        assert_eq!(started.expect("starts"), Some(model_id(1)));
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn the_builtin_net_grows_the_tactical_planes_and_more_heads_and_plays_as_before() {
        use tafl_search::Evaluator;
        let root = std::env::temp_dir().join(format!("tafl-builtin-tactical-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let run = RunDir::open(&root).expect("run");
        let variant = Variant::preset("copenhagen").expect("preset");
        let builtin = Path::new(tafl_players::builtin::BUILTIN);
        let net =
            NetSection { tactical_planes: true, ownership_head: true, heads_by_side: true, ..NetSection::default() };
        init_from(&run, variant, builtin, &net).expect("starts");
        let grown = tafl_nn::NetEvaluator::load(&run.model_dir(&model_id(1)), &expected_for(variant)).expect("loads");
        assert_eq!(grown.config().input_planes, tafl_nn::TACTICAL_INPUT_PLANES);
        assert!(grown.config().has_ownership_head(), "the ownership head grew too");
        assert!(grown.config().has_heads_by_side(), "and a pair of heads for each side");
        let meta = checkpoint::read_meta(&run.model_dir(&model_id(1)), &expected_for(variant)).expect("meta");
        assert_eq!(meta.encoding_version, 2);
        let old = tafl_nn::NetEvaluator::load(&tafl_players::players::resolve_model(builtin), &expected_for(variant))
            .expect("builtin");
        assert_eq!(old.config().input_planes, tafl_nn::INPUT_PLANES);
        // A position with a capture threatened, so that the new planes are not all zero.
        let mut game = tafl_rules::Game::new(variant);
        for ply in 0..80 {
            let t = tafl_rules::tactics(game.position());
            if !t.capturable[0].is_empty() && !t.capturable[1].is_empty() {
                break;
            }
            let moves = game.legal_moves();
            assert!(!moves.is_empty() && ply < 79, "no position with threats both ways");
            game.play(moves[(ply * 7) % moves.len()]).expect("legal");
        }
        let (a, b) = (old.evaluate(&[&game]), grown.evaluate(&[&game]));
        assert!((a[0].value - b[0].value).abs() < 1e-4, "{} vs {}", a[0].value, b[0].value);
        assert!(a[0].policy.iter().zip(&b[0].policy).all(|(p, q)| (p - q).abs() < 1e-4));
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn the_window_grows_with_the_data() {
        let c = OptimizeConfig {
            window_min: 1000,
            window_max: 100_000,
            window_scale: 250.0,
            window_exponent: 0.65,
            ..OptimizeConfig::default()
        };
        assert_eq!(window_size(&c, 500), 500);
        assert_eq!(window_size(&c, 5000), 1000.max((250.0 * 5000f64.powf(0.65)) as u64).min(5000));
        let c = OptimizeConfig { window_scale: 10.0, ..c };
        let a = window_size(&c, 100_000);
        let b = window_size(&c, 1_000_000);
        assert!(a < b && b <= 100_000, "{a} {b}");
        assert_eq!(window_size(&c, u64::MAX / 4), 100_000);
    }

    #[test]
    fn steps_and_learning_rates() {
        let c =
            OptimizeConfig { batch_size: 100, reuse: 2.0, min_steps: 5, max_steps: 50, ..OptimizeConfig::default() };
        assert_eq!(steps_for(&c, 1000), 20);
        assert_eq!(steps_for(&c, 10), 5);
        assert_eq!(steps_for(&c, 100_000), 50);
        let cos = OptimizeConfig {
            lr_schedule: LrSchedule::Cosine,
            learning_rate: 1.0,
            lr_final: 0.1,
            ..OptimizeConfig::default()
        };
        assert!((learning_rate(&cos, 1, 0, 10, 100) - 1.0).abs() < 1e-9);
        assert!((learning_rate(&cos, 1, 10, 10, 100) - 0.1).abs() < 1e-9);
        let step = OptimizeConfig {
            lr_schedule: LrSchedule::Step,
            learning_rate: 1.0,
            lr_final: 0.5,
            lr_step_iterations: 10,
            ..OptimizeConfig::default()
        };
        assert!((learning_rate(&step, 25, 0, 10, 100) - 0.25).abs() < 1e-9);
        let warm = OptimizeConfig { learning_rate: 1.0, lr_warmup_steps: 10, ..OptimizeConfig::default() };
        assert!((learning_rate(&warm, 1, 4, 10, 0) - 0.5).abs() < 1e-9);
    }

    #[test]
    fn batches_follow_the_symmetry() {
        use tafl_rules::{Game, Position};
        let variant = Variant::preset("brandubh").unwrap();
        let mut game = Game::new(variant);
        let m = game.legal_moves()[5];
        let mut sample = Sample::of_position(game.position(), 1, 0, 0);
        sample.policy = vec![(move_index(m, 7) as u16, 1.0)];
        sample.value = 1.0;
        game.play_unchecked(m);
        let mut rng = StdRng::seed_from_u64(1);
        let arrays = encode_batch(&[&sample; 16], variant, tafl_nn::INPUT_PLANES, true, 0.0, &mut rng);
        assert_eq!(arrays.value.len(), 16);
        let moves = policy_len(7);
        for row in 0..16 {
            let policy = &arrays.policy[row * moves..(row + 1) * moves];
            let legal = &arrays.legal[row * moves..(row + 1) * moves];
            let hot: Vec<usize> = (0..moves).filter(|&i| policy[i] > 0.0).collect();
            assert_eq!(hot.len(), 1);
            assert!(legal[hot[0]]);
            assert_eq!(legal.iter().filter(|&&l| l).count(), Position::start(variant).legal_moves().len());
        }
        // The value target mixes the outcome with the search's root value.
        sample.root_value = -1.0;
        assert!(arrays.value.iter().all(|&v| v == 1.0));
        let mixed = encode_batch(&[&sample; 2], variant, tafl_nn::INPUT_PLANES, true, 0.25, &mut rng);
        assert_eq!(mixed.value, vec![0.5, 0.5]);
    }

    #[test]
    fn ownership_targets_follow_the_symmetry() {
        use tafl_rules::Game;
        let variant = Variant::preset("brandubh").unwrap();
        let mut game = Game::new(variant);
        for i in 0..4 {
            let moves = game.legal_moves();
            game.play_unchecked(moves[(i * 5) % moves.len()]);
        }
        // A game that "ended" on the sample's own position: each row's targets must show the
        // pieces of that row's input planes, whatever symmetry it was drawn under.
        let mut known = Sample::of_position(game.position(), 1, 0, 0);
        known.set_outcome(None, game.position());
        let unknown = Sample::of_position(game.position(), 1, 0, 0);
        let mut rng = StdRng::seed_from_u64(7);
        let mut batch = vec![&known; 16];
        batch.push(&unknown);
        let arrays = encode_batch(&batch, variant, tafl_nn::INPUT_PLANES, true, 0.0, &mut rng);
        let area = 49;
        let planes = tafl_nn::INPUT_PLANES * area;
        let mut seen = std::collections::HashSet::new();
        for row in 0..16 {
            let p = &arrays.planes[row * planes..];
            let owner = &arrays.owner[row * area..(row + 1) * area];
            let king = &arrays.king[row * area..(row + 1) * area];
            for i in 0..area {
                let want = p[i] - p[area + i] - p[2 * area + i];
                assert_eq!(owner[i], want, "row {row}, square {i}");
                assert_eq!(king[i], p[2 * area + i], "row {row}, square {i}");
            }
            assert_eq!(arrays.known[row], 1.0);
            seen.insert(owner.iter().map(|&o| o as i8).collect::<Vec<_>>());
        }
        assert!(seen.len() > 2, "the rows were drawn under several symmetries");
        assert_eq!(arrays.known[16], 0.0);
        assert!(arrays.owner[16 * area..].iter().chain(&arrays.king[16 * area..]).all(|&v| v == 0.0));
    }
}

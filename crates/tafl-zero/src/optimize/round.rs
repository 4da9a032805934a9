//! One training round in its steps: read the replay window, begin (or go on with) the round,
//! train its steps, publish the new model.

use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tafl_nn::checkpoint;
use tafl_nn::evaluator::expected_for;
use tafl_nn::model::TaflNetConfig;
use tafl_nn::{TrainBatch, Trainer};
use tafl_rules::Variant;
use tafl_run::metrics::{Event, RoundReport};
use tafl_run::rundir::{ModelInfo, RunDir, ShardInfo};
use tafl_run::shard::Sample;
use tafl_run::writer::now;

use super::{
    encode_batch, ensure_initial_model, learning_rate, model_error, publish_next_id, shard_expect, steps_for, totals,
    train_config, window_samples, window_size, without_stale,
};
use crate::config::RunConfig;
use crate::resume::{self, Resumed, RoundState, RoundSums, step_seed};
use crate::{Observer, ZeroError};

/// Trains one round when the run has `games-per-iteration` new games since the newest model
/// (or always, with `force`). Returns `None` when there is nothing to do, or when asked to stop
/// part-way (the round goes on from its last point next time).
///
/// # Errors
/// The newest checkpoint does not load, the new one cannot be written, or no sample loads.
pub fn train_round(
    run: &RunDir,
    config: &RunConfig,
    variant: &'static Variant,
    observer: &dyn Observer,
    force: bool,
) -> Result<Option<RoundReport>, ZeroError> {
    run.claim_trainer()?;
    let parent = ensure_initial_model(run, config, variant)?;
    let Some(window) = Window::read(run, config, variant, parent, force, observer)? else { return Ok(None) };
    let mut round = Round::begin(run, config, variant, window, observer)?;
    if !round.train(observer)? {
        return Ok(None);
    }
    round.publish().map(Some)
}

/// What a round trains on: its parent, the shards and the samples of the replay window, and
/// the round's newest point if it was stopped part-way.
struct Window {
    parent: String,
    parent_info: ModelInfo,
    resumed: Option<Resumed>,
    shards: Vec<ShardInfo>,
    games_total: u64,
    samples_total: u64,
    new_samples: u64,
    /// The window's size in samples.
    size: u64,
    samples: Vec<Sample>,
    /// Wall seconds to list, fetch and decode the shards.
    ingest_seconds: f64,
}

impl Window {
    /// The window of a round from `parent`: `None` when the run has fewer new games than an
    /// iteration's (unless `force`, or a round from `parent` is under way) or no sample.
    fn read(
        run: &RunDir,
        config: &RunConfig,
        variant: &'static Variant,
        parent: String,
        force: bool,
        observer: &dyn Observer,
    ) -> Result<Option<Window>, ZeroError> {
        let o = &config.optimize;
        let expected = expected_for(variant);
        let parent_info = run.model_info(&parent, &expected)?;
        // Ingestion: listing, fetching (from object storage, into the local cache) and decoding
        // the window's shards, timed apart from the steps.
        let listing = Instant::now();
        let (shards, warnings) = run.shards(&shard_expect(variant));
        let listing_seconds = listing.elapsed().as_secs_f64();
        for w in warnings {
            observer.warn(&w);
        }
        let shards = without_stale(shards, &parent, o.max_model_lag, observer);
        // A round from this parent that was stopped part-way goes on, on the shards it began with.
        resume::clear_except(run, Some(&parent));
        let resumed = resume::latest(run, &parent, &expected, &shards, &train_config(o), o.batch_size, observer);
        let shards = match &resumed {
            Some(r) => r.state.keep(run, shards),
            None => shards,
        };
        let (games_total, samples_total) = totals(&shards);
        let new_games = games_total.saturating_sub(parent_info.games_total);
        let enough = force || resumed.is_some() || new_games >= u64::from(config.selfplay.games_per_iteration);
        if samples_total == 0 || !enough {
            return Ok(None);
        }
        let size = window_size(o, samples_total);
        let reading = Instant::now();
        let samples = window_samples(run, &shards, size, o.import_weight, variant, observer);
        // Not the resume point's checkpoint loaded in between: only the shards' I/O and decoding.
        let ingest_seconds = listing_seconds + reading.elapsed().as_secs_f64();
        if samples.is_empty() {
            return Err(ZeroError::EmptyWindow);
        }
        Ok(Some(Window {
            new_samples: samples_total.saturating_sub(parent_info.samples_total),
            parent,
            parent_info,
            resumed,
            shards,
            games_total,
            samples_total,
            size,
            samples,
            ingest_seconds,
        }))
    }
}

/// A round under way: the trainer, where the round stands, and what it trains on.
struct Round<'a> {
    run: &'a RunDir,
    config: &'a RunConfig,
    variant: &'static Variant,
    window: Window,
    trainer: Trainer,
    net_config: TaflNetConfig,
    state: RoundState,
    /// The step this process began at (0, or where a stopped round left off).
    first_step: u32,
}

impl<'a> Round<'a> {
    /// Goes on from the round's newest point, or begins it from the parent's checkpoint and
    /// optimiser state.
    fn begin(
        run: &'a RunDir,
        config: &'a RunConfig,
        variant: &'static Variant,
        mut window: Window,
        observer: &dyn Observer,
    ) -> Result<Self, ZeroError> {
        let (trainer, net_config, state) = match window.resumed.take() {
            Some(r) => {
                observer.info(&format!(
                    "optimize: resuming the round from {} at step {} of {}",
                    window.parent, r.state.step, r.state.steps
                ));
                (r.trainer, r.config, r.state)
            }
            None => fresh(run, config, variant, &window, observer)?,
        };
        let first_step = state.step;
        Ok(Round { run, config, variant, window, trainer, net_config, state, first_step })
    }

    /// Trains the round's remaining steps, writing a point every `resume-every-seconds`.
    /// Returns `false` when asked to stop first (after writing a point of what it trained).
    fn train(&mut self, observer: &dyn Observer) -> Result<bool, ZeroError> {
        let o = &self.config.optimize;
        let samples = &self.window.samples;
        let max_weight = samples.iter().map(|s| s.weight).fold(0.0f32, f32::max);
        let device = self.trainer.device();
        let steps = self.state.steps;
        let point_meta = self.point_meta();
        let resume_every = Duration::from_secs_f64(o.resume_every_seconds);
        observer.stage("optimize", u64::from(steps), "steps");
        observer.progress(u64::from(self.first_step), "");
        let started = Instant::now();
        let mut last_point = Instant::now();
        let seconds_before = self.state.seconds;
        let trained_before = self.state.sums.trained;
        for step in self.first_step..steps {
            if observer.should_stop() {
                // Stopped (a deadline): nothing trained so far is lost.
                if step > self.first_step {
                    self.save_point(&point_meta)?;
                }
                return Ok(false);
            }
            // One generator per step, derived from the round's seed: a resumed round draws the
            // batches an uninterrupted one would.
            let mut rng = StdRng::seed_from_u64(step_seed(self.state.seed, step));
            let mut batch: Vec<&Sample> = Vec::with_capacity(o.batch_size);
            while batch.len() < o.batch_size {
                let s = &samples[rng.random_range(0..samples.len())];
                if s.weight >= max_weight || rng.random::<f32>() * max_weight < s.weight {
                    batch.push(s);
                }
            }
            let planes = self.net_config.input_planes;
            let arrays = encode_batch(&batch, self.variant, planes, o.symmetries, o.value_mix, &mut rng);
            let tensors = TrainBatch::from_slices(
                &self.net_config,
                &arrays.planes,
                &arrays.policy,
                &arrays.legal,
                &arrays.value,
                &device,
            )?;
            let tensors = if self.net_config.has_ownership_head() {
                tensors.with_ownership(&self.net_config, &arrays.owner, &arrays.known, &arrays.king, &device)?
            } else {
                tensors
            };
            let lr = learning_rate(o, self.state.iteration, step, steps, self.window.parent_info.steps_total);
            self.trainer.set_learning_rate(lr);
            let stats = self.trainer.step(&tensors);
            let sums = &mut self.state.sums;
            sums.trained += arrays.value.len() as u64;
            sums.loss += f64::from(stats.total);
            sums.policy += f64::from(stats.policy);
            sums.value += f64::from(stats.value);
            sums.ownership += f64::from(stats.ownership);
            sums.king += f64::from(stats.king);
            if step >= steps - steps.div_ceil(10) {
                sums.tail += f64::from(stats.total);
                sums.tail_steps += 1;
            }
            self.state.step = step + 1;
            self.state.learning_rate = lr;
            self.state.seconds = seconds_before + started.elapsed().as_secs_f64();
            let rate = (self.state.sums.trained - trained_before) as f64 / started.elapsed().as_secs_f64().max(1e-9);
            let heads = format!("p {:.3} v {:.3}", stats.policy, stats.value);
            let heads = if self.net_config.has_ownership_head() {
                format!("{heads} o {:.3} k {:.3}", stats.ownership, stats.king)
            } else {
                heads
            };
            observer.progress(u64::from(step + 1), &format!("loss {:.3} ({heads}) {rate:.0} samples/s", stats.total));
            if self.state.step < steps && last_point.elapsed() >= resume_every {
                self.save_point(&point_meta)?;
                last_point = Instant::now();
            }
        }
        observer.finish();
        Ok(true)
    }

    /// The checkpoint metadata of the round's points.
    fn point_meta(&self) -> checkpoint::CheckpointMeta {
        let parent = &self.window.parent;
        ModelInfo {
            id: format!("{parent} round"),
            parent: Some(parent.clone()),
            iteration: self.state.iteration,
            ..ModelInfo::default()
        }
        .into_meta(self.variant.name(), self.net_config.input_planes)
    }

    fn save_point(&self, meta: &checkpoint::CheckpointMeta) -> Result<(), ZeroError> {
        resume::save(self.run, &self.state, &self.trainer, &self.net_config, meta.clone())
    }

    /// Publishes the trained net as the run's next model (unless it diverged) and logs the
    /// round.
    fn publish(self) -> Result<RoundReport, ZeroError> {
        let Round { run, config, variant, window, trainer, net_config, state, first_step } = self;
        let (sums, steps, parent) = (state.sums, state.steps, window.parent);
        let info = ModelInfo {
            id: String::new(),
            parent: Some(parent.clone()),
            iteration: state.iteration,
            games_total: window.games_total,
            samples_total: window.samples_total,
            samples_seen: window.parent_info.samples_seen + sums.trained,
            steps_total: window.parent_info.steps_total + u64::from(steps),
            created: now(),
            net: net_config.name(),
        };
        let model = trainer.model();
        // A round that diverged (or ran at a NaN learning rate) ends in a net that plays like any
        // other, and may pass a gate: it is not published, and its points go with it.
        let n = f64::from(steps.max(1));
        let broken =
            if !(sums.loss / n).is_finite() { Some("losses") } else { (!model.weights_finite()).then_some("weights") };
        if let Some(what) = broken {
            resume::clear_except(run, None);
            return Err(ZeroError::NotFinite { model: format!("the round from {parent}"), what });
        }
        // A trainer that took over meanwhile owns the run: this one publishes nothing.
        run.check_fence()?;
        let id = publish_next_id(run, &parent, |id| {
            let meta =
                ModelInfo { id: id.to_string(), ..info.clone() }.into_meta(variant.name(), net_config.input_planes);
            checkpoint::save(&run.model_dir(id), &model, &net_config, &meta, Some(trainer.optimizer()))
        })?;
        // The round is a model now: its points have served.
        resume::clear_except(run, None);
        let report = RoundReport {
            id,
            parent,
            iteration: state.iteration,
            steps,
            batch_size: config.optimize.batch_size,
            window: window.size,
            loaded: window.samples.len() as u64,
            ingest_seconds: window.ingest_seconds,
            samples_total: window.samples_total,
            new_samples: window.new_samples,
            loss: (sums.loss / n) as f32,
            policy_loss: (sums.policy / n) as f32,
            value_loss: (sums.value / n) as f32,
            ownership_loss: (sums.ownership / n) as f32,
            king_loss: (sums.king / n) as f32,
            final_loss: (sums.tail / f64::from(sums.tail_steps.max(1))) as f32,
            learning_rate: state.learning_rate,
            seconds: state.seconds,
            samples_per_s: sums.trained as f64 / state.seconds.max(1e-9),
            resumed_from_step: first_step,
            games_total: window.games_total,
            samples_seen: info.samples_seen,
        };
        run.log(Event::Optimize(report.clone()));
        Ok(report)
    }
}

/// A round from its start: the parent's net and optimiser state (a fresh optimiser when the
/// state does not load), and a new seed.
fn fresh(
    run: &RunDir,
    config: &RunConfig,
    variant: &'static Variant,
    window: &Window,
    observer: &dyn Observer,
) -> Result<(Trainer, TaflNetConfig, RoundState), ZeroError> {
    let o = &config.optimize;
    let tc = train_config(o);
    let parent = &window.parent;
    let dir = run.model_dir(parent);
    let loaded = checkpoint::load(&dir, &expected_for(variant), &tafl_nn::device()).map_err(model_error(parent))?;
    let optim = match checkpoint::load_optimizer(&dir, &loaded.meta, tc.optimizer()) {
        Ok(Some(optim)) => optim,
        Ok(None) => tc.optimizer(),
        Err(e) => {
            observer.warn(&format!("optimiser state of {parent} does not load ({e}); starting a fresh one"));
            tc.optimizer()
        }
    };
    let iteration = window.parent_info.iteration + 1;
    let seed =
        config.run.seed ^ u64::from(iteration).wrapping_mul(0xA24B_AED4_963E_E407) ^ u64::from(std::process::id());
    let state = RoundState {
        version: resume::RESUME_VERSION,
        parent: parent.clone(),
        iteration,
        steps: steps_for(o, window.new_samples),
        step: 0,
        seed,
        batch_size: o.batch_size,
        shards: resume::shard_names(run, &window.shards),
        games_total: window.games_total,
        samples_total: window.samples_total,
        new_samples: window.new_samples,
        sums: RoundSums::default(),
        seconds: 0.0,
        learning_rate: o.learning_rate,
    };
    Ok((Trainer::resume(loaded.model, optim, tc), loaded.config, state))
}

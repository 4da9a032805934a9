//! The training loop and the stages it runs, each resumable from the files of the run.
//!
//! One iteration: self-play until the run has `games-per-iteration` games more than when the
//! newest model was trained; train a round into a new model; gate it against the best; every
//! `evaluate.every` iterations, evaluate the best. Each step is decided from the disk alone
//! (models, shard headers, `arena/*.json`), so after a kill the loop picks up at the first step
//! not finished; a half-finished step leaves nothing behind but hidden temporary files, and at
//! most the self-play games that were in flight or not yet written to a shard are played again.

use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tafl_nn::NetEvaluator;
use tafl_nn::evaluator::expected_for;
use tafl_players::ZeroFactory;
use tafl_rules::Variant;
use tafl_run::metrics::{
    Event, GateResult, ImportedSource, IterationSummary, RoundReport, SelfPlayMetrics, WarmStart, events,
};
use tafl_run::rundir::RunDir;
use tafl_run::shard::{ShardHeader, encode_shard, shard_stem};
use tafl_run::writer::now;

use crate::config::{DEFAULT_CONFIG, RunConfig};
use crate::import::{HUMAN_COPENHAGEN, ImportOptions, ImportStats, import_records, teacher_games};
use crate::optimize::{ensure_initial_model, shard_expect, totals, train_round};
use crate::selfplay::{FinishedGame, InFlight, SelfPlay, SelfPlayStats};
use crate::{Observer, ZeroError, evaluate, gate};

/// When `train` stops besides the config's `run.iterations`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TrainLimits {
    /// Stop once the run has this many iterations (overrides `run.iterations`; 0 = forever).
    pub iterations: Option<u32>,
    /// Stop after this many hours of this process.
    pub hours: Option<f64>,
}

/// A run: its directory, config and variant.
pub struct Run {
    /// The directory.
    pub dir: RunDir,
    /// The config in use.
    pub config: RunConfig,
    /// The variant.
    pub variant: &'static Variant,
    factory: ZeroFactory,
    /// Self-play games not finished by the last [`Run::selfplay`]: the next one plays them on.
    in_flight: Mutex<InFlight>,
}

/// The config text without a first `# git revision:` line.
fn without_revision(text: &str) -> &str {
    if text.starts_with("# git revision:") { text.split_once('\n').map_or("", |(_, rest)| rest) } else { text }
}

/// An observer that also stops at a deadline.
struct Deadline<'a> {
    inner: &'a dyn Observer,
    until: Option<Instant>,
}

impl Observer for Deadline<'_> {
    fn stage(&self, name: &str, total: u64, unit: &str) {
        self.inner.stage(name, total, unit);
    }
    fn progress(&self, done: u64, message: &str) {
        self.inner.progress(done, message);
    }
    fn finish(&self) {
        self.inner.finish();
    }
    fn info(&self, line: &str) {
        self.inner.info(line);
    }
    fn warn(&self, line: &str) {
        self.inner.warn(line);
    }
    fn should_stop(&self) -> bool {
        self.inner.should_stop() || self.until.is_some_and(|t| Instant::now() >= t)
    }
}

impl Run {
    /// Opens the run at `root`. With `config` (its TOML text), that config is used and stored
    /// as `config.toml` (an earlier, different one is kept as `config-<time>.toml`); without,
    /// the run's own `config.toml` is used, or the default for a new run. `base` is where
    /// relative variant paths are looked up.
    ///
    /// # Errors
    /// The config does not parse or names an unknown variant; the folders cannot be made.
    pub fn open(root: &Path, config: Option<&str>, base: Option<&Path>) -> Result<Run, ZeroError> {
        let dir = RunDir::open(root)?;
        let stored = dir.read_config()?;
        let text = match (config, &stored) {
            // The same config, perhaps with the git revision line the run was started with.
            (Some(text), Some(old)) if without_revision(text) == without_revision(old) => old.clone(),
            (Some(text), Some(old)) => {
                dir.keep_config(&format!("config-{}.toml", now() as u64), old)?;
                text.to_string()
            }
            (Some(text), _) => text.to_string(),
            (None, Some(old)) => old.clone(),
            (None, None) => DEFAULT_CONFIG.to_string(),
        };
        let config = RunConfig::from_toml(&text)?;
        let variant = config.variant(base)?;
        if stored.as_deref() != Some(text.as_str()) {
            dir.write_config(&text)?;
        }
        Ok(Run { dir, config, variant, factory: ZeroFactory::new(variant), in_flight: Mutex::default() })
    }

    /// Starts this new run from a trained checkpoint instead of a random net and the warm start
    /// (see [`crate::optimize::init_from`]); says so, or that the run had a model already.
    ///
    /// # Errors
    /// The checkpoint does not load or is for another variant.
    pub fn init_from(&self, source: &Path, observer: &dyn Observer) -> Result<(), ZeroError> {
        match crate::optimize::init_from(&self.dir, self.variant, source, &self.config.net)? {
            Some(id) => observer.info(&format!("{id}: started from {} (no warm start)", source.display())),
            None => observer.info(&format!("--init-from {}: the run has models already; resuming", source.display())),
        }
        Ok(())
    }

    /// The player factory (its networks are loaded once).
    #[must_use]
    pub fn factory(&self) -> &ZeroFactory {
        &self.factory
    }

    /// Plays `games` self-play games with the current best model and writes them as shards
    /// (every `shard-games` games) and archive records beside them. `games-in-flight` games
    /// play all the time: those unfinished when `games` have finished go on in the next call
    /// ([`SelfPlay::play_on`]).
    ///
    /// # Errors
    /// The best model does not load, or a shard cannot be written.
    pub fn selfplay(&self, games: u64, observer: &dyn Observer) -> Result<SelfPlayStats, ZeroError> {
        ensure_initial_model(&self.dir, &self.config, self.variant)?;
        let best = self.dir.best_model().ok_or(ZeroError::NoModel)?;
        let sp = &self.config.selfplay;
        let evaluator = NetEvaluator::load(&self.dir.model_dir(&best), &expected_for(self.variant))
            .map_err(|e| ZeroError::Model { id: best.clone(), message: e.to_string() })?
            .with_cache(sp.cache_size);
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        let seed = self.config.run.seed ^ nanos ^ u64::from(std::process::id()).rotate_left(32);
        let mut buffer: Vec<FinishedGame> = Vec::new();
        let mut written = 0u32;
        let mut error: Option<ZeroError> = None;
        let specs = sp.opponent.specs();
        let mut flush = |buffer: &mut Vec<FinishedGame>| -> Result<(), ZeroError> {
            if buffer.is_empty() {
                return Ok(());
            }
            written += 1;
            self.write_games(&best, written, buffer, observer)?;
            buffer.clear();
            Ok(())
        };
        observer.stage(&format!("selfplay {best}"), games, "games");
        let mut on_game = |g: FinishedGame| {
            buffer.push(g);
            if buffer.len() >= sp.shard_games
                && let Err(e) = flush(&mut buffer)
            {
                error.get_or_insert(e);
            }
        };
        let mut on_step = |s: &SelfPlayStats| {
            observer.progress(s.games, &progress_text(s));
            !observer.should_stop()
        };
        let mut selfplay = SelfPlay::new(self.variant, sp, seed);
        if sp.opponent_fraction > 0.0 {
            for spec in specs {
                let bad = |source| ZeroError::Spec { key: "selfplay.opponent", spec: spec.to_string(), source };
                selfplay = selfplay.with_opponent(spec.clone(), &self.factory).map_err(bad)?;
            }
        }
        // A poisoned lock means a panic mid-call: its games are dropped, as on a stop.
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|poisoned| {
            let mut guard = poisoned.into_inner();
            *guard = InFlight::default();
            guard
        });
        let stats = selfplay.play_on(&evaluator, games, &mut in_flight, &mut on_game, &mut on_step);
        drop(in_flight);
        observer.finish();
        if let Some(e) = error {
            return Err(e);
        }
        flush(&mut buffer)?;
        if let Ok(waiting @ 1..) = self.dir.drain_spool() {
            observer.warn(&format!("{}: {waiting} objects still wait in the local spool", self.dir.location()));
        }
        self.dir.log(Event::Selfplay(stats.metrics(&best)));
        self.report_selfplay(&best, &stats, observer);
        Ok(stats)
    }

    /// Writes `games` as the `n`-th shard of this process and their archive records beside it.
    fn write_games(
        &self,
        best: &str,
        n: u32,
        games: &[FinishedGame],
        observer: &dyn Observer,
    ) -> Result<(), ZeroError> {
        let specs = self.config.selfplay.opponent.specs();
        let against =
            |g: &FinishedGame| g.opponent.map_or(String::new(), |a| format!(", {} as the {}", specs[a.index], a.side));
        let stem = shard_stem(n);
        let records: String = games
            .iter()
            .map(|g| format!("# {best} {} {} plies{}\n{}\n", g.reason, g.plies, against(g), g.record))
            .collect();
        self.dir.put_object(&RunDir::records_key(best, &stem), records.as_bytes())?;
        let samples: Vec<_> = games.iter().flat_map(|g| g.samples.iter().cloned()).collect();
        let header = ShardHeader::new(self.variant, games.len() as u64, best.to_string());
        let key = RunDir::shard_key(best, &stem);
        let bytes = encode_shard(&self.dir.shard_path(best, &stem), header, &samples)?;
        let waiting = self.dir.put_object(&key, &bytes)?;
        if waiting > 0 {
            observer.warn(&format!(
                "{}: storage does not answer; {waiting} objects wait in the local spool and go up later",
                self.dir.location()
            ));
        }
        Ok(())
    }

    /// The log lines of one call of [`Self::selfplay`].
    fn report_selfplay(&self, best: &str, stats: &SelfPlayStats, observer: &dyn Observer) {
        let specs = self.config.selfplay.opponent.specs();
        observer.info(&format!(
            "selfplay {best}: {} games in {:.0}s ({:.1} games/min, {:.0} evals/s), {} samples, mean {:.0} plies, attackers/defenders/draws {}, {} resigned ({} of {} playouts would have been wrong)",
            stats.games,
            stats.seconds,
            stats.games as f64 * 60.0 / stats.seconds.max(1e-9),
            stats.evaluations as f64 / stats.seconds.max(1e-9),
            stats.samples,
            stats.plies as f64 / stats.games.max(1) as f64,
            stats.results,
            stats.resignations,
            stats.false_resignations,
            stats.playouts_with_resign
        ));
        for (spec, t) in specs.iter().zip(&stats.opponents).filter(|(_, t)| t.games > 0) {
            observer.info(&format!(
                "selfplay {best}: against {spec}: {} games, the net won {} and drew {}",
                t.games, t.net_wins, t.draws
            ));
        }
    }

    /// Trains one round when enough new games are on disk (always with `force`).
    ///
    /// # Errors
    /// See [`train_round`].
    pub fn optimize(&self, observer: &dyn Observer, force: bool) -> Result<Option<RoundReport>, ZeroError> {
        let warm = &self.config.warm_start;
        let report = if self.untrained() && warm.enabled() && self.dir.has_imports() {
            // The first round trains on the imported games alone: as long as the config says.
            let mut config = self.config.clone();
            config.optimize.min_steps = warm.steps;
            config.optimize.max_steps = warm.steps;
            train_round(&self.dir, &config, self.variant, observer, force)?
        } else {
            train_round(&self.dir, &self.config, self.variant, observer, force)?
        };
        if let Some(r) = &report {
            observer.info(&format!(
                "optimize {} (from {}): {} steps x {} on a window of {} samples ({} new, read in {:.1} s: {:.0} samples/s), loss {:.3} -> {:.3} (policy {:.3}, value {:.3}), {:.0} samples/s",
                r.id, r.parent, r.steps, r.batch_size, r.window, r.new_samples, r.ingest_seconds, r.loaded as f64 / r.ingest_seconds.max(1e-9), r.loss, r.final_loss, r.policy_loss, r.value_loss, r.samples_per_s
            ));
        }
        Ok(report)
    }

    /// Imports the `[warm-start]` games, once: human records and teacher games go to a hidden
    /// directory that becomes `selfplay/import/` when complete, so a killed warm start starts
    /// again from nothing. Nothing to do once the run has trained a model, or when it already has
    /// `selfplay/import/` (from an earlier warm start or `tafl import`).
    ///
    /// # Errors
    /// A record file does not read, the teacher cannot be built, or a shard cannot be written.
    pub fn warm_start(&self, observer: &dyn Observer) -> Result<(), ZeroError> {
        let w = &self.config.warm_start;
        let done = self.dir.import_dir();
        if !w.enabled() || self.dir.has_imports() || !self.untrained() {
            return Ok(());
        }
        let staging = self.dir.import_staging_dir();
        let _ = std::fs::remove_dir_all(&staging);
        let mut log = Vec::new();
        for source in &w.records {
            let (text, name) = if source == "human" {
                if self.variant.name() != "copenhagen" {
                    return Err(ZeroError::Config(crate::ConfigError::Invalid {
                        key: "warm-start.records",
                        message: format!("`human` holds Copenhagen 11x11 games, not {}", self.variant.name()),
                    }));
                }
                (HUMAN_COPENHAGEN.to_string(), "human Copenhagen games".to_string())
            } else {
                let path = Path::new(source);
                (std::fs::read_to_string(path).map_err(|e| ZeroError::io(path, e))?, source.clone())
            };
            let stats = import_records(&staging, self.variant, &text, &name, &ImportOptions::default())?;
            log.push(imported(&name, &stats, observer));
        }
        if let Some(teacher) = w.teacher.as_ref().filter(|_| w.teacher_games > 0) {
            let defenders = w.teacher_defenders.as_ref().unwrap_or(teacher);
            let seed = self.config.run.seed ^ 0x7EAC_4E55;
            let lines = teacher_games(self.variant, teacher, defenders, &self.factory, w, seed, observer)?;
            if observer.should_stop() {
                return Ok(());
            }
            let options = ImportOptions { skip_plies: w.teacher_opening_plies, ..ImportOptions::default() };
            let name = if w.teacher_defenders.is_none() {
                format!("{} against itself", teacher.name())
            } else {
                format!("{} against {}", teacher.name(), defenders.name())
            };
            let stats = import_records(&staging, self.variant, &lines, &name, &options)?;
            log.push(imported(&name, &stats, observer));
        }
        if !done.exists() {
            std::fs::rename(&staging, &done).map_err(|e| ZeroError::io(&done, e))?;
        }
        self.dir.publish_folder(&done)?;
        self.dir.log(Event::WarmStart(WarmStart { sources: log }));
        Ok(())
    }

    /// The run has no trained model yet (only the random `m000000`, or none).
    fn untrained(&self) -> bool {
        self.dir.latest_model().is_none_or(|id| id == tafl_run::rundir::model_id(0))
    }

    /// Gates `candidate` (default: the newest model) against the best.
    ///
    /// # Errors
    /// See [`gate::gate`].
    pub fn gate(&self, candidate: Option<&str>, observer: &dyn Observer) -> Result<Option<GateResult>, ZeroError> {
        let Some(candidate) = candidate.map(str::to_string).or_else(|| self.dir.latest_model()) else {
            return Ok(None);
        };
        let result = gate::gate(&self.dir, &self.config, self.variant, &candidate, &self.factory, observer)?;
        let verdict = if result.passed { "promoted to best" } else { "rejected" };
        if result.skipped {
            observer.info(&format!("gate {candidate}: {verdict} (no games)"));
        } else {
            let sprt = result.sprt.as_deref().map(|s| format!(", SPRT {s}")).unwrap_or_default();
            observer.info(&format!("gate {candidate} vs {}: {}{sprt}: {verdict}", result.best, result.result));
        }
        Ok(Some(result))
    }

    /// Evaluates `model` (default: the best) against the ladder.
    ///
    /// # Errors
    /// See [`evaluate::evaluate`].
    pub fn evaluate(&self, model: Option<&str>, observer: &dyn Observer) -> Result<(), ZeroError> {
        let Some(model) = model.map(str::to_string).or_else(|| self.dir.best_model()) else { return Ok(()) };
        observer.info(&format!("evaluate {model}:"));
        evaluate::evaluate(&self.dir, &self.config, self.variant, &model, &self.factory, observer)?;
        Ok(())
    }

    /// Self-play without end (or `games` games), reloading the best model between chunks of
    /// `games-per-iteration` games: what a self-play worker on another machine runs.
    ///
    /// # Errors
    /// See [`Run::selfplay`].
    pub fn selfplay_loop(&self, games: Option<u64>, observer: &dyn Observer) -> Result<(), ZeroError> {
        let mut left = games;
        while left != Some(0) && !observer.should_stop() {
            let chunk = u64::from(self.config.selfplay.games_per_iteration).min(left.unwrap_or(u64::MAX));
            let stats = self.selfplay(chunk, observer)?;
            left = left.map(|l| l.saturating_sub(stats.games.max(1)));
        }
        Ok(())
    }

    /// The training loop: self-play, optimize, gate, evaluate, until the iteration target or
    /// the time limit (or forever). Every step is derived from the files, so this resumes a
    /// killed run.
    ///
    /// # Errors
    /// The first stage that fails.
    pub fn train(&self, limits: TrainLimits, observer: &dyn Observer) -> Result<(), ZeroError> {
        let until = limits.hours.map(|h| Instant::now() + Duration::from_secs_f64(h.max(0.0) * 3600.0));
        let observer = &Deadline { inner: observer, until };
        let target = limits.iterations.unwrap_or(self.config.run.iterations);
        let expected = expected_for(self.variant);
        let started = Instant::now();
        ensure_initial_model(&self.dir, &self.config, self.variant)?;
        self.warm_start(observer)?;
        observer.info(&format!(
            "run {} ({}, {} net, {} games per iteration{})",
            self.dir.location(),
            self.variant.name(),
            self.config.net_config(self.variant.size()).name(),
            self.config.selfplay.games_per_iteration,
            if target > 0 { format!(", {target} iterations") } else { String::new() }
        ));
        loop {
            if observer.should_stop() {
                observer.info("stopping: time is up");
                break;
            }
            let latest = self.dir.latest_model().ok_or(ZeroError::NoModel)?;
            let info = self.dir.model_info(&latest, &expected)?;
            if info.iteration > 0 && self.dir.gate_result(&latest).is_none() {
                self.gate(Some(&latest), observer)?;
                self.summary(&latest, started, observer)?;
                continue;
            }
            let every = self.config.evaluate.every;
            if every > 0 && info.iteration > 0 && info.iteration.is_multiple_of(every) {
                let best = self.dir.best_model().unwrap_or_else(|| latest.clone());
                if self.dir.eval_result(&best).is_none() {
                    self.evaluate(Some(&best), observer)?;
                    continue;
                }
            }
            if target > 0 && info.iteration >= target {
                observer.info(&format!(
                    "done: {} iterations, best model {}",
                    info.iteration,
                    self.dir.best_model().unwrap_or_default()
                ));
                break;
            }
            let (shards, warnings) = self.dir.shards(&shard_expect(self.variant));
            for w in warnings {
                observer.warn(&w);
            }
            let (games_on_disk, _) = totals(&shards);
            let wanted = info.games_total + u64::from(self.config.selfplay.games_per_iteration);
            if games_on_disk < wanted {
                self.selfplay(wanted - games_on_disk, observer)?;
                continue;
            }
            if self.optimize(observer, false)?.is_none() && !observer.should_stop() {
                return Err(ZeroError::NothingToTrain);
            }
        }
        Ok(())
    }

    fn summary(&self, model: &str, started: Instant, observer: &dyn Observer) -> Result<(), ZeroError> {
        let info = self.dir.model_info(model, &expected_for(self.variant))?;
        let best = self.dir.best_model().unwrap_or_default();
        let metrics = self.dir.metrics();
        let sp = events::<SelfPlayMetrics>(&metrics).next_back().map(|(_, e)| e);
        let opt = events::<RoundReport>(&metrics).next_back().map(|(_, e)| e);
        let gate_score = events::<GateResult>(&metrics).next_back().map_or(0.5, |(_, e)| e.result.score);
        let rate = |f: fn(&SelfPlayMetrics) -> f64| sp.map_or(0.0, f);
        let loss = |f: fn(&RoundReport) -> f32| opt.map_or(f32::NAN, f);
        let line = format!(
            "iteration {} {model}: {} games, {} samples seen | selfplay {:.1} games/min {:.0} evals/s | loss {:.3} (p {:.3} v {:.3}) | gate {:.0}% -> best {best} | {:.0}s elapsed",
            info.iteration,
            info.games_total,
            info.samples_seen,
            rate(|m| m.games_per_s) * 60.0,
            rate(|m| m.evals_per_s),
            loss(|r| r.loss),
            loss(|r| r.policy_loss),
            loss(|r| r.value_loss),
            100.0 * gate_score,
            started.elapsed().as_secs_f64()
        );
        observer.info(&line);
        self.dir.log(Event::Iteration(IterationSummary {
            iteration: info.iteration,
            model: model.to_string(),
            best,
            games_total: info.games_total,
            samples_total: info.samples_total,
            samples_seen: info.samples_seen,
        }));
        Ok(())
    }
}

/// Reports one imported source and returns it for the metrics.
fn imported(name: &str, stats: &ImportStats, observer: &dyn Observer) -> ImportedSource {
    observer.info(&format!("warm start: {name}: {}", stats.summary()));
    ImportedSource { source: name.to_string(), games: stats.games, samples: stats.samples, results: stats.results }
}

/// Self-play's progress line: speed, batch, samples and results so far.
fn progress_text(s: &SelfPlayStats) -> String {
    let t = s.seconds.max(1e-9);
    format!(
        "{:.0} evals/s, batch {:.0}, {:.1} moves/s, {} samples, A/D/= {}",
        s.evaluations as f64 / t,
        s.evaluations as f64 / s.batches.max(1) as f64,
        s.moves as f64 / t,
        s.samples,
        s.results
    )
}

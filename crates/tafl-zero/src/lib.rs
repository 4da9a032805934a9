//! # tafl-zero
//!
//! AlphaZero-style training: self-play with many games in flight, sample shards, a replay
//! window, the trainer loop, gating and evaluation, all talking through files in a run
//! directory so that any stage can be killed and restarted, or run alone or on another machine.
//!
//! The run directory, its storage and the shard files are `tafl-run`'s ([`tafl_run`]); the
//! players with a network (`mcts:model=…`, bundles, `builtin`) are `tafl-players`'s
//! ([`tafl_players`]).
//!
//! * [`config`]: the run config (`configs/*.toml`), every key documented.
//! * [`selfplay`]: games in flight, one network batch per step, playout-cap randomisation,
//!   temperature, resignation with playouts that measure false resignations.
//! * [`optimize`]: the replay window and one training round into a new checkpoint.
//! * [`resume`]: resumable points inside a training round, so a killed round goes on.
//! * [`import`]: recorded games (human archives, arena matches) as samples for a warm start.
//! * [`gate`] and [`evaluate`]: candidate against best; best against a ladder.
//! * [`pipeline`]: `train`: the stages in a loop, resumable at any point.
//! * [`report`]: SVG plots and an index.html from the run's metrics.

pub mod config;
pub mod evaluate;
pub mod gate;
pub mod import;
pub mod optimize;
pub mod pipeline;
pub mod report;
pub mod resume;
pub mod selfplay;

use std::path::{Path, PathBuf};

pub use config::{ConfigError, RunConfig};
pub use pipeline::{Run, TrainLimits};

/// Why a stage failed.
#[derive(Debug, thiserror::Error)]
pub enum ZeroError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The config is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A checkpoint does not load or save.
    #[error("model {id}: {message}")]
    Model {
        /// The model's id or path.
        id: String,
        /// Why.
        message: String,
    },
    /// A player spec of the config (`key`) does not parse or build.
    #[error("{key} `{spec}`: {source}")]
    Spec {
        /// The config key, as `table.key`.
        key: &'static str,
        /// The spec as written.
        spec: String,
        /// Why.
        source: tafl_arena::SpecError,
    },
    /// A match could not run.
    #[error("arena: {0}")]
    Arena(#[from] tafl_arena::ArenaError),
    /// The run has no model yet to play or to train from.
    #[error("the run has no model")]
    NoModel,
    /// No sample of the replay window loads.
    #[error("no sample in the replay window loads")]
    EmptyWindow,
    /// The trainer found no new samples to train on, and nothing stopped it.
    #[error("the trainer found nothing to train on")]
    NothingToTrain,
    /// A model id to publish is taken, or no free one was found.
    #[error("{run}: {message}")]
    ModelId {
        /// The run's location.
        run: String,
        /// Which id, and why.
        message: String,
    },
    /// The trainer's batch does not fit the net.
    #[error("training batch: {0}")]
    Batch(#[from] tafl_nn::train::BatchError),
    /// A plot could not be drawn.
    #[error("plot {path}: {message}")]
    Plot {
        /// The plot's file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// A shard could not be written.
    #[error(transparent)]
    Shard(#[from] tafl_run::shard::ShardError),
    /// The run's storage failed or refused.
    #[error(transparent)]
    Storage(#[from] tafl_run::storage::StoreError),
    /// The run directory could not be read or written.
    #[error(transparent)]
    Run(#[from] tafl_run::RunError),
    /// A model's losses or weights are NaN or infinite: it is neither published nor made the
    /// best.
    #[error("{model}: the {what} are not finite (NaN or infinite); the model is neither published nor made the best")]
    NotFinite {
        /// The model's id, or the round that trained it.
        model: String,
        /// `losses` or `weights`.
        what: &'static str,
    },
}

impl ZeroError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> ZeroError {
        ZeroError::Io { path: path.to_path_buf(), source }
    }
}

/// What a stage reports while it runs; the command line draws progress bars from it.
pub trait Observer: Sync {
    /// A stage starts: `total` units (games, steps) of `unit`.
    fn stage(&self, name: &str, total: u64, unit: &str);
    /// Progress of the current stage: `done` units, and a short status.
    fn progress(&self, done: u64, message: &str);
    /// The current stage ended.
    fn finish(&self);
    /// A line for the log: one per stage result or iteration.
    fn info(&self, line: &str);
    /// Something went wrong but the run goes on (a damaged shard, a failed evaluation).
    fn warn(&self, line: &str);
    /// True when the run should stop as soon as it can (a deadline, a signal).
    fn should_stop(&self) -> bool {
        false
    }
}

/// An observer that prints info and warnings to standard error and draws nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct Plain;

impl Observer for Plain {
    fn stage(&self, _: &str, _: u64, _: &str) {}
    fn progress(&self, _: u64, _: &str) {}
    fn finish(&self) {}
    fn info(&self, line: &str) {
        eprintln!("{line}");
    }
    fn warn(&self, line: &str) {
        eprintln!("warning: {line}");
    }
}

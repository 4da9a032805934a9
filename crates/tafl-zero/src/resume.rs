//! Resumable points inside a training round, so that a killed round (the warm start's first
//! round is 3 000 steps, about 25 minutes on 2 cores) goes on from its last point instead of
//! step 0.
//!
//! ```text
//! <run>/resume/<parent>/step-000300/   a checkpoint (weights, optimiser state) whose meta.json
//!                                      also holds the round's state: RoundState as JSON text
//!                                      under `round` (with its version), its checksum under
//!                                      `round-digest`
//! ```
//!
//! Every `optimize.resume-every-seconds` of training, and when the round is asked to stop (a
//! deadline), the trainer writes a point through [`tafl_nn::checkpoint::save`] (a temporary
//! directory renamed into place; weights and optimiser state with length and checksum), then
//! removes the older points of the round. The state holds what the round's remaining steps
//! depend on: the shards it trains on (so that games written meanwhile by self-play workers do
//! not change its window), its planned steps, the seed from which each step's generator is
//! derived (so the sampler needs no state of its own), the running loss sums and time. A point
//! that does not load (damaged, another version, another round) is reported and removed; the
//! round goes on from an older point, or from step 0.

use std::path::Path;

use serde::{Deserialize, Serialize};
use tafl_nn::checkpoint::{self, CheckpointError, CheckpointMeta, Expected, FileDigest};
use tafl_nn::model::TaflNetConfig;
use tafl_nn::{TrainConfig, Trainer};
use tafl_run::rundir::{RunDir, ShardInfo};

use crate::{Observer, ZeroError};

/// Version of [`RoundState`] this build writes and reads.
pub const RESUME_VERSION: u32 = 1;

const STATE_KEY: &str = "round";
const DIGEST_KEY: &str = "round-digest";

/// Loss sums and counts of a round so far (its report is made from them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RoundSums {
    /// Sum of the total loss over the steps.
    pub loss: f64,
    /// Sum of the policy loss.
    pub policy: f64,
    /// Sum of the value loss.
    pub value: f64,
    /// Sum of the ownership head's squared error (0 without the head; absent in older states).
    #[serde(default)]
    pub ownership: f64,
    /// Sum of the cross-entropy of the king's last square (ditto).
    #[serde(default)]
    pub king: f64,
    /// Sum of the total loss over the last tenth of the round.
    pub tail: f64,
    /// Steps in `tail`.
    pub tail_steps: u32,
    /// Samples trained on.
    pub trained: u64,
}

/// Where a round stands: everything its remaining steps depend on besides the weights and the
/// optimiser state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoundState {
    /// [`RESUME_VERSION`] when written.
    pub version: u32,
    /// The model the round continues from.
    pub parent: String,
    /// The iteration of the model the round makes.
    pub iteration: u32,
    /// Steps the round takes in all.
    pub steps: u32,
    /// Steps taken.
    pub step: u32,
    /// Seed of the round; step `n` draws with [`step_seed`]`(seed, n)`.
    pub seed: u64,
    /// Samples per step.
    pub batch_size: usize,
    /// The shards the round trains on, relative to the run directory, oldest first.
    pub shards: Vec<String>,
    /// Games in those shards.
    pub games_total: u64,
    /// Samples in those shards.
    pub samples_total: u64,
    /// Samples new since the parent.
    pub new_samples: u64,
    /// Loss sums so far.
    pub sums: RoundSums,
    /// Seconds of training so far.
    pub seconds: f64,
    /// The learning rate of the last step taken.
    pub learning_rate: f64,
}

/// The seed of step `step`'s generator: one generator per step, so that a resumed round draws
/// the batches an uninterrupted one would have drawn.
#[must_use]
pub fn step_seed(seed: u64, step: u32) -> u64 {
    seed ^ u64::from(step).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The names of `shards`, for [`RoundState::shards`].
#[must_use]
pub fn shard_names(run: &RunDir, shards: &[ShardInfo]) -> Vec<String> {
    shards.iter().map(|s| run.relative_name(&s.path)).collect()
}

impl RoundState {
    /// The shards of `shards` that the round began with, in their order.
    #[must_use]
    pub fn keep(&self, run: &RunDir, shards: Vec<ShardInfo>) -> Vec<ShardInfo> {
        let names: std::collections::HashSet<&str> = self.shards.iter().map(String::as_str).collect();
        shards.into_iter().filter(|s| names.contains(run.relative_name(&s.path).as_str())).collect()
    }
}

/// A round read back from its newest point.
pub struct Resumed {
    /// Where the round stands.
    pub state: RoundState,
    /// The net and optimiser state as they were after `state.step` steps.
    pub trainer: Trainer,
    /// The net's config.
    pub config: TaflNetConfig,
}

/// Writes the point `state` of a round (with the trainer's net and optimiser as they are after
/// `state.step` steps) and removes the round's older points. `meta` is the checkpoint metadata
/// of the run's models (variant, encoding).
///
/// # Errors
/// The checkpoint cannot be written.
pub fn save(
    run: &RunDir,
    state: &RoundState,
    trainer: &Trainer,
    config: &TaflNetConfig,
    meta: CheckpointMeta,
) -> Result<(), ZeroError> {
    let dir = run.resume_point_dir(&state.parent, state.step);
    let id = format!("resume point {}", dir.display());
    let error = |message: String| ZeroError::Model { id: id.clone(), message };
    // The state as JSON text inside meta.json, its checksum taken over that text (JSON numbers
    // parsed back need not print the same, text does).
    let text = serde_json::to_string(&RoundState { version: RESUME_VERSION, ..state.clone() })
        .map_err(|e| error(e.to_string()))?;
    let digest = serde_json::to_value(FileDigest::of(text.as_bytes())).map_err(|e| error(e.to_string()))?;
    let meta = meta.with_field(STATE_KEY, text).with_field(DIGEST_KEY, digest);
    let parent_dir = run.resume_dir(&state.parent);
    std::fs::create_dir_all(&parent_dir).map_err(|e| ZeroError::io(&parent_dir, e))?;
    match checkpoint::save(&dir, &trainer.model(), config, &meta, Some(trainer.optimizer())) {
        // The same step saved twice (a stop right after a timed point): the first one stands.
        Ok(()) | Err(CheckpointError::AlreadyExists(_)) => {}
        Err(e) => return Err(error(e.to_string())),
    }
    for step in run.resume_points(&state.parent).into_iter().filter(|&s| s < state.step) {
        // Best effort: an older point left behind is skipped by the newer one.
        let _ = std::fs::remove_dir_all(run.resume_point_dir(&state.parent, step));
    }
    Ok(())
}

/// Reads one point: the checkpoint's own checks (format, variant, encoding, lengths and
/// checksums of weights and optimiser state), then the round state's version and checksum.
fn load(dir: &Path, expected: &Expected, train: &TrainConfig) -> Result<Resumed, String> {
    let loaded = checkpoint::load(dir, expected, &tafl_nn::device()).map_err(|e| e.to_string())?;
    let text =
        loaded.meta.extra.get(STATE_KEY).and_then(serde_json::Value::as_str).ok_or("meta.json holds no round state")?;
    let recorded: Option<FileDigest> =
        loaded.meta.extra.get(DIGEST_KEY).and_then(|d| serde_json::from_value(d.clone()).ok());
    if recorded != Some(FileDigest::of(text.as_bytes())) {
        return Err("round state checksum mismatch".into());
    }
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("round state: {e}"))?;
    let version = value.get("version").and_then(serde_json::Value::as_u64).unwrap_or(0);
    if version != u64::from(RESUME_VERSION) {
        return Err(format!("round state version {version} is not supported (this build reads {RESUME_VERSION})"));
    }
    let state: RoundState = serde_json::from_value(value).map_err(|e| format!("round state: {e}"))?;
    let optimizer = checkpoint::load_optimizer(dir, &loaded.meta, train.optimizer())
        .map_err(|e| e.to_string())?
        .ok_or("no optimiser state")?;
    Ok(Resumed { state, trainer: Trainer::resume(loaded.model, optimizer, train.clone()), config: loaded.config })
}

/// The newest point of a round from `parent` that loads and whose shards are all among
/// `shards`; `None` when there is none (the round starts from step 0). Points that do not load
/// are reported and removed, and so are points of a round with another `batch_size`. `train` is
/// the round's optimiser and step config.
#[must_use]
pub fn latest(
    run: &RunDir,
    parent: &str,
    expected: &Expected,
    shards: &[ShardInfo],
    train: &TrainConfig,
    batch_size: usize,
    observer: &dyn Observer,
) -> Option<Resumed> {
    let on_disk: std::collections::HashSet<String> = shard_names(run, shards).into_iter().collect();
    for step in run.resume_points(parent) {
        let dir = run.resume_point_dir(parent, step);
        let unusable = match load(&dir, expected, train) {
            Ok(r) if r.state.parent != parent || r.state.step != step || r.state.step > r.state.steps => {
                "belongs to another round".to_string()
            }
            Ok(r) if r.state.batch_size != batch_size => {
                format!("batches of {}, not {batch_size}: the config changed", r.state.batch_size)
            }
            Ok(r) if !r.state.shards.iter().all(|s| on_disk.contains(s)) => "shards of the round are gone".to_string(),
            Ok(r) => return Some(r),
            Err(e) => e,
        };
        // Removed, so that the round can write a sound point under the same name.
        observer.warn(&format!("{}: {unusable}; removed", dir.display()));
        let _ = std::fs::remove_dir_all(&dir);
    }
    None
}

/// Removes the points of every round except those from `keep` (a finished round's, or a stale
/// one whose parent is no longer the newest model).
pub fn clear_except(run: &RunDir, keep: Option<&str>) {
    for entry in std::fs::read_dir(run.resumes_dir()).into_iter().flatten().flatten() {
        if keep.is_none_or(|k| entry.file_name() != k) {
            // Best effort: what is left is skipped or cleared by a later round.
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

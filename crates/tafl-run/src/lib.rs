//! # tafl-run
//!
//! The run format: the one crate that knows a run's keys. Every stage of training (self-play,
//! the trainer, gating, evaluation) and every reader (the dashboard, `tafl export`, player
//! specs that name a run) goes through it.
//!
//! * [`metrics`]: the metrics events and arena results, one type each.
//! * [`rundir`]: the run directory's layout and naming rules, and the state read back from it
//!   (models, the best model, shards, metrics, arena results, the trainer's fence, the cache
//!   and spool of a run in object storage).
//! * [`shard`]: compact samples and checksummed shard files.
//! * [`storage`]: where a run lives (a directory, `file://`, `s3://`): list, get,
//!   put-if-absent, delete.
//! * [`writer`]: who writes to a run, and when (the worker id that names its objects).

pub mod metrics;
pub mod rundir;
pub mod shard;
pub mod storage;
pub mod writer;

use std::path::{Path, PathBuf};

pub use rundir::RunDir;

/// Why an operation on a run failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A checkpoint's metadata does not read.
    #[error("model {id}: {message}")]
    Model {
        /// The model's id or path.
        id: String,
        /// Why.
        message: String,
    },
    /// The run's storage failed or refused.
    #[error(transparent)]
    Storage(#[from] storage::StoreError),
    /// Something else that stops the operation (another trainer holds the run, an object's
    /// name is taken by other bytes).
    #[error("{0}")]
    Other(String),
}

impl RunError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> RunError {
        RunError::Io { path: path.to_path_buf(), source }
    }
}

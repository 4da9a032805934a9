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
    /// An object the run should hold is not in its store.
    #[error("{store}/{key}: not found")]
    Missing {
        /// The store, as it describes itself.
        store: String,
        /// The object's key.
        key: String,
    },
    /// An immutable object's name is taken by other bytes.
    #[error("{at}: exists with other contents")]
    Conflict {
        /// The object, as a path.
        at: String,
    },
    /// An object waiting in the spool found its name taken in the store by other bytes (two
    /// writers with one worker id?): it was moved to `.spool-rejected/`.
    #[error("{at}: exists with other contents (two writers with one worker id?); kept in .spool-rejected")]
    SpoolRejected {
        /// The object, as a store key.
        at: String,
    },
    /// The run's trainer fence: another trainer holds the run, or took it over.
    #[error("run {run}: {fence}")]
    Fence {
        /// The run, as its store describes itself.
        run: String,
        /// What the fence says.
        fence: FenceError,
    },
}

/// Why the trainer's fence stops a trainer ([`RunError::Fence`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FenceError {
    /// Another trainer holds the run.
    #[error("has a trainer already: {0}; stop it first, or pass --take-over if it is gone")]
    Held(String),
    /// Another trainer claimed the fence at the same moment.
    #[error("{0} claimed the trainer's fence at the same moment")]
    Raced(String),
    /// Another trainer took the run over since this one claimed it.
    #[error("{0} took over as trainer; this one stops")]
    TakenOver(String),
    /// A thread of this process panicked while holding the fence's lock.
    #[error("the trainer fence's lock was poisoned by a panic")]
    Poisoned,
}

impl RunError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> RunError {
        RunError::Io { path: path.to_path_buf(), source }
    }
}

//! # tafl-players
//!
//! Players with a network, for the arena, the gate, the command line and the web server: a
//! run's model, a player bundle or the shipped net, named by a player spec. A spec that names
//! a run (`mcts:model=RUN`, `s3://…` included) is resolved through [`tafl_run`].
//!
//! * [`players`]: player specs with a network (`mcts:model=PATH,visits=200`) and the factory
//!   that builds them ([`ZeroFactory`]).
//! * [`bundle`]: self-contained player bundles, usable as player specs: their layout and
//!   `player.toml`.
//! * [`export`]: `tafl export`: the bundle of a run's model.
//! * [`builtin`]: the player that ships with tafl, embedded in the binary.

pub mod builtin;
pub mod bundle;
pub mod export;
pub mod players;

use std::path::{Path, PathBuf};

pub use players::ZeroFactory;

/// Why a bundle could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum PlayersError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A model's checkpoint does not load.
    #[error("model {id}: {source}")]
    Checkpoint {
        /// The model's id or path.
        id: String,
        /// Why.
        source: tafl_nn::checkpoint::CheckpointError,
    },
    /// A model's ONNX file could not be written.
    #[error("model {id}: {source}")]
    Onnx {
        /// The model's id or path.
        id: String,
        /// Why.
        source: tafl_nn::onnx::OnnxError,
    },
    /// The run could not be read.
    #[error(transparent)]
    Run(#[from] tafl_run::RunError),
    /// A player's file (`player.toml`, a model's `meta.json`) does not parse or serialise, or
    /// holds what this build cannot play.
    #[error("{}: {reason}", path.display())]
    BadFile {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the key where there is one.
        reason: String,
    },
    /// An export's output exists: export never overwrites.
    #[error("{} already exists: export never overwrites; choose another --out or remove it", path.display())]
    Exists {
        /// The output.
        path: PathBuf,
    },
    /// The directory named as a run holds no models.
    #[error("{} is not a run directory (no models/ folder)", path.display())]
    NotARun {
        /// The directory.
        path: PathBuf,
    },
    /// The run has no complete model of that name (or none at all, for `best`).
    #[error("{run}: {}", no_model_message(model.as_deref(), models))]
    NoModel {
        /// The run, as its location reads.
        run: String,
        /// The model asked for; `None`: the best.
        model: Option<String>,
        /// The run's complete models.
        models: Vec<String>,
    },
    /// A model the run lists could not be fetched whole from its store.
    #[error("{run}: model `{model}` is not complete")]
    Incomplete {
        /// The run, as its location reads.
        run: String,
        /// The model.
        model: String,
    },
}

fn no_model_message(model: Option<&str>, models: &[String]) -> String {
    match model {
        None => "no complete model to export".to_string(),
        Some(id) => {
            let list = if models.is_empty() { "none".to_string() } else { models.join(", ") };
            format!("no complete model `{id}` (models: {list})")
        }
    }
}

impl PlayersError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> PlayersError {
        PlayersError::Io { path: path.to_path_buf(), source }
    }

    pub(crate) fn bad_file(path: &Path, reason: impl std::fmt::Display) -> PlayersError {
        PlayersError::BadFile { path: path.to_path_buf(), reason: reason.to_string() }
    }
}

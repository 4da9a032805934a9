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
    /// Something else (a bundle that does not parse, an output that exists).
    #[error("{0}")]
    Other(String),
}

impl PlayersError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> PlayersError {
        PlayersError::Io { path: path.to_path_buf(), source }
    }
}

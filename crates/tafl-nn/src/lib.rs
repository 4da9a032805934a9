//! The neural network of the Hnefatafl AlphaZero engine, on Burn 0.22.
//!
//! - [`backend`]: the one place that picks the device (CPU `flex` by default, `wgpu` by feature).
//! - [`model`]: [`TaflNet`], a residual CNN with a policy head and a value head.
//! - [`policy`]: the policy layout, `[from_square][direction][distance − 1]`.
//! - [`symmetry`]: the eight board symmetries of planes and policy vectors.
//! - [`train`]: loss and one optimisation step.
//! - [`checkpoint`]: checkpoint directories, written atomically, checked on load.
//! - [`mod@bench`]: forward-pass and training throughput.
//! - [`encoding`]: the input planes of a game, policy indices of moves, symmetries of both in
//!   the rules crate's numbering.
//! - [`evaluator`]: [`NetEvaluator`], the search's `Evaluator`: batched inference with an
//!   optional evaluation cache.
//! - [`packed`]: [`PackedNet`], the CPU inference forward pass (batch norms folded, weights
//!   packed once, one matrix product per layer for a slice of the batch), and [`InferencePath`].
//! - `winograd`: the 3x3 convolutions of [`PackedNet`] through Winograd's F(4x4, 3x3).
//! - [`onnx`]: export of a net as an ONNX model, to run it outside Rust.

pub mod backend;
pub mod bench;
pub mod checkpoint;
pub mod conv_train;
pub mod encoding;
pub mod evaluator;
mod matmul;
pub mod model;
pub mod norm_train;
pub mod onnx;
pub mod packed;
pub mod policy;
pub mod symmetry;
pub mod train;
mod winograd;

pub use backend::{Device, device, training_device};
pub use encoding::{
    ENCODING_VERSION, INPUT_PLANES, POLICY_VERSION, TACTICAL_INPUT_PLANES, encode_game, encode_position, index_move,
    move_index,
};
pub use evaluator::NetEvaluator;
pub use model::{NetOutput, Prediction, TaflNet, TaflNetConfig};
pub use packed::{InferencePath, PackedNet};
pub use train::{StepStats, TrainBatch, TrainConfig, Trainer};

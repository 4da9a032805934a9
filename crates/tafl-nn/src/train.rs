//! Loss and one optimisation step, for a custom AlphaZero training loop.
//!
//! The loop itself (replay window, sampling, schedules) belongs to `tafl-zero`; this module
//! owns what touches Burn: the loss, `backward`, `GradientsParams::from_grads`, `optim.step`.

use burn::config::Config;
use burn::module::Module;
use burn::optim::decay::WeightDecayConfig;
use burn::optim::momentum::MomentumConfig;
use burn::optim::{AdamWConfig, GradientsParams, ModuleOptimizer, SgdConfig};
use burn::tensor::activation::log_softmax;
use burn::tensor::{Tensor, TensorData};
use serde::{Deserialize, Serialize};

use crate::backend::{Device, training_device};
use crate::model::{NetOutput, Ownership, TaflNet, TaflNetConfig};

/// Added to the logits of illegal moves before the softmax. Large enough that `exp` of it
/// is zero in f32, small enough that it stays finite in half precision.
pub const ILLEGAL_LOGIT_PENALTY: f32 = 1.0e4;

/// Error building a training batch from flat arrays.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// An array's length does not fit the batch size and the net config.
    #[error("{what} has {found} values, expected {expected}")]
    Length {
        /// Which array.
        what: &'static str,
        /// Its expected length.
        expected: usize,
        /// Its actual length.
        found: usize,
    },
}

/// A batch of training samples as tensors.
#[derive(Debug, Clone)]
pub struct TrainBatch {
    /// Input planes, `[batch, input_planes, size, size]`.
    pub planes: Tensor<4>,
    /// Target policy (visit distribution), `[batch, policy_len]`; zero on illegal moves.
    pub policy: Tensor<2>,
    /// 1.0 for legal moves, 0.0 for the rest, `[batch, policy_len]`.
    pub legal: Tensor<2>,
    /// Target value for the side to move, `[batch]`, in `[-1, 1]`.
    pub value: Tensor<1>,
    /// Targets of the ownership head; `None` trains no such head.
    pub ownership: Option<OwnershipTarget>,
}

/// Targets of the ownership head ([`crate::model::OwnershipHead`]) for a batch.
#[derive(Debug, Clone)]
pub struct OwnershipTarget {
    /// Who holds each square at the end, `[batch, size · size]`: 1 an attacker, -1 a defender or
    /// the king, 0 nobody.
    pub owner: Tensor<2>,
    /// 1 for the samples that know their game's end, 0 for the rest, `[batch]`.
    pub known: Tensor<1>,
    /// The king's last square, one-hot, `[batch, size · size]`; a zero row where he was captured
    /// or the end is not known.
    pub king: Tensor<2>,
}

fn check_len(what: &'static str, found: usize, expected: usize) -> Result<(), BatchError> {
    if found == expected { Ok(()) } else { Err(BatchError::Length { what, expected, found }) }
}

impl TrainBatch {
    /// Builds a batch from row-major arrays: `planes` `[batch][plane][rank][file]`,
    /// `policy` and `legal` `[batch][policy_len]`, `value` `[batch]`.
    ///
    /// # Errors
    /// [`BatchError::Length`] when an array does not have the length the shapes imply.
    pub fn from_slices(
        config: &TaflNetConfig,
        planes: &[f32],
        policy: &[f32],
        legal: &[bool],
        value: &[f32],
        device: &Device,
    ) -> Result<Self, BatchError> {
        let (batch, size, moves) = (value.len(), config.board_size, config.policy_len());
        check_len("planes", planes.len(), batch * config.input_planes * size * size)?;
        check_len("policy", policy.len(), batch * moves)?;
        check_len("legal", legal.len(), batch * moves)?;
        let legal: Vec<f32> = legal.iter().map(|&l| if l { 1.0 } else { 0.0 }).collect();
        let shape4 = [batch, config.input_planes, size, size];
        Ok(Self {
            planes: Tensor::from_data(TensorData::new(planes.to_vec(), shape4), device),
            policy: Tensor::from_data(TensorData::new(policy.to_vec(), [batch, moves]), device),
            legal: Tensor::from_data(TensorData::new(legal, [batch, moves]), device),
            value: Tensor::from_data(TensorData::new(value.to_vec(), [batch]), device),
            ownership: None,
        })
    }

    /// This batch with the ownership head's targets, row-major: `owner` and `king`
    /// `[batch][size · size]`, `known` `[batch]` (see [`OwnershipTarget`]).
    ///
    /// # Errors
    /// [`BatchError::Length`] when an array does not fit the batch and the board.
    pub fn with_ownership(
        mut self,
        config: &TaflNetConfig,
        owner: &[f32],
        known: &[f32],
        king: &[f32],
        device: &Device,
    ) -> Result<Self, BatchError> {
        let [batch] = self.value.dims();
        let area = config.board_size * config.board_size;
        check_len("owner", owner.len(), batch * area)?;
        check_len("known", known.len(), batch)?;
        check_len("king", king.len(), batch * area)?;
        self.ownership = Some(OwnershipTarget {
            owner: Tensor::from_data(TensorData::new(owner.to_vec(), [batch, area]), device),
            known: Tensor::from_data(TensorData::new(known.to_vec(), [batch]), device),
            king: Tensor::from_data(TensorData::new(king.to_vec(), [batch, area]), device),
        });
        Ok(self)
    }
}

/// Soft-target cross-entropy over legal moves: `-(target · log_softmax(masked logits)).sum(1).mean()`.
///
/// # Shapes
/// - `logits`, `target`, `legal`: `[batch, policy_len]`
/// - output: `[1]`
pub fn policy_loss(logits: Tensor<2>, target: Tensor<2>, legal: Tensor<2>) -> Tensor<1> {
    let masked = logits + (legal - 1.0) * ILLEGAL_LOGIT_PENALTY;
    (target * log_softmax(masked, 1)).sum_dim(1).mean().neg()
}

/// Mean squared error of the value.
///
/// # Shapes
/// - `value`, `target`: `[batch]`
/// - output: `[1]`
pub fn value_loss(value: Tensor<1>, target: Tensor<1>) -> Tensor<1> {
    (value - target).square().mean()
}

/// The ownership head's two losses: the mean squared error of the owners over the squares of
/// the samples that know their end, and the cross-entropy of the king's last square, each a mean
/// over the whole batch.
///
/// # Shapes
/// - outputs `[1]`, `[1]`
pub fn ownership_loss(output: Ownership, target: &OwnershipTarget) -> (Tensor<1>, Tensor<1>) {
    let [batch, _] = output.owner.dims();
    let owner = (output.owner - target.owner.clone()).square().mean_dim(1).reshape([batch]) * target.known.clone();
    let king = (target.king.clone() * log_softmax(output.king_logits, 1)).sum_dim(1).neg();
    (owner.mean(), king.mean())
}

/// The terms of the loss of one batch, as tensors (so that `total` can be differentiated).
#[derive(Debug, Clone)]
pub struct Losses {
    /// `policy + value_weight · value + ownership_weight · ownership + king_weight · king`, `[1]`.
    pub total: Tensor<1>,
    /// Policy cross-entropy, `[1]`.
    pub policy: Tensor<1>,
    /// Value mean squared error, `[1]`.
    pub value: Tensor<1>,
    /// The ownership head's squared error and the king's cross-entropy ([`ownership_loss`]),
    /// when the net has the head and the batch its targets.
    pub ownership: Option<(Tensor<1>, Tensor<1>)>,
}

/// Computes the losses of a network output against a batch.
pub fn losses(output: NetOutput, batch: &TrainBatch, config: &TrainConfig) -> Losses {
    let policy = policy_loss(output.policy_logits, batch.policy.clone(), batch.legal.clone());
    let value = value_loss(output.value, batch.value.clone());
    let mut total = policy.clone() + value.clone() * config.value_weight;
    let ownership = match (output.ownership, &batch.ownership) {
        (Some(out), Some(target)) => Some(ownership_loss(out, target)),
        _ => None,
    };
    if let Some((owner, king)) = &ownership {
        total = total + owner.clone() * config.ownership_weight + king.clone() * config.king_weight;
    }
    Losses { total, policy, value, ownership }
}

/// Which optimiser the trainer uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OptimizerKind {
    /// AdamW, with decoupled weight decay.
    AdamW,
    /// SGD with momentum and L2 weight decay (the AlphaZero paper's choice).
    Sgd,
}

/// Hyper-parameters of one training step.
#[derive(Config, Debug)]
pub struct TrainConfig {
    /// Learning rate.
    #[config(default = 1e-3)]
    pub learning_rate: f64,
    /// Weight decay (decoupled for AdamW, an L2 penalty for SGD).
    #[config(default = 1e-4)]
    pub weight_decay: f32,
    /// The optimiser.
    #[config(default = "OptimizerKind::AdamW")]
    pub optimizer: OptimizerKind,
    /// Momentum of SGD (ignored by AdamW).
    #[config(default = 0.9)]
    pub momentum: f64,
    /// Weight of the value loss against the policy loss.
    #[config(default = 1.0)]
    pub value_weight: f32,
    /// Weight of the ownership head's squared error (KataGo's 1.5), when the net has the head.
    #[config(default = 1.5)]
    pub ownership_weight: f32,
    /// Weight of the cross-entropy of the king's last square, when the net has the head.
    #[config(default = 0.1)]
    pub king_weight: f32,
}

impl TrainConfig {
    /// Builds the optimiser this config describes.
    #[must_use]
    pub fn optimizer(&self) -> ModuleOptimizer {
        match self.optimizer {
            OptimizerKind::AdamW => AdamWConfig::new().with_weight_decay(self.weight_decay).init(),
            OptimizerKind::Sgd => SgdConfig::new()
                .with_weight_decay(Some(WeightDecayConfig::new(self.weight_decay)))
                .with_momentum(Some(MomentumConfig::new().with_momentum(self.momentum).with_dampening(0.0)))
                .init(),
        }
    }
}

/// Loss values of one step, read back from the device.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepStats {
    /// Total loss.
    pub total: f32,
    /// Policy cross-entropy.
    pub policy: f32,
    /// Value mean squared error.
    pub value: f32,
    /// The ownership head's squared error (0 without the head).
    #[serde(default)]
    pub ownership: f32,
    /// The cross-entropy of the king's last square (0 without the head).
    #[serde(default)]
    pub king: f32,
}

impl StepStats {
    fn of(losses: &Losses) -> Self {
        let (ownership, king) = losses.ownership.as_ref().map_or((0.0, 0.0), |(o, k)| (scalar(o), scalar(k)));
        StepStats {
            total: scalar(&losses.total),
            policy: scalar(&losses.policy),
            value: scalar(&losses.value),
            ownership,
            king,
        }
    }
}

fn scalar(t: &Tensor<1>) -> f32 {
    t.clone().detach().into_scalar::<f32>()
}

/// A network being trained, with its optimiser state.
pub struct Trainer {
    model: TaflNet,
    optim: ModuleOptimizer,
    config: TrainConfig,
    /// The training device: autodiff over [`Self::device`]'s inner device.
    device: Device,
    steps: u64,
}

impl Trainer {
    /// Starts training `model` (moved to the training device) with a fresh optimiser.
    #[must_use]
    pub fn new(model: TaflNet, config: TrainConfig) -> Self {
        let optim = config.optimizer();
        Self::resume(model, optim, config)
    }

    /// Continues training `model` with saved optimiser state (see [`crate::checkpoint`]).
    #[must_use]
    pub fn resume(model: TaflNet, optim: ModuleOptimizer, config: TrainConfig) -> Self {
        Self::resume_on(model, optim, config, training_device())
    }

    /// [`Self::new`] on `device` (made autodiff) instead of [`training_device`]: to compare
    /// backends, as the wgpu tests do against `flex`.
    #[must_use]
    pub fn on(model: TaflNet, config: TrainConfig, device: &Device) -> Self {
        let optim = config.optimizer();
        Self::resume_on(model, optim, config, device.clone().autodiff())
    }

    fn resume_on(model: TaflNet, optim: ModuleOptimizer, config: TrainConfig, device: Device) -> Self {
        Self { model: model.train().fork(&device), optim, config, device, steps: 0 }
    }

    /// The device batches must live on.
    #[must_use]
    pub fn device(&self) -> Device {
        self.device.clone()
    }

    /// Runs one optimisation step on `batch` and returns its losses (before the update).
    pub fn step(&mut self, batch: &TrainBatch) -> StepStats {
        // On one of the pool's threads, with the calling thread's choice of path: the step's
        // serial work then runs where its parallel work does, instead of on a third thread
        // that the pool's threads wait for (and that waits for them).
        let fast = crate::conv_train::enabled();
        rayon::scope(|_| crate::conv_train::with_enabled(fast, || self.step_here(batch)))
    }

    fn step_here(&mut self, batch: &TrainBatch) -> StepStats {
        let output = self.model.forward(batch.planes.clone());
        let losses = losses(output, batch, &self.config);
        let stats = StepStats::of(&losses);
        let grads = GradientsParams::from_grads(losses.total.backward(), &self.model);
        self.model = self.optim.step(self.config.learning_rate, self.model.clone(), grads);
        self.steps += 1;
        stats
    }

    /// Losses on `batch` without updating anything (batch norm uses its running statistics).
    #[must_use]
    pub fn evaluate(&self, batch: &TrainBatch) -> StepStats {
        let model = self.model.valid();
        let device = self.device.clone().inner();
        let plain = |t: &Tensor<2>| t.clone().detach().to_device(&device);
        let batch = TrainBatch {
            planes: batch.planes.clone().detach().to_device(&device),
            policy: plain(&batch.policy),
            legal: plain(&batch.legal),
            value: batch.value.clone().detach().to_device(&device),
            ownership: batch.ownership.as_ref().map(|t| OwnershipTarget {
                owner: plain(&t.owner),
                known: t.known.clone().detach().to_device(&device),
                king: plain(&t.king),
            }),
        };
        StepStats::of(&losses(model.forward(batch.planes.clone()), &batch, &self.config))
    }

    /// Sets the learning rate of the following steps.
    pub fn set_learning_rate(&mut self, learning_rate: f64) {
        self.config.learning_rate = learning_rate;
    }

    /// Number of steps taken since this trainer was created.
    #[must_use]
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The network for inference: no autodiff, batch norm in evaluation mode.
    #[must_use]
    pub fn model(&self) -> TaflNet {
        self.model.valid()
    }

    /// The optimiser, for saving its state.
    #[must_use]
    pub fn optimizer(&self) -> &ModuleOptimizer {
        &self.optim
    }
}

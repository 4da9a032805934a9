//! The residual policy/value network.

use burn::config::Config;
use burn::module::{Module, ModuleMapper, ModuleVisitor, Param, RunningState};
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{BatchNorm, BatchNormConfig, Linear, LinearConfig, PaddingConfig2d};
use burn::tensor::activation::{relu, tanh};
use burn::tensor::module::conv2d;
use burn::tensor::ops::ConvOptions;
use burn::tensor::{Int, Tensor, TensorData};

use crate::backend::Device;
pub use crate::backend::INFERENCE_CHUNK;
use crate::encoding::DEFENDERS_TO_MOVE;
use crate::policy::{moves_per_square, policy_len};

/// Shape of a [`TaflNet`]: board, inputs, depth and width of the residual trunk, heads.
#[derive(Config, Debug, PartialEq, Eq)]
pub struct TaflNetConfig {
    /// Side of the square board (11 for Copenhagen).
    pub board_size: usize,
    /// Number of input planes.
    pub input_planes: usize,
    /// Number of residual blocks in the trunk.
    pub blocks: usize,
    /// Channels of the trunk.
    pub channels: usize,
    /// Every `global_pool_interval`-th block (the 2nd, 4th, ... for 2) gets a KataGo-style
    /// global pooling bias; 0 turns it off. It lets the trunk see the whole board (an
    /// encirclement, a far-away escape) at the cost of one small linear layer per such block.
    #[config(default = 3)]
    pub global_pool_interval: usize,
    /// Channels of the policy head's hidden 1x1 convolution.
    #[config(default = 32)]
    pub policy_channels: usize,
    /// Channels of the value head's 1x1 convolution, before global pooling.
    #[config(default = 32)]
    pub value_channels: usize,
    /// Width of the value head's hidden fully connected layer.
    #[config(default = 64)]
    pub value_hidden: usize,
    /// `Some(true)`: the net also has an ownership head ([`OwnershipHead`]), an auxiliary
    /// training target that play never reads. An `Option` because Burn's configs fill in no
    /// default when they read a file: configs written before the head have no such key.
    pub ownership_head: Option<bool>,
    /// `Some(true)`: the net has a second policy head and value head, [`SideHeads`], for the
    /// positions where the defenders are to move (issue 32's lever 5); the first pair then
    /// serves the attackers. An `Option` for the reason `ownership_head` is one.
    pub heads_by_side: Option<bool>,
}

impl TaflNetConfig {
    /// Whether the net has an [`OwnershipHead`].
    #[must_use]
    pub fn has_ownership_head(&self) -> bool {
        self.ownership_head == Some(true)
    }

    /// Whether the net has [`SideHeads`] for the defenders.
    #[must_use]
    pub fn has_heads_by_side(&self) -> bool {
        self.heads_by_side == Some(true)
    }

    /// Short model name from depth and width, like `b6c64`.
    #[must_use]
    pub fn name(&self) -> String {
        format!("b{}c{}", self.blocks, self.channels)
    }

    /// Length of the policy output: `board_size² · 4 · (board_size − 1)`.
    #[must_use]
    pub fn policy_len(&self) -> usize {
        policy_len(self.board_size)
    }

    /// Whether block `index` (from 0) carries a global pooling branch.
    #[must_use]
    pub fn has_global_pool(&self, index: usize) -> bool {
        self.global_pool_interval > 0 && (index + 1).is_multiple_of(self.global_pool_interval)
    }

    /// Floating-point operations of one forward pass for one position, counted from the
    /// convolutions and linear layers (a multiply-add is two); normalisation and activations
    /// are left out.
    #[must_use]
    pub fn flops_per_position(&self) -> u64 {
        let area = (self.board_size * self.board_size) as u64;
        let conv = |k: usize, cin: usize, cout: usize| 2 * (k * k * cin * cout) as u64 * area;
        let linear = |din: usize, dout: usize| 2 * (din * dout) as u64;
        let c = self.channels;
        let gpool_blocks = (0..self.blocks).filter(|&i| self.has_global_pool(i)).count() as u64;
        let trunk =
            conv(3, self.input_planes, c) + self.blocks as u64 * 2 * conv(3, c, c) + gpool_blocks * linear(2 * c, c);
        let policy =
            conv(1, c, self.policy_channels) + conv(1, self.policy_channels, moves_per_square(self.board_size));
        let value = conv(1, c, self.value_channels)
            + linear(2 * self.value_channels, self.value_hidden)
            + linear(self.value_hidden, 1);
        // With heads by side both pairs run on every position (see `TaflNet::heads`).
        let pairs = if self.has_heads_by_side() { 2 } else { 1 };
        trunk + pairs * (policy + value)
    }

    /// Builds a freshly initialised network on `device`.
    #[must_use]
    pub fn init(&self, device: &Device) -> TaflNet {
        let c = self.channels;
        TaflNet {
            stem: ConvBn::new(self.input_planes, c, 3, device),
            blocks: (0..self.blocks).map(|i| ResBlock::new(c, self.has_global_pool(i), device)).collect(),
            policy: PolicyHead::new(c, self.policy_channels, moves_per_square(self.board_size), device),
            value: ValueHead::new(c, self.value_channels, self.value_hidden, device),
            ownership: self.has_ownership_head().then(|| OwnershipHead::new(c, self.policy_channels, device)),
            defenders: self.has_heads_by_side().then(|| SideHeads {
                policy: PolicyHead::new(c, self.policy_channels, moves_per_square(self.board_size), device),
                value: ValueHead::new(c, self.value_channels, self.value_hidden, device),
            }),
        }
    }
}

/// A convolution (no bias: the batch norm has one) followed by batch normalisation.
#[derive(Module, Debug)]
pub struct ConvBn {
    pub(crate) conv: Conv2d,
    pub(crate) norm: BatchNorm,
    /// Set by [`TaflNet::fold_batch_norms`]: the batch norm is already in `conv`.
    #[module(skip)]
    folded: bool,
}

impl ConvBn {
    fn new(channels_in: usize, channels_out: usize, kernel: usize, device: &Device) -> Self {
        Self {
            conv: Conv2dConfig::new([channels_in, channels_out], [kernel, kernel])
                .with_padding(PaddingConfig2d::Same)
                .with_bias(false)
                .init(device),
            norm: BatchNormConfig::new(channels_out).init(device),
            folded: false,
        }
    }

    /// This layer with the batch norm folded into the convolution once and for all.
    fn fold(self) -> Self {
        if self.folded {
            return self;
        }
        let device = self.conv.weight.device();
        let (weight, bias) = self.folded(&device);
        let [channels_out] = bias.dims();
        let mut conv = self.conv;
        conv.weight = Param::from_tensor(weight);
        conv.bias = Some(Param::from_tensor(bias));
        // An identity batch norm (var + ε = 1), so that the weights stay meaningful to a
        // net that does not know they were folded.
        let mut norm = BatchNormConfig::new(channels_out).init(&device);
        norm.running_var = RunningState::new(Tensor::ones([channels_out], &device) * (1.0 - norm.epsilon));
        Self { conv, norm, folded: true }
    }

    /// Training (an autodiff input and a module in training mode) normalises with the batch
    /// statistics; inference folds the running statistics into the convolution's weights and
    /// bias instead, which saves several passes over the activations.
    ///
    /// # Shapes
    /// - `x`: `[batch, channels_in, size, size]`
    /// - output: `[batch, channels_out, size, size]`
    pub fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        if self.folded {
            return self.conv.forward(x);
        }
        if self.trains(&x) {
            return crate::norm_train::batch_norm(&self.norm, crate::conv_train::conv2d(&self.conv, x));
        }
        let (weight, bias) = self.folded(&x.device());
        let pad = self.conv.kernel_size[0] / 2;
        conv2d(x, weight, Some(bias), ConvOptions::new([1, 1], [pad, pad], [1, 1], 1))
    }

    /// Whether `x` goes through this layer's training path: the batch norm unfolded, normalising
    /// with the batch's statistics (an autodiff input and a module in training mode).
    fn trains(&self, x: &Tensor<4>) -> bool {
        !self.folded && x.device().is_autodiff() && self.norm.training.is_enabled()
    }

    /// `relu(self.forward(x))`; while training, the ReLU in the batch norm's own pass
    /// ([`crate::norm_train::batch_norm_relu`]).
    pub fn forward_relu(&self, x: Tensor<4>) -> Tensor<4> {
        if self.trains(&x) {
            return crate::norm_train::batch_norm_relu(&self.norm, crate::conv_train::conv2d(&self.conv, x));
        }
        relu(self.forward(x))
    }

    /// `relu(residual + self.forward(x))`, the end of a residual block; while training, the
    /// sum and the ReLU in the batch norm's own pass ([`crate::norm_train::batch_norm_add_relu`]).
    pub fn forward_add_relu(&self, x: Tensor<4>, residual: Tensor<4>) -> Tensor<4> {
        if self.trains(&x) {
            let conv = crate::conv_train::conv2d(&self.conv, x);
            return crate::norm_train::batch_norm_add_relu(&self.norm, conv, residual);
        }
        relu(residual + self.forward(x))
    }

    /// The weight and bias this layer convolves with at inference, the batch norm folded in,
    /// whether or not [`TaflNet::fold_batch_norms`] already did it.
    pub(crate) fn inference_weights(&self) -> (Tensor<4>, Tensor<1>) {
        let device = self.conv.weight.device();
        match (&self.conv.bias, self.folded) {
            (Some(bias), true) => (self.conv.weight.val(), bias.val()),
            _ => self.folded(&device),
        }
    }

    /// The convolution with the batch norm's running statistics folded in:
    /// `w' = w · γ / √(var + ε)`, `b' = β − mean · γ / √(var + ε)`.
    fn folded(&self, device: &Device) -> (Tensor<4>, Tensor<1>) {
        let norm = &self.norm;
        let mean = norm.running_mean.value().to_device(device);
        let var = norm.running_var.value().to_device(device);
        let scale = norm.gamma.val() / (var + norm.epsilon).sqrt();
        let bias = norm.beta.val() - mean * scale.clone();
        let [channels_out] = scale.dims();
        let weight = self.conv.weight.val() * scale.reshape([channels_out, 1, 1, 1]);
        (weight, bias)
    }
}

/// The values of an f32 tensor. Tensors made by this crate are f32, so the conversion
/// cannot fail; an empty vector would show up as a length mismatch downstream.
pub(crate) fn read_back<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data().try_to_vec::<f32>().unwrap_or_default()
}

/// Mean and max of each channel over the board, as `[batch, 2 · channels, 1]`.
///
/// Written with the reductions burn-onnx 0.22 can export (a sum, a max with indices; not
/// `mean_dim` or `max_dim`), so that [`crate::onnx`] traces the same code that plays.
fn global_pool(x: Tensor<4>) -> Tensor<3> {
    let [batch, channels, height, width] = x.dims();
    let area = height * width;
    let flat = x.reshape([batch, channels, area]);
    let mean = flat.clone().sum_dim(2) / area as f32;
    let (max, _) = flat.max_dim_with_indices(2);
    Tensor::cat(vec![mean, max], 1)
}

/// KataGo-style global pooling: pooled channels, through a linear layer, become a per-channel
/// bias added everywhere on the board.
#[derive(Module, Debug)]
pub struct GlobalPoolBias {
    pub(crate) linear: Linear,
}

impl GlobalPoolBias {
    fn new(channels: usize, device: &Device) -> Self {
        Self { linear: LinearConfig::new(2 * channels, channels).init(device) }
    }

    /// # Shapes
    /// - `x`: `[batch, channels, size, size]`
    /// - output: `[batch, channels, 1, 1]`, to broadcast over the board
    pub fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let [batch, channels, _, _] = x.dims();
        // Unit axes only ever moved, never added to [batch, channels]: burn-onnx cannot prove
        // such a new axis static when it exports a dynamic batch (see crate::onnx).
        let pooled = global_pool(x).reshape([batch, 1, 2 * channels]);
        self.linear.forward(pooled).reshape([batch, channels, 1, 1])
    }
}

/// Residual block: two 3x3 conv-BN layers with a skip connection, and optionally a global
/// pooling bias between them.
#[derive(Module, Debug)]
pub struct ResBlock {
    pub(crate) first: ConvBn,
    pub(crate) second: ConvBn,
    pub(crate) global_pool: Option<GlobalPoolBias>,
}

impl ResBlock {
    fn new(channels: usize, global_pool: bool, device: &Device) -> Self {
        Self {
            first: ConvBn::new(channels, channels, 3, device),
            second: ConvBn::new(channels, channels, 3, device),
            global_pool: global_pool.then(|| GlobalPoolBias::new(channels, device)),
        }
    }

    /// # Shapes
    /// - `x`: `[batch, channels, size, size]`
    /// - output: `[batch, channels, size, size]`
    pub fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let mut y = self.first.forward_relu(x.clone());
        if let Some(pool) = &self.global_pool {
            y = y.clone() + pool.forward(y);
        }
        self.second.forward_add_relu(y, x)
    }
}

/// Policy head: 1x1 conv-BN-ReLU, then a 1x1 convolution to one logit per
/// (direction, distance) on each square.
#[derive(Module, Debug)]
pub struct PolicyHead {
    pub(crate) hidden: ConvBn,
    pub(crate) out: Conv2d,
}

impl PolicyHead {
    fn new(channels: usize, hidden: usize, moves_per_square: usize, device: &Device) -> Self {
        Self {
            hidden: ConvBn::new(channels, hidden, 1, device),
            out: Conv2dConfig::new([hidden, moves_per_square], [1, 1]).init(device),
        }
    }

    fn fold(self) -> Self {
        Self { hidden: self.hidden.fold(), out: self.out }
    }

    /// Logits in the layout of [`crate::policy`]: square-major, then direction, then distance.
    ///
    /// # Shapes
    /// - `x`: `[batch, channels, size, size]`
    /// - output: `[batch, size · size · 4(size − 1)]`
    pub fn forward(&self, x: Tensor<4>) -> Tensor<2> {
        // [batch, 4(size-1), size, size]
        let logits = crate::conv_train::conv2d(&self.out, self.hidden.forward_relu(x));
        let [batch, moves, height, width] = logits.dims();
        // Channel-major to square-major: [batch, rank, file, dir·(size−1) + dist−1].
        logits.permute([0, 2, 3, 1]).reshape([batch, height * width * moves])
    }

    /// [`Self::forward`] with the reorder to square-major done by a gather with constant
    /// indices instead of a permute, which burn-onnx 0.22 cannot export. Only [`crate::onnx`]
    /// uses it: training and play keep the permute, whose speed and gradients are known.
    fn forward_gather(&self, x: Tensor<4>) -> Tensor<2> {
        let logits = self.out.forward(self.hidden.forward_relu(x));
        let [batch, moves, height, width] = logits.dims();
        let area = height * width;
        // Square-major position i = square · moves + move reads channel-major move · area + square.
        let index: Vec<i64> = (0..area * moves).map(|i| ((i % moves) * area + i / moves) as i64).collect();
        let index = Tensor::<1, Int>::from_data(TensorData::new(index, [area * moves]), &logits.device());
        logits.reshape([batch, moves * area]).select(1, index)
    }
}

/// Value head: 1x1 conv-BN-ReLU, global mean and max pooling, two linear layers, tanh.
#[derive(Module, Debug)]
pub struct ValueHead {
    pub(crate) conv: ConvBn,
    pub(crate) hidden: Linear,
    pub(crate) out: Linear,
}

impl ValueHead {
    fn new(channels: usize, value_channels: usize, hidden: usize, device: &Device) -> Self {
        Self {
            conv: ConvBn::new(channels, value_channels, 1, device),
            hidden: LinearConfig::new(2 * value_channels, hidden).init(device),
            out: LinearConfig::new(hidden, 1).init(device),
        }
    }

    fn fold(self) -> Self {
        Self { conv: self.conv.fold(), hidden: self.hidden, out: self.out }
    }

    /// Value for the side to move, in `[-1, 1]`.
    ///
    /// # Shapes
    /// - `x`: `[batch, channels, size, size]`
    /// - output: `[batch]`
    pub fn forward(&self, x: Tensor<4>) -> Tensor<1> {
        let pooled = global_pool(self.conv.forward_relu(x)); // [batch, 2·value_channels, 1]
        let [batch, pooled_len, _] = pooled.dims();
        let hidden = relu(self.hidden.forward(pooled.reshape([batch, pooled_len])));
        tanh(self.out.forward(hidden)).reshape([batch])
    }
}

/// Ownership head (KataGo's auxiliary targets, issue 32's lever 3): 1x1 conv-BN-ReLU, then a 1x1
/// convolution to two planes: who holds each square when the game ends (tanh, 1 an attacker, -1
/// a defender or the king), and logits of the square the king ends on. Trained beside the
/// policy and value, it tells the trunk where an attack broke or the king broke out; no player
/// reads it.
#[derive(Module, Debug)]
pub struct OwnershipHead {
    pub(crate) hidden: ConvBn,
    pub(crate) out: Conv2d,
}

impl OwnershipHead {
    fn new(channels: usize, hidden: usize, device: &Device) -> Self {
        Self {
            hidden: ConvBn::new(channels, hidden, 1, device),
            out: Conv2dConfig::new([hidden, 2], [1, 1]).init(device),
        }
    }

    /// Owners in `[-1, 1]` and the king's logits, each `[batch, size · size]` (rank-major).
    ///
    /// # Shapes
    /// - `x`: `[batch, channels, size, size]`
    pub fn forward(&self, x: Tensor<4>) -> Ownership {
        let out = crate::conv_train::conv2d(&self.out, self.hidden.forward_relu(x));
        let [batch, _, height, width] = out.dims();
        let area = height * width;
        Ownership {
            owner: tanh(out.clone().narrow(1, 0, 1).reshape([batch, area])),
            king_logits: out.narrow(1, 1, 1).reshape([batch, area]),
        }
    }
}

/// The policy and value heads of the defenders, in a net with heads by side: the Tablut
/// reproduction of AlphaZero (arXiv 2604.05476) found that one pair of heads for both roles let
/// one role forget while the other learned. The trunk stays shared.
#[derive(Module, Debug)]
pub struct SideHeads {
    pub(crate) policy: PolicyHead,
    pub(crate) value: ValueHead,
}

impl SideHeads {
    fn fold(self) -> Self {
        Self { policy: self.policy.fold(), value: self.value.fold() }
    }
}

/// What the [`OwnershipHead`] says about a batch.
#[derive(Debug, Clone)]
pub struct Ownership {
    /// Who holds each square at the end, `[batch, size · size]`, in `[-1, 1]`.
    pub owner: Tensor<2>,
    /// Logits of the king's last square, `[batch, size · size]`.
    pub king_logits: Tensor<2>,
}

/// What the network says about a batch of positions.
#[derive(Debug, Clone)]
pub struct NetOutput {
    /// Policy logits, `[batch, policy_len]`, unmasked and unnormalised.
    pub policy_logits: Tensor<2>,
    /// Value for the side to move, `[batch]`, in `[-1, 1]`.
    pub value: Tensor<1>,
    /// The ownership head's outputs, when the net has one and the batch was run whole.
    pub ownership: Option<Ownership>,
}

/// Outputs of [`TaflNet::predict`], read back into plain vectors.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    /// Policy logits, `batch` rows of `policy_len` values, laid out as in [`crate::policy`].
    pub policy_logits: Vec<f32>,
    /// One value per position, for the side to move.
    pub values: Vec<f32>,
}

/// Input planes whose length does not fit the config.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{found} input values is not a whole number of positions of {per_position} values")]
pub struct PlanesLengthError {
    /// Values per position: `input_planes · size²`.
    pub per_position: usize,
    /// Values given.
    pub found: usize,
}

/// Residual CNN with a policy head and a value head (AlphaZero style).
#[derive(Module, Debug)]
pub struct TaflNet {
    pub(crate) stem: ConvBn,
    pub(crate) blocks: Vec<ResBlock>,
    pub(crate) policy: PolicyHead,
    pub(crate) value: ValueHead,
    pub(crate) ownership: Option<OwnershipHead>,
    /// The defenders' heads; `policy` and `value` are then the attackers'.
    pub(crate) defenders: Option<SideHeads>,
}

impl TaflNet {
    /// Runs the network.
    ///
    /// # Shapes
    /// - `planes`: `[batch, input_planes, size, size]`, laid out `[plane][rank][file]`
    /// - `policy_logits`: `[batch, size · size · 4(size − 1)]` (see [`crate::policy`])
    /// - `value`: `[batch]`
    pub fn forward(&self, planes: Tensor<4>) -> NetOutput {
        let [batch, ..] = planes.dims();
        let training = planes.device().is_autodiff();
        if training || batch <= INFERENCE_CHUNK {
            return self.forward_whole(planes);
        }
        // Activations of a large batch spill out of the CPU caches; slices of it do not.
        // Training never gets here: batch norm needs the statistics of the whole batch.
        let outputs: Vec<NetOutput> = (0..batch)
            .step_by(INFERENCE_CHUNK)
            .map(|start| {
                let len = INFERENCE_CHUNK.min(batch - start);
                self.forward_whole(planes.clone().narrow(0, start, len))
            })
            .collect();
        let (policy, value): (Vec<_>, Vec<_>) = outputs.into_iter().map(|o| (o.policy_logits, o.value)).unzip();
        NetOutput { policy_logits: Tensor::cat(policy, 0), value: Tensor::cat(value, 0), ownership: None }
    }

    /// This network with every batch norm folded into the convolution before it, for
    /// inference: the same outputs (up to rounding) for less work per call, which matters
    /// most at small batches. Not for training: the folded layers no longer normalise.
    #[must_use]
    pub fn fold_batch_norms(self) -> Self {
        Self {
            stem: self.stem.fold(),
            blocks: self
                .blocks
                .into_iter()
                .map(|b| ResBlock { first: b.first.fold(), second: b.second.fold(), global_pool: b.global_pool })
                .collect(),
            policy: self.policy.fold(),
            value: self.value.fold(),
            ownership: self.ownership.map(|h| OwnershipHead { hidden: h.hidden.fold(), out: h.out }),
            defenders: self.defenders.map(SideHeads::fold),
        }
    }

    /// This network with a fresh [`OwnershipHead`] when it has none, and the config that
    /// describes it: a trained net taking up the auxiliary target. The head is new, so the net
    /// plays exactly as before.
    #[must_use]
    pub fn with_ownership_head(mut self, config: &TaflNetConfig, device: &Device) -> (Self, TaflNetConfig) {
        if self.ownership.is_none() {
            self.ownership = Some(OwnershipHead::new(config.channels, config.policy_channels, device));
        }
        let mut config = config.clone();
        config.ownership_head = Some(true);
        (self, config)
    }

    /// This network with heads by side when it has one pair, and the config that describes it:
    /// the defenders' heads start as copies of the shared ones, so the net plays exactly as
    /// before until training moves the two pairs apart.
    #[must_use]
    pub fn with_heads_by_side(mut self, config: &TaflNetConfig) -> (Self, TaflNetConfig) {
        if self.defenders.is_none() {
            // A copy with parameters of its own: a clone keeps the parameters' ids, by which the
            // optimiser keys gradients and moments, and the two pairs would train as one.
            let copy = SideHeads { policy: self.policy.clone(), value: self.value.clone() };
            self.defenders = Some(copy.map(&mut NewIds));
        }
        let mut config = config.clone();
        config.heads_by_side = Some(true);
        (self, config)
    }

    /// This network reading `planes` input planes instead of the `config.input_planes` it was
    /// built for, and the config that describes it. The stem keeps its weights for the planes
    /// it had; those of the new planes start at zero, so that it plays exactly as before until
    /// training finds a use for them: a trained net growing into a newer encoding, whose new
    /// planes come after the old ones.
    ///
    /// # Panics
    /// If `planes` is fewer than the net reads now.
    #[must_use]
    pub fn with_input_planes(mut self, config: &TaflNetConfig, planes: usize) -> (Self, TaflNetConfig) {
        assert!(planes >= config.input_planes, "a net cannot forget input planes it reads");
        let weight = self.stem.conv.weight.val();
        let [out, have, kh, kw] = weight.dims();
        if planes > have {
            let zeros = Tensor::zeros([out, planes - have, kh, kw], &weight.device());
            self.stem.conv.weight = Param::from_tensor(Tensor::cat(vec![weight, zeros], 1));
        }
        let mut config = config.clone();
        config.input_planes = planes;
        (self, config)
    }

    /// Evaluates positions given as plain planes, `[batch][plane][rank][file]`, on `device`:
    /// what an evaluator does with the planes of the positions a search asks about.
    ///
    /// # Errors
    /// [`PlanesLengthError`] when `planes` is not a whole number of positions.
    pub fn predict(
        &self,
        config: &TaflNetConfig,
        planes: &[f32],
        device: &Device,
    ) -> Result<Prediction, PlanesLengthError> {
        let size = config.board_size;
        let per_position = config.input_planes * size * size;
        if per_position == 0 || !planes.len().is_multiple_of(per_position) {
            return Err(PlanesLengthError { per_position, found: planes.len() });
        }
        let shape = [planes.len() / per_position, config.input_planes, size, size];
        let input = Tensor::from_data(TensorData::new(planes.to_vec(), shape), device);
        let out = self.forward(input);
        Ok(Prediction { policy_logits: read_back(out.policy_logits), values: read_back(out.value) })
    }

    /// [`Self::forward`] as [`crate::onnx`] traces it: one whole batch, and operations that
    /// burn-onnx can lower (see [`PolicyHead::forward_gather`]). The same outputs up to rounding.
    pub(crate) fn forward_for_export(&self, planes: Tensor<4>) -> NetOutput {
        let side = self.defenders.as_ref().map(|_| defenders_to_move(&planes));
        let mut x = self.stem.forward_relu(planes);
        for block in &self.blocks {
            x = block.forward(x);
        }
        let (policy_logits, value) = self.heads(x, side, PolicyHead::forward_gather);
        NetOutput { policy_logits, value, ownership: None }
    }

    /// True when every weight and batch-norm statistic is finite (no NaN, no infinity): one sum
    /// per tensor, cheap beside a training round or a match.
    #[must_use]
    pub fn weights_finite(&self) -> bool {
        struct Finite(bool);
        impl ModuleVisitor for Finite {
            fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
                self.0 = self.0 && param.val().sum().into_scalar::<f32>().is_finite();
            }
        }
        let mut finite = Finite(true);
        self.visit(&mut finite);
        finite.0
    }

    fn forward_whole(&self, planes: Tensor<4>) -> NetOutput {
        let side = self.defenders.as_ref().map(|_| defenders_to_move(&planes));
        let mut x = self.stem.forward_relu(planes); // [batch, channels, size, size]
        for block in &self.blocks {
            x = block.forward(x);
        }
        let ownership = self.ownership.as_ref().map(|head| head.forward(x.clone()));
        let (policy_logits, value) = self.heads(x, side, PolicyHead::forward);
        NetOutput { policy_logits, value, ownership }
    }

    /// The policy logits (by `policy`, one of [`PolicyHead`]'s forward passes) and values of the
    /// trunk's output `x`; with heads by side, `side` says whose pair answers for each position.
    /// Both pairs run on every position and each position keeps its side's: the heads are a few
    /// percent of the work, and each pair's gradient comes from its own side's positions.
    fn heads(
        &self,
        x: Tensor<4>,
        side: Option<Tensor<1>>,
        policy: fn(&PolicyHead, Tensor<4>) -> Tensor<2>,
    ) -> (Tensor<2>, Tensor<1>) {
        let logits = policy(&self.policy, x.clone());
        let value = self.value.forward(x.clone());
        match (&self.defenders, side) {
            (Some(heads), Some(side)) => (
                by_side(logits, policy(&heads.policy, x.clone()), side.clone().unsqueeze_dim(1)),
                by_side(value, heads.value.forward(x), side),
            ),
            _ => (logits, value),
        }
    }
}

/// Gives every parameter a new id and keeps its value.
struct NewIds;

impl ModuleMapper for NewIds {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        Param::from_tensor(param.val())
    }
}

/// 1 where the defenders are to move, 0 where the attackers are, `[batch]`: the side plane's
/// first square. Picked by `select`, which burn-onnx traces with a dynamic batch (a `narrow`
/// has the batch among its bounds, which differ between its two traces).
fn defenders_to_move(planes: &Tensor<4>) -> Tensor<1> {
    let [batch, ..] = planes.dims();
    let device = planes.device();
    let at = |i: usize| Tensor::<1, Int>::from_data(TensorData::new(vec![i as i64], [1]), &device);
    planes.clone().select(1, at(DEFENDERS_TO_MOVE)).select(2, at(0)).select(3, at(0)).reshape([batch])
}

/// The attackers' output where `side` is 0, the defenders' where it is 1.
fn by_side<const D: usize>(attackers: Tensor<D>, defenders: Tensor<D>, side: Tensor<D>) -> Tensor<D> {
    attackers.clone() + (defenders - attackers) * side
}

#[cfg(test)]
mod tests;

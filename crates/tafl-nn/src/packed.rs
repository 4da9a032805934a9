//! [`PackedNet`]: the inference forward pass of a [`TaflNet`] on the CPU, written for an
//! 11x11 board rather than through Burn's general convolution.
//!
//! Burn's `flex` backend turns each convolution into one small matrix product per position
//! (64 x 576 x 121 for a 64-channel 3x3 layer), below the size where its GEMM uses threads,
//! and around it allocates, re-lays out the batch and adds the bias in separate passes. Here,
//! once per model, every batch norm is folded into its convolution and the weights are laid
//! out as the matrices the products want. At each call the activations stay in one layout,
//! `[channel][position · square]`, from the stem to the heads; a 3x3 convolution is one
//! matrix product per layer for a whole slice of the batch (M = channels out, K = 9 · channels
//! in, N = 121 · positions) after an `im2col` copy, with the bias and the residual written
//! into the product's destination before it accumulates, and the ReLU after. The batch is cut
//! into one slice per core ([`MAX_SLICE`] positions at most, which keeps a slice's `im2col`
//! in the core's caches); a single slice lets the matrix product use the threads instead.
//!
//! [`InferencePath::Winograd`] runs the trunk's 3x3 convolutions (the stem and the residual
//! blocks) through Winograd's F(4x4, 3x3) instead of `im2col` (module `winograd`): 3.4 times
//! fewer multiplications on 11x11. Its trunk keeps the activations in the layout the
//! transforms read and write (positions innermost, the board in a border of zeros), converted
//! once on the way in and once for the heads: converting at every layer measured as costly as
//! the transforms themselves.
//!
//! Training keeps Burn's autodiff path, checkpoints are unchanged, and a GPU backend keeps
//! Burn's forward: [`InferencePath::default_for_backend`] chooses this path only on the CPU.

use rayon::prelude::*;

use crate::Device;
use crate::encoding::DEFENDERS_TO_MOVE;
use crate::matmul::{Threads, matmul, matmul_burn};
use crate::model::{PlanesLengthError, PolicyHead, Prediction, TaflNet, TaflNetConfig, ValueHead, read_back};
use crate::winograd::{self, Bordered, Tiling, WinogradConv};

/// Which forward pass evaluates positions for the search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InferencePath {
    /// Burn's own forward ([`TaflNet::predict`]), on any backend.
    Stock,
    /// [`PackedNet`] with the `gemm` crate's matrix product, every convolution through `im2col`.
    Fast,
    /// [`PackedNet`] with Burn's tensor `matmul` for its products instead, to measure the
    /// safe alternative against `Fast`.
    FastBurnMatmul,
    /// [`PackedNet`] with its trunk's 3x3 convolutions through Winograd's F(4x4, 3x3)
    /// ([`PackedNet::with_winograd`]): the CPU default, about twice `Fast`'s positions per
    /// second at self-play batches (64 and more), and `Fast` itself in small slices
    /// ([`WINOGRAD_MIN_SLICE`]).
    Winograd,
}

impl InferencePath {
    /// [`Self::Winograd`] on the CPU backend, [`Self::Stock`] on a GPU backend.
    #[must_use]
    pub fn default_for_backend() -> Self {
        if cfg!(feature = "wgpu") { Self::Stock } else { Self::Winograd }
    }

    /// Every path, in the order `tafl bench` lists them.
    pub const ALL: [Self; 4] = [Self::Stock, Self::Fast, Self::FastBurnMatmul, Self::Winograd];

    /// The name `tafl bench nn --conv` takes: `stock`, `fast`, `fast-burn`, `winograd`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Stock => "stock",
            Self::Fast => "fast",
            Self::FastBurnMatmul => "fast-burn",
            Self::Winograd => "winograd",
        }
    }

    /// The path called `name` (see [`Self::name`]).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// Positions per slice of a batch at most: 16 · 121 columns keep a 64-channel layer's
/// `im2col` (576 rows) near 4.5 MB, and bigger slices measured no faster.
pub const MAX_SLICE: usize = 16;

/// Positions a slice needs for [`InferencePath::Winograd`] to take its trunk through the
/// Winograd transforms; smaller slices (a batch of one, or of 16 on two cores) take the
/// `im2col` trunk. The transforms work on 16 positions at once, one per vector lane, and in
/// small slices the idle lanes cost more than the multiplications saved: measured on b6c64
/// and b4c48 against `im2col`, slices of 4 ran at 0.55–0.65 times its speed, of 8 at 0.9–1.0,
/// of 12 at 1.0–1.2, of 16 at 2–3.
pub const WINOGRAD_MIN_SLICE: usize = 12;

/// A [`TaflNet`]'s weights, batch norms folded, laid out for [`PackedNet::predict`].
#[derive(Debug, Clone)]
pub struct PackedNet {
    size: usize,
    input_planes: usize,
    stem: Conv,
    blocks: Vec<Block>,
    /// The policy and value heads; the attackers' when the net has heads by side.
    heads: Heads,
    /// The defenders' heads of a net with heads by side.
    defenders: Option<Heads>,
    product: Product,
    /// The trunk's convolutions in the Winograd domain, which [`PackedNet::predict`] then uses.
    winograd: Option<WinogradTrunk>,
}

/// A policy head and a value head, packed.
#[derive(Debug, Clone)]
struct Heads {
    policy_hidden: Conv,
    policy_out: Conv,
    value_conv: Conv,
    value_hidden: Dense,
    value_out: Dense,
}

/// The stem's and every block's 3x3 convolutions, transformed ([`PackedNet::with_winograd`]);
/// `blocks[i]` is `PackedNet::blocks[i]`'s two, whose global pooling stays there.
#[derive(Debug, Clone)]
struct WinogradTrunk {
    stem: WinogradConv,
    blocks: Vec<[WinogradConv; 2]>,
}

/// Where the matrix products run.
#[derive(Debug, Clone)]
enum Product {
    Gemm,
    Burn(Device),
}

#[derive(Debug, Clone)]
struct Block {
    first: Conv,
    second: Conv,
    global_pool: Option<Dense>,
}

/// A square convolution with 'same' padding and a bias: `weight` is `[out][in · k · k]`
/// (Burn's `[out][in][ky][kx]` flattened), the left operand of the layer's matrix product.
#[derive(Debug, Clone)]
struct Conv {
    channels_in: usize,
    channels_out: usize,
    kernel: usize,
    weight: Vec<f32>,
    bias: Vec<f32>,
}

/// A fully connected layer: `weight` is `[in][out]`, as Burn's `Linear` holds it.
#[derive(Debug, Clone)]
struct Dense {
    inputs: usize,
    outputs: usize,
    weight: Vec<f32>,
    bias: Vec<f32>,
}

/// The shape of the activations of one slice of positions.
#[derive(Clone, Copy, Debug)]
struct Slice {
    positions: usize,
    size: usize,
}

impl Slice {
    fn area(self) -> usize {
        self.size * self.size
    }

    /// Columns of a layer's matrix product: every square of every position.
    fn columns(self) -> usize {
        self.positions * self.area()
    }
}

impl Conv {
    fn new((weight, bias): (burn::tensor::Tensor<4>, burn::tensor::Tensor<1>)) -> Self {
        let [channels_out, channels_in, kernel, kernel_w] = weight.dims();
        assert_eq!(kernel, kernel_w, "square kernels only");
        assert_eq!(kernel % 2, 1, "odd kernels only ('same' padding)");
        Self { channels_in, channels_out, kernel, weight: read_back(weight), bias: read_back(bias) }
    }

    /// This convolution in the Winograd domain, if it is a 3x3 one.
    fn winograd(&self) -> Option<WinogradConv> {
        (self.kernel == 3).then(|| WinogradConv::new(&self.weight, &self.bias, self.channels_out, self.channels_in))
    }

    fn with_bias(conv: &burn::nn::conv::Conv2d) -> Self {
        let weight = conv.weight.val();
        let [channels_out, ..] = weight.dims();
        let bias = match &conv.bias {
            Some(b) => b.val(),
            None => burn::tensor::Tensor::zeros([channels_out], &weight.device()),
        };
        Self::new((weight, bias))
    }

    /// `relu?(conv(x) + bias + residual?)` for `x` as `[channels_in][columns]`, giving
    /// `[channels_out][columns]`.
    fn apply(&self, x: &[f32], slice: Slice, residual: Option<&[f32]>, relu: bool, ctx: &mut Context<'_>) -> Vec<f32> {
        let n = slice.columns();
        debug_assert_eq!(x.len(), self.channels_in * n);
        let mut out = vec![0.0; self.channels_out * n];
        // The bias and the skip connection go in first: the product then adds onto them.
        for (channel, row) in out.chunks_exact_mut(n).enumerate() {
            let bias = self.bias[channel];
            match residual {
                Some(skip) => {
                    row.iter_mut().zip(&skip[channel * n..(channel + 1) * n]).for_each(|(o, s)| *o = s + bias)
                }
                None => row.fill(bias),
            }
        }
        let k = self.channels_in * self.kernel * self.kernel;
        let columns: &[f32] = if self.kernel == 1 {
            x
        } else {
            im2col(x, self.channels_in, self.kernel, slice, &mut ctx.columns);
            &ctx.columns
        };
        ctx.product(&self.weight, columns, &mut out, [self.channels_out, k, n]);
        if relu {
            out.iter_mut().for_each(|v| *v = v.max(0.0));
        }
        out
    }
}

/// Writes the `im2col` matrix of `x` (`[channels][columns]`) for a `kernel` x `kernel`
/// convolution with zero padding into `out`: row `(channel · k + dy) · k + dx`, column
/// `(position, rank, file)` holds `x` at `(rank + dy − k/2, file + dx − k/2)`, or 0 off the board.
fn im2col(x: &[f32], channels: usize, kernel: usize, slice: Slice, out: &mut Vec<f32>) {
    let (n, size, area) = (slice.columns(), slice.size, slice.area());
    let pad = kernel / 2;
    out.clear();
    out.resize(channels * kernel * kernel * n, 0.0);
    let mut rows = out.chunks_exact_mut(n);
    for source in x.chunks_exact(n).take(channels) {
        for dy in 0..kernel {
            for dx in 0..kernel {
                let Some(row) = rows.next() else { return };
                for (position, square) in row.chunks_exact_mut(area).zip(source.chunks_exact(area)) {
                    for (rank, line) in position.chunks_exact_mut(size).enumerate() {
                        let from_rank = (rank + dy).checked_sub(pad).filter(|&r| r < size);
                        let Some(from_rank) = from_rank else { continue }; // stays zero
                        shift_line(&square[from_rank * size..(from_rank + 1) * size], line, dx, pad);
                    }
                }
            }
        }
    }
}

/// `line[file] = from[file + dx − pad]` where that is on the board; the rest stays zero.
fn shift_line(from: &[f32], line: &mut [f32], dx: usize, pad: usize) {
    let size = line.len();
    if dx >= pad {
        let shift = (dx - pad).min(size);
        line[..size - shift].copy_from_slice(&from[shift..]);
    } else {
        let shift = (pad - dx).min(size);
        line[shift..].copy_from_slice(&from[..size - shift]);
    }
}

impl Dense {
    fn new(linear: &burn::nn::Linear) -> Self {
        let weight = linear.weight.val();
        let [inputs, outputs] = weight.dims();
        let bias = linear.bias.as_ref().map_or_else(|| vec![0.0; outputs], |b| read_back(b.val()));
        Self { inputs, outputs, weight: read_back(weight), bias }
    }

    /// `x` is `[positions][inputs]`; the result `[positions][outputs]`.
    fn apply(&self, x: &[f32]) -> Vec<f32> {
        let mut out = Vec::with_capacity(x.len() / self.inputs.max(1) * self.outputs);
        for row in x.chunks_exact(self.inputs) {
            let start = out.len();
            out.extend_from_slice(&self.bias);
            let y = &mut out[start..];
            for (&xi, weights) in row.iter().zip(self.weight.chunks_exact(self.outputs)) {
                y.iter_mut().zip(weights).for_each(|(y, w)| *y += xi * w);
            }
        }
        out
    }
}

/// Mean and max of each channel over each position's board: `x` is `[channels][columns]`,
/// the result `[positions][means of every channel, then maxima]`, as [`TaflNet`]'s
/// global pooling orders them.
fn global_pool(x: &[f32], channels: usize, slice: Slice) -> Vec<f32> {
    let (n, area) = (slice.columns(), slice.area());
    let mut out = vec![0.0; slice.positions * 2 * channels];
    for (channel, row) in x.chunks_exact(n).enumerate() {
        for (position, board) in row.chunks_exact(area).enumerate() {
            let pooled = &mut out[position * 2 * channels..(position + 1) * 2 * channels];
            pooled[channel] = board.iter().sum::<f32>() / area as f32;
            pooled[channels + channel] = board.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        }
    }
    out
}

/// Per-call state of one slice: the reusable `im2col` and Winograd buffers, and how to multiply.
struct Context<'a> {
    columns: Vec<f32>,
    winograd: winograd::Scratch,
    product: &'a Product,
    threads: Threads,
}

impl Context<'_> {
    fn product(&self, a: &[f32], b: &[f32], c: &mut [f32], dims: [usize; 3]) {
        match self.product {
            Product::Gemm => matmul(a, b, c, dims, true, self.threads),
            Product::Burn(device) => matmul_burn(a, b, c, dims, true, device),
        }
    }
}

impl PackedNet {
    /// Folds and packs `net` (of shape `config`) once. Any batch norm state works: folded
    /// already by [`TaflNet::fold_batch_norms`] or not.
    #[must_use]
    pub fn new(net: &TaflNet, config: &TaflNetConfig) -> Self {
        Self {
            size: config.board_size,
            input_planes: config.input_planes,
            stem: Conv::new(net.stem.inference_weights()),
            blocks: net
                .blocks
                .iter()
                .map(|b| Block {
                    first: Conv::new(b.first.inference_weights()),
                    second: Conv::new(b.second.inference_weights()),
                    global_pool: b.global_pool.as_ref().map(|p| Dense::new(&p.linear)),
                })
                .collect(),
            heads: Heads::new(&net.policy, &net.value),
            defenders: net.defenders.as_ref().map(|d| Heads::new(&d.policy, &d.value)),
            product: Product::Gemm,
            winograd: None,
        }
    }

    /// This net with its matrix products done by Burn's tensor `matmul` on `device`
    /// ([`InferencePath::FastBurnMatmul`]): slower, for measuring.
    #[must_use]
    pub fn with_burn_matmul(mut self, device: &Device) -> Self {
        self.product = Product::Burn(device.clone());
        self
    }

    /// This net with its trunk's 3x3 convolutions (the stem and every residual block) through
    /// Winograd's F(4x4, 3x3) ([`InferencePath::Winograd`], see the module `winograd`); the
    /// kernels are transformed here, once. The heads' 1x1 convolutions stay as they are.
    #[must_use]
    pub fn with_winograd(mut self) -> Self {
        let blocks: Option<Vec<_>> =
            self.blocks.iter().map(|b| Some([b.first.winograd()?, b.second.winograd()?])).collect();
        // Every trunk convolution of a `TaflNet` is 3x3; were one not, the direct one stays.
        self.winograd = self.stem.winograd().zip(blocks).map(|(stem, blocks)| WinogradTrunk { stem, blocks });
        self
    }

    /// Evaluates positions given as planes, `[batch][plane][rank][file]`: the same outputs as
    /// [`TaflNet::predict`] up to rounding.
    ///
    /// # Errors
    /// [`PlanesLengthError`] when `planes` is not a whole number of positions.
    pub fn predict(&self, planes: &[f32]) -> Result<Prediction, PlanesLengthError> {
        let per_position = self.input_planes * self.size * self.size;
        if per_position == 0 || !planes.len().is_multiple_of(per_position) {
            return Err(PlanesLengthError { per_position, found: planes.len() });
        }
        let batch = planes.len() / per_position;
        if batch == 0 {
            return Ok(Prediction { policy_logits: Vec::new(), values: Vec::new() });
        }
        let slice_len = batch.div_ceil(rayon::current_num_threads().max(1)).clamp(1, MAX_SLICE);
        if batch <= slice_len {
            // One slice (a small batch, or one thread): the products take the threads, except
            // for a single position, whose products are too small to share: on 2 cores, b4c48
            // evaluated 923 positions a second with both threads and 1 832 with one
            // (`tafl bench nn --net b4c48 --batches 1 --conv fast --threads 2`).
            let threads = if batch == 1 { Threads::One } else { Threads::Pool };
            return Ok(self.forward_slice(planes, batch, threads));
        }
        let parts: Vec<Prediction> = planes
            .par_chunks(slice_len * per_position)
            .map(|p| self.forward_slice(p, p.len() / per_position, Threads::One))
            .collect();
        let mut out = Prediction { policy_logits: Vec::new(), values: Vec::with_capacity(batch) };
        for part in parts {
            out.policy_logits.extend_from_slice(&part.policy_logits);
            out.values.extend_from_slice(&part.values);
        }
        Ok(out)
    }

    fn forward_slice(&self, planes: &[f32], positions: usize, threads: Threads) -> Prediction {
        let slice = Slice { positions, size: self.size };
        let mut ctx =
            Context { columns: Vec::new(), winograd: winograd::Scratch::default(), product: &self.product, threads };
        let x = match &self.winograd {
            Some(trunk) if positions >= WINOGRAD_MIN_SLICE => self.winograd_trunk(trunk, planes, slice, &mut ctx),
            _ => self.trunk(planes, slice, &mut ctx),
        };
        let mut out = self.heads.predict(&x, slice, &mut ctx);
        if let Some(defenders) = &self.defenders {
            // Both pairs on every position, each position keeping its side's, as the net does.
            let theirs = defenders.predict(&x, slice, &mut ctx);
            let moves = out.policy_logits.len() / positions;
            let plane = DEFENDERS_TO_MOVE * slice.area();
            for (p, position) in planes.chunks_exact(planes.len() / positions).enumerate() {
                if position[plane] > 0.5 {
                    out.values[p] = theirs.values[p];
                    out.policy_logits[p * moves..][..moves]
                        .copy_from_slice(&theirs.policy_logits[p * moves..][..moves]);
                }
            }
        }
        out
    }

    /// The stem and the residual blocks through `im2col`: `[channel][position · square]`.
    fn trunk(&self, planes: &[f32], slice: Slice, ctx: &mut Context<'_>) -> Vec<f32> {
        let (n, area) = (slice.columns(), slice.area());
        // [position][plane][square] to [plane][position · square].
        let mut x = vec![0.0; self.input_planes * n];
        for (position, planes) in planes.chunks_exact(self.input_planes * area).enumerate() {
            for (plane, board) in planes.chunks_exact(area).enumerate() {
                x[plane * n + position * area..][..area].copy_from_slice(board);
            }
        }
        let mut x = self.stem.apply(&x, slice, None, true, ctx);
        for block in &self.blocks {
            let mut y = block.first.apply(&x, slice, None, true, ctx);
            if let Some(pool) = &block.global_pool {
                let channels = block.first.channels_out;
                let bias = pool.apply(&global_pool(&y, channels, slice));
                for (channel, row) in y.chunks_exact_mut(n).enumerate() {
                    for (position, board) in row.chunks_exact_mut(area).enumerate() {
                        let b = bias[position * channels + channel];
                        board.iter_mut().for_each(|v| *v += b);
                    }
                }
            }
            x = block.second.apply(&y, slice, Some(&x), true, ctx);
        }
        x
    }

    /// The same trunk through `trunk`'s Winograd convolutions, in their own layout from the
    /// input planes on; the heads get `[channel][position · square]` back.
    fn winograd_trunk(&self, trunk: &WinogradTrunk, planes: &[f32], slice: Slice, ctx: &mut Context<'_>) -> Vec<f32> {
        let (threads, scratch) = (ctx.threads, &mut ctx.winograd);
        let x = Bordered::from_planes(planes, self.input_planes, Tiling::new(slice.size, slice.positions));
        let mut x = trunk.stem.apply(&x, None, true, threads, scratch);
        for (block, [first, second]) in self.blocks.iter().zip(&trunk.blocks) {
            let mut y = first.apply(&x, None, true, threads, scratch);
            if let Some(pool) = &block.global_pool {
                y.add_position_bias(&pool.apply(&y.global_pool()));
            }
            x = second.apply(&y, Some(&x), true, threads, scratch);
        }
        x.to_columns()
    }
}

impl Heads {
    fn new(policy: &PolicyHead, value: &ValueHead) -> Self {
        Self {
            policy_hidden: Conv::new(policy.hidden.inference_weights()),
            policy_out: Conv::with_bias(&policy.out),
            value_conv: Conv::new(value.conv.inference_weights()),
            value_hidden: Dense::new(&value.hidden),
            value_out: Dense::new(&value.out),
        }
    }

    fn predict(&self, x: &[f32], slice: Slice, ctx: &mut Context<'_>) -> Prediction {
        Prediction { policy_logits: self.policy(x, slice, ctx), values: self.value(x, slice, ctx) }
    }

    /// Logits square-major, as [`crate::policy`] lays them out: `[position][square][move]`.
    fn policy(&self, x: &[f32], slice: Slice, ctx: &mut Context<'_>) -> Vec<f32> {
        let hidden = self.policy_hidden.apply(x, slice, None, true, ctx);
        let logits = self.policy_out.apply(&hidden, slice, None, false, ctx); // [move][column]
        let (n, area, moves) = (slice.columns(), slice.area(), self.policy_out.channels_out);
        let mut out = vec![0.0; n * moves];
        for (m, row) in logits.chunks_exact(n).enumerate() {
            for (column, &logit) in row.iter().enumerate() {
                let (position, square) = (column / area, column % area);
                out[(position * area + square) * moves + m] = logit;
            }
        }
        out
    }

    fn value(&self, x: &[f32], slice: Slice, ctx: &mut Context<'_>) -> Vec<f32> {
        let v = self.value_conv.apply(x, slice, None, true, ctx);
        let pooled = global_pool(&v, self.value_conv.channels_out, slice);
        let mut hidden = self.value_hidden.apply(&pooled);
        hidden.iter_mut().for_each(|h| *h = h.max(0.0));
        self.value_out.apply(&hidden).into_iter().map(f32::tanh).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::device;
    use burn::module::{Module, Param, RunningState};
    use burn::tensor::{Distribution, Tensor};

    /// A net whose batch norms are far from the identity, so that folding is exercised.
    fn random_net(config: &TaflNetConfig) -> TaflNet {
        let d = device();
        let mut net = config.init(&d);
        let random = |n: usize, lo: f64, hi: f64| Tensor::<1>::random([n], Distribution::Uniform(lo, hi), &d);
        let perturb = |layer: &mut crate::model::ConvBn| {
            let [n] = layer.norm.gamma.val().dims();
            layer.norm.gamma = Param::from_tensor(random(n, 0.5, 1.5));
            layer.norm.beta = Param::from_tensor(random(n, -0.5, 0.5));
            layer.norm.running_mean = RunningState::new(random(n, -0.3, 0.3));
            layer.norm.running_var = RunningState::new(random(n, 0.5, 2.0));
        };
        perturb(&mut net.stem);
        for block in &mut net.blocks {
            perturb(&mut block.first);
            perturb(&mut block.second);
        }
        perturb(&mut net.policy.hidden);
        perturb(&mut net.value.conv);
        net
    }

    fn planes(config: &TaflNetConfig, batch: usize, seed: usize) -> Vec<f32> {
        let len = batch * config.input_planes * config.board_size * config.board_size;
        // Mostly 0/1 like real planes, with some fractional values.
        (0..len).map(|i| ((i * 31 + seed * 17) % 7) as f32 / 6.0).map(|v| if v > 0.5 { 1.0 } else { v * 0.3 }).collect()
    }

    fn assert_close(fast: &Prediction, stock: &Prediction) {
        assert_eq!(fast.policy_logits.len(), stock.policy_logits.len());
        assert_eq!(fast.values.len(), stock.values.len());
        let pairs = fast.policy_logits.iter().zip(&stock.policy_logits).chain(fast.values.iter().zip(&stock.values));
        for (i, (a, b)) in pairs.enumerate() {
            assert!((a - b).abs() <= 1e-4 * (1.0 + b.abs()), "output {i}: fast {a} vs stock {b}");
        }
    }

    #[test]
    fn equals_the_stock_forward() {
        let d = device();
        // Copenhagen with global pooling every 2nd block (as configs/cpu.toml), and a 7x7 board.
        for config in [
            TaflNetConfig::new(11, 10, 3, 16).with_global_pool_interval(2),
            TaflNetConfig::new(7, 5, 2, 8).with_global_pool_interval(1).with_policy_channels(4),
        ] {
            let net = random_net(&config).valid();
            let packed = PackedNet::new(&net, &config);
            let packed_folded = PackedNet::new(&net.clone().fold_batch_norms(), &config);
            // One position, fewer than a slice per thread, and several slices.
            for batch in [1, 3, 2 * MAX_SLICE + 5] {
                let p = planes(&config, batch, batch);
                let stock = net.predict(&config, &p, &d).expect("whole positions");
                assert_close(&packed.predict(&p).expect("whole positions"), &stock);
                assert_close(&packed_folded.predict(&p).expect("whole positions"), &stock);
            }
        }
    }

    #[test]
    fn heads_by_side_answer_for_each_positions_side_as_the_stock_forward_does() {
        let d = device();
        let config = TaflNetConfig::new(11, 10, 2, 16).with_global_pool_interval(2).with_heads_by_side(Some(true));
        let mut net = random_net(&config);
        let shared = TaflNet { defenders: None, ..net.clone() }.valid();
        let defenders = net.defenders.as_mut().expect("heads by side");
        for layer in [&mut defenders.policy.hidden, &mut defenders.value.conv] {
            layer.norm.beta = Param::from_tensor(layer.norm.beta.val().add_scalar(0.25));
        }
        let net = net.valid();
        let area = 121;
        for batch in [1, 3, 2 * MAX_SLICE + 5] {
            let mut p = planes(&config, batch, batch);
            // The defenders to move in every other position.
            for (i, position) in p.chunks_exact_mut(10 * area).enumerate() {
                position[DEFENDERS_TO_MOVE * area..][..area].fill(if i % 2 == 1 { 1.0 } else { 0.0 });
            }
            let stock = net.predict(&config, &p, &d).expect("whole positions");
            assert_close(&PackedNet::new(&net, &config).predict(&p).expect("whole"), &stock);
            assert_close(&PackedNet::new(&net, &config).with_winograd().predict(&p).expect("whole"), &stock);
            // The attackers' positions get the shared pair's answer, the defenders' another.
            let one_pair = shared.predict(&config.clone().with_heads_by_side(None), &p, &d).expect("whole");
            for (i, (a, b)) in stock.values.iter().zip(&one_pair.values).enumerate() {
                assert_eq!(i % 2 == 0, (a - b).abs() < 1e-6, "position {i}: {a} against {b}");
            }
        }
    }

    #[test]
    fn burn_matmul_gives_the_same_outputs() {
        let config = TaflNetConfig::new(7, 5, 1, 8);
        let net = random_net(&config).valid();
        let p = planes(&config, 5, 1);
        let fast = PackedNet::new(&net, &config).predict(&p).expect("whole");
        let burn = PackedNet::new(&net, &config).with_burn_matmul(&device()).predict(&p).expect("whole");
        assert_close(&burn, &fast);
    }

    #[test]
    fn rejects_partial_positions_and_accepts_none() {
        let config = TaflNetConfig::new(7, 5, 1, 8);
        let packed = PackedNet::new(&config.init(&device()), &config);
        assert!(packed.predict(&[0.0; 5 * 49 + 1]).is_err());
        let empty = packed.predict(&[]).expect("zero positions");
        assert!(empty.values.is_empty() && empty.policy_logits.is_empty());
    }

    #[test]
    fn im2col_shifts_with_zero_padding() {
        // One 3x3 board 1..9: the row for (dy, dx) = (0, 0) reads up-left, zero on the edges.
        let x: Vec<f32> = (1..=9).map(|v| v as f32).collect();
        let mut out = Vec::new();
        im2col(&x, 1, 3, Slice { positions: 1, size: 3 }, &mut out);
        assert_eq!(&out[..9], &[0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 0.0, 4.0, 5.0]);
        assert_eq!(&out[4 * 9..5 * 9], &x[..], "the centre tap is the board itself");
        assert_eq!(&out[8 * 9..], &[5.0, 6.0, 0.0, 8.0, 9.0, 0.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn path_names_round_trip() {
        for path in InferencePath::ALL {
            assert_eq!(InferencePath::from_name(path.name()), Some(path));
        }
        assert_eq!(InferencePath::from_name("winograd"), Some(InferencePath::Winograd));
        assert_eq!(InferencePath::from_name("wino"), None);
    }

    #[test]
    fn winograd_equals_the_stock_forward() {
        let d = device();
        // Copenhagen (11x11: the tiles overhang by a square), Tablut (9x9: by three), 13x13
        // (16x16 of tiles) and brandubh (7x7), with and without global pooling.
        for config in [
            TaflNetConfig::new(11, 10, 2, 16).with_global_pool_interval(2),
            TaflNetConfig::new(9, 10, 1, 8),
            TaflNetConfig::new(13, 6, 2, 8).with_global_pool_interval(1).with_policy_channels(4),
            TaflNetConfig::new(7, 5, 1, 8),
        ] {
            let net = random_net(&config).valid();
            let winograd = PackedNet::new(&net, &config).with_winograd();
            let winograd_folded = PackedNet::new(&net.clone().fold_batch_norms(), &config).with_winograd();
            // Batches as `predict` slices them (small slices take the im2col trunk)...
            for batch in [1, 3, 2 * MAX_SLICE + 5] {
                let p = planes(&config, batch, batch);
                let stock = net.predict(&config, &p, &d).expect("whole positions");
                assert_close(&winograd.predict(&p).expect("whole positions"), &stock);
                assert_close(&winograd_folded.predict(&p).expect("whole positions"), &stock);
            }
            // ...and slices through the Winograd trunk whatever the number of threads: one
            // position, the smallest slice `predict` gives it, one short of a vector of lanes,
            // a full one, on one thread or the pool's.
            let slices = [
                (1, Threads::Pool),
                (WINOGRAD_MIN_SLICE, Threads::One),
                (MAX_SLICE - 1, Threads::Pool),
                (MAX_SLICE, Threads::One),
            ];
            for (positions, threads) in slices {
                let p = planes(&config, positions, positions + 1);
                let stock = net.predict(&config, &p, &d).expect("whole positions");
                assert_close(&winograd.forward_slice(&p, positions, threads), &stock);
            }
            let empty = winograd.predict(&[]).expect("zero positions");
            assert!(empty.values.is_empty() && empty.policy_logits.is_empty());
        }
    }

    #[test]
    fn winograd_keeps_a_deep_net_within_the_tolerance() {
        // Rounding adds up over layers: the smallest shipped shape, 13 Winograd layers deep,
        // batch norms far from identity, one full slice and a short one.
        let config = TaflNetConfig::new(11, crate::INPUT_PLANES, 6, 64);
        let net = random_net(&config).valid();
        let positions = MAX_SLICE - 3;
        let p = planes(&config, positions, 2);
        let stock = net.predict(&config, &p, &device()).expect("whole positions");
        assert_close(&PackedNet::new(&net, &config).with_winograd().forward_slice(&p, positions, Threads::One), &stock);
    }

    #[test]
    fn winograd_conv_equals_the_im2col_conv() {
        // A trunk layer with its skip connection and ReLU, on 11x11 and 9x9.
        let values = |len: usize, seed: usize, scale: f32| -> Vec<f32> {
            (0..len).map(|i| (((i * 7919 + seed * 104_729) % 2001) as f32 / 1000.0 - 1.0) * scale).collect()
        };
        for size in [11, 9] {
            let (channels, positions) = (32, 5);
            let n = positions * size * size;
            let conv = Conv {
                channels_in: channels,
                channels_out: channels,
                kernel: 3,
                weight: values(channels * channels * 9, size, 0.1),
                bias: values(channels, size + 1, 0.5),
            };
            let (x, skip) = (values(channels * n, size + 2, 1.0), values(channels * n, size + 3, 1.0));
            let slice = Slice { positions, size };
            let mut ctx = Context {
                columns: Vec::new(),
                winograd: winograd::Scratch::default(),
                product: &Product::Gemm,
                threads: Threads::One,
            };
            let direct = conv.apply(&x, slice, Some(&skip), true, &mut ctx);
            let tiling = Tiling::new(size, positions);
            let (x, skip) =
                (Bordered::from_columns(&x, channels, tiling), Bordered::from_columns(&skip, channels, tiling));
            let winograd = conv.winograd().expect("a 3x3 convolution");
            let fast = winograd.apply(&x, Some(&skip), true, Threads::One, &mut ctx.winograd).to_columns();
            assert_eq!(direct.len(), fast.len());
            for (i, (a, b)) in fast.iter().zip(&direct).enumerate() {
                assert!(
                    (a - b).abs() <= 1e-5 * (1.0 + b.abs()),
                    "{size}x{size}, output {i}: winograd {a} vs im2col {b}"
                );
            }
        }
    }

    #[test]
    fn winograd_transforms_every_trunk_convolution_and_no_head_one() {
        let config = TaflNetConfig::new(7, 5, 3, 8);
        let packed = PackedNet::new(&config.init(&device()), &config).with_winograd();
        assert_eq!(packed.winograd.as_ref().map(|t| t.blocks.len()), Some(3));
        assert!(packed.heads.policy_hidden.winograd().is_none() && packed.heads.policy_out.winograd().is_none());
        assert!(packed.heads.value_conv.winograd().is_none());
    }
}

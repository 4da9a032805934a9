//! The net's convolutions while it trains, forward and backward, plugged into Burn's autodiff
//! as a backend extension with its own backward step.
//!
//! Why: Burn's `flex` backend computes a convolution's weight gradient as a convolution of
//! the batch-swapped input with the output gradient as its kernel (a product 9 columns wide)
//! and its input gradient as a transposed convolution; a b4c48 training step spent most of its
//! time there (`perf` on `tafl bench nn --train`). Here a 3x3 convolution's forward pass runs
//! through the Winograd F(4x4, 3x3) transforms of [`crate::winograd`] (3.4 times fewer
//! multiplications), and so does its input gradient, which is the convolution of the output
//! gradient with the kernels turned half a circle; the weight gradient is summed in the same
//! transform domain (one product per point and row of tiles, a slice of the batch on each
//! core) and taken back to the kernels once. Other kernels (the heads' 1x1) take `im2col`
//! products for all three.
//!
//! Only an autodiff device on the `flex` backend takes this path; elsewhere (wgpu) and with
//! [`set_enabled`]`(false)` [`conv2d`] is Burn's convolution. The model, its parameters, the
//! optimiser and the records stay Burn's: only how a convolution and its gradients are
//! computed changes, and the tests check both against Burn's within 1e-4.

use std::borrow::Cow;
use std::cell::Cell;
use std::ops::Range;

use burn::backend::autodiff::Autodiff;
use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::flex::FlexTensor;
use burn::backend::tensor::FloatTensor;
use burn::backend::{Backend, Dispatch, Flex, TensorMetadata, backend_extension};
use burn::nn::PaddingConfig2d;
use burn::nn::conv::Conv2d;
use burn::tensor::{Shape, Tensor, TensorData};
use rayon::prelude::*;

use crate::Device;
use crate::matmul::{Threads, matmul_t};
use crate::winograd::{self, Bordered, Scratch, Tiling, WinogradConv};

thread_local! {
    static ENABLED: Cell<bool> = const { Cell::new(true) };
}

/// Turns this path (and [`crate::norm_train`]'s) on or off for convolutions and batch norms run
/// on the calling thread (on by default): off, [`conv2d`] is always Burn's convolution and
/// [`crate::norm_train::batch_norm`] Burn's batch norm, which `tafl bench nn --train
/// --train-conv stock` and the tests measure against.
pub fn set_enabled(enabled: bool) {
    ENABLED.with(|e| e.set(enabled));
}

/// Whether this path is on for the calling thread ([`set_enabled`]).
#[must_use]
pub fn enabled() -> bool {
    ENABLED.with(Cell::get)
}

/// `f()` with this path on or off for the calling thread, as it was afterwards.
pub fn with_enabled<R>(enabled: bool, f: impl FnOnce() -> R) -> R {
    let before = ENABLED.with(|e| e.replace(enabled));
    let out = f();
    set_enabled(before);
    out
}

/// Whether [`conv2d`] takes this path for tensors on `device`.
#[must_use]
pub fn applies_to(device: &Device) -> bool {
    ENABLED.with(Cell::get) && device.is_autodiff() && device.clone().inner() == Device::flex()
}

/// `conv.forward(x)` for a stride-1, zero-padded ("same") convolution with an odd square
/// kernel: through this module's products where [`applies_to`] the device, Burn's otherwise.
///
/// # Shapes
/// - `x`: `[batch, channels_in, size, size]`
/// - output: `[batch, channels_out, size, size]`
pub fn conv2d(conv: &Conv2d, x: Tensor<4>) -> Tensor<4> {
    let [k0, k1] = conv.kernel_size;
    let same = k0 == 1 || conv.padding == PaddingConfig2d::Same;
    let plain = same && conv.stride == [1, 1] && conv.dilation == [1, 1] && conv.groups == 1 && k0 == k1 && k0 % 2 == 1;
    if !plain || !applies_to(&x.device()) {
        return conv.forward(x);
    }
    let out = Tensor::<4>::from_dispatch(<Dispatch as SquareConv>::square_conv(
        x.into_dispatch(),
        conv.weight.val().into_dispatch(),
    ));
    match &conv.bias {
        Some(bias) => {
            let [channels] = bias.dims();
            out + bias.val().reshape([1, channels, 1, 1])
        }
        None => out,
    }
}

/// A convolution with stride 1, zero padding `k / 2` and no bias, where `k` is the odd side
/// of the kernel: `x [batch, c_in, size, size]`, `weight [c_out, c_in, k, k]`.
#[backend_extension(Autodiff, Flex)]
pub trait SquareConv: Backend {
    /// `x` convolved with `weight`, as `[batch, c_out, size, size]`.
    fn square_conv(x: FloatTensor<Self>, weight: FloatTensor<Self>) -> FloatTensor<Self>;
}

impl SquareConv for Flex {
    fn square_conv(x: FloatTensor<Self>, weight: FloatTensor<Self>) -> FloatTensor<Self> {
        let shape = ConvShape::of(&x, &weight);
        let out = shape.forward(&values(&x), &values(&weight));
        tensor(out, [shape.batch, shape.channels_out, shape.size, shape.size])
    }
}

impl<C: CheckpointStrategy> SquareConv for Autodiff<Flex, C> {
    fn square_conv(x: FloatTensor<Self>, weight: FloatTensor<Self>) -> FloatTensor<Self> {
        match SquareConvBackward.prepare::<C>([x.node(), weight.node()]).compute_bound().stateful() {
            OpsKind::Tracked(prep) => {
                let (x, weight) = (x.into_primitive(), weight.into_primitive());
                let out = Flex::square_conv(x.clone(), weight.clone());
                prep.finish((x, weight), out)
            }
            OpsKind::UnTracked(prep) => prep.finish(Flex::square_conv(x.into_primitive(), weight.into_primitive())),
        }
    }
}

#[derive(Debug)]
struct SquareConvBackward;

impl Backward<Flex, 2> for SquareConvBackward {
    /// The forward pass's input and weight: the `im2col` matrix is rebuilt from the input,
    /// which keeps a batch's memory at the size of its activations.
    type State = (FlexTensor, FlexTensor);

    fn backward(self, ops: Ops<Self::State, 2>, grads: &mut Gradients, _checkpointer: &mut Checkpointer) {
        let [node_x, node_weight] = ops.parents;
        let grad = grads.consume::<Flex>(&ops.node);
        let (x, weight) = ops.state;
        let shape = ConvShape::of(&x, &weight);
        let (grad, weight) = (values(&grad), values(&weight));
        if let Some(node) = node_x {
            let dx = shape.input_grad(&weight, &grad);
            grads.register::<Flex>(node.id, tensor(dx, [shape.batch, shape.channels_in, shape.size, shape.size]));
        }
        if let Some(node) = node_weight {
            let dw = shape.weight_grad(&values(&x), &grad);
            let dims = [shape.channels_out, shape.channels_in, shape.kernel, shape.kernel];
            grads.register::<Flex>(node.id, tensor(dw, dims));
        }
    }
}

/// The `f32` values of a tensor, borrowed when it is contiguous (a copy only of a strided view).
pub(crate) fn values(t: &FlexTensor) -> Cow<'_, [f32]> {
    match t.as_slice::<f32>() {
        Some(values) => Cow::Borrowed(values),
        // Every tensor of the net is f32 (`TaflNet` is built and trained in f32): another
        // dtype here is a bug in this crate, not bad input.
        None => Cow::Owned(
            t.clone().into_data().try_into_vec::<f32>().unwrap_or_else(|e| panic!("the net's tensors are f32: {e:?}")),
        ),
    }
}

/// `len` zeros written by the pool's threads. The step's buffers are megabytes (3 MB for one
/// b4c48 layer at batch 128), and `vec![0.0; len]` clears a reused block on the calling thread
/// alone while the pool waits: in `perf` a quarter of that thread's time, with the other core idle.
pub(crate) fn zeros(len: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(len);
    out.par_extend(rayon::iter::repeat_n(0.0, len));
    out
}

/// A tensor of `values` in `shape`.
pub(crate) fn tensor(values: Vec<f32>, shape: impl Into<Shape>) -> FlexTensor {
    FlexTensor::from_data(TensorData::new(values, shape))
}

/// The sizes of one convolution.
#[derive(Clone, Copy, Debug)]
struct ConvShape {
    batch: usize,
    channels_in: usize,
    channels_out: usize,
    size: usize,
    kernel: usize,
}

impl ConvShape {
    fn of(x: &FlexTensor, weight: &FlexTensor) -> Self {
        let [batch, channels_in, size, width] = x.shape().dims();
        let [channels_out, weight_in, kernel, kernel_w] = weight.shape().dims();
        assert!(
            size == width && kernel == kernel_w && kernel % 2 == 1 && weight_in == channels_in,
            "square_conv takes square boards and odd square kernels over all input channels: \
             x {:?}, weight {:?}",
            x.shape(),
            weight.shape()
        );
        Self { batch, channels_in, channels_out, size, kernel }
    }

    fn area(self) -> usize {
        self.size * self.size
    }

    /// Columns of the products: every square of every position.
    fn columns(self) -> usize {
        self.batch * self.area()
    }

    /// Rows of the `im2col` matrix: `k²` shifted copies of each input channel.
    fn taps(self) -> usize {
        self.channels_in * self.kernel * self.kernel
    }

    /// `[batch][channel][square]` to `[channel][batch · square]`.
    fn channel_major(self, x: &[f32], channels: usize) -> Vec<f32> {
        let area = self.area();
        let mut out = zeros(x.len());
        out.par_chunks_exact_mut(self.columns().max(1)).enumerate().for_each(|(channel, row)| {
            for (position, squares) in row.chunks_exact_mut(area.max(1)).enumerate() {
                let from = (position * channels + channel) * area;
                squares.copy_from_slice(&x[from..from + area]);
            }
        });
        out
    }

    /// `[channel][batch · square]` back to `[batch][channel][square]`.
    fn batch_major(self, x: &[f32], channels: usize) -> Vec<f32> {
        let area = self.area();
        let mut out = zeros(x.len());
        out.par_chunks_exact_mut((channels * area).max(1)).enumerate().for_each(|(position, planes)| {
            for (channel, squares) in planes.chunks_exact_mut(area.max(1)).enumerate() {
                let from = channel * self.columns() + position * area;
                squares.copy_from_slice(&x[from..from + area]);
            }
        });
        out
    }

    /// The `im2col` matrix of channel-major `x`: row `(channel · k + dy) · k + dx`, column
    /// `(position, rank, file)`, holds `x` at `(rank + dy − k/2, file + dx − k/2)` or 0 off the
    /// board. The weight `[c_out][c_in][dy][dx]` is the matching `[c_out] x [taps]` matrix.
    fn im2col(self, x: Vec<f32>) -> Vec<f32> {
        // A 1x1 kernel's only tap is the input itself (the heads' convolutions).
        if self.kernel == 1 {
            return x;
        }
        let (n, k) = (self.columns(), self.kernel);
        let mut cols = zeros(self.taps() * n);
        cols.par_chunks_exact_mut((k * k * n).max(1)).zip(x.par_chunks_exact(n.max(1))).for_each(|(rows, source)| {
            for (tap, row) in rows.chunks_exact_mut(n.max(1)).enumerate() {
                for (to, from) in self.stretches(tap) {
                    row[to].copy_from_slice(&source[from]);
                }
            }
        });
        cols
    }

    /// The inverse of [`Self::im2col`]: the gradient of each input square is the sum of the
    /// gradients of the `k²` entries it was copied to.
    fn col2im(self, cols: Vec<f32>) -> Vec<f32> {
        if self.kernel == 1 {
            return cols;
        }
        let (n, k) = (self.columns(), self.kernel);
        let mut x = zeros(self.channels_in * n);
        x.par_chunks_exact_mut(n.max(1)).zip(cols.par_chunks_exact((k * k * n).max(1))).for_each(|(target, rows)| {
            for (tap, row) in rows.chunks_exact(n.max(1)).enumerate() {
                for (from, to) in self.stretches(tap) {
                    target[to].iter_mut().zip(&row[from]).for_each(|(t, g)| *t += g);
                }
            }
        });
        x
    }

    /// The stretches of one rank where row `tap = dy · k + dx` of the `im2col` matrix copies
    /// its channel: `(range in the row, range in the channel)`, with `row[rank][file] =
    /// channel[rank + dy − k/2][file + dx − k/2]` on the board and zero elsewhere.
    fn stretches(self, tap: usize) -> impl Iterator<Item = (Range<usize>, Range<usize>)> {
        let (size, area, pad) = (self.size, self.area(), self.kernel / 2);
        let (dy, dx) = (tap / self.kernel, tap % self.kernel);
        let (to_file, from_file) = if dx >= pad { (0, dx - pad) } else { (pad - dx, 0) };
        let len = size - (to_file + from_file).min(size);
        (0..self.batch).flat_map(move |position| {
            (0..size).filter_map(move |rank| {
                let from_rank = (rank + dy).checked_sub(pad).filter(|&r| r < size)?;
                let to = position * area + rank * size + to_file;
                let from = position * area + from_rank * size + from_file;
                Some((to..to + len, from..from + len))
            })
        })
    }

    /// The convolution of batch-major `x` (`[position][c_in][square]`) with `weight`
    /// (`[c_out][c_in][k][k]`), batch-major: by Winograd's F(4x4, 3x3) for 3x3 kernels (3.4
    /// times fewer multiplications), else as `weight · im2col(x)`.
    fn forward(self, x: &[f32], weight: &[f32]) -> Vec<f32> {
        if self.kernel == 3 {
            return winograd_conv(x, weight, [self.channels_in, self.channels_out], self.size, self.batch);
        }
        let cols = self.im2col(self.channel_major(x, self.channels_in));
        let mut out = zeros(self.channels_out * self.columns());
        let dims = [self.channels_out, self.taps(), self.columns()];
        matmul_t(weight, &cols, &mut out, dims, [false, false], false, Threads::Pool);
        self.batch_major(&out, self.channels_out)
    }

    /// The input gradient of batch-major `grad`, batch-major. It is the convolution of the
    /// output gradient with each kernel turned half a circle and `c_in` and `c_out` swapped, a
    /// 3x3 convolution again for 3x3 kernels; else `col2im(weightᵀ · grad)`.
    fn input_grad(self, weight: &[f32], grad: &[f32]) -> Vec<f32> {
        if self.kernel == 3 {
            let (c_in, c_out) = (self.channels_in, self.channels_out);
            let mut turned = vec![0.0; weight.len()];
            for (pair, kernel) in weight.chunks_exact(9).enumerate() {
                let (out, input) = (pair / c_in, pair % c_in);
                let to = (input * c_out + out) * 9;
                turned[to..to + 9].iter_mut().zip(kernel.iter().rev()).for_each(|(t, w)| *t = *w);
            }
            return winograd_conv(grad, &turned, [c_out, c_in], self.size, self.batch);
        }
        let grad = self.channel_major(grad, self.channels_out);
        let mut cols = zeros(self.taps() * self.columns());
        let dims = [self.taps(), self.channels_out, self.columns()];
        matmul_t(weight, &grad, &mut cols, dims, [true, false], false, Threads::Pool);
        self.batch_major(&self.col2im(cols), self.channels_in)
    }

    /// The weight gradient `[c_out][c_in][k][k]` from batch-major `x` and `grad`, summed over
    /// slices of [`SLICE`] positions that run side by side, each on one thread (one product over
    /// the whole batch reduces over 15 488 columns for b4c48 at batch 128, which `gemm` splits
    /// badly): in Winograd's transform domain for 3x3 kernels ([`winograd::point_grads`]), else
    /// `grad · im2col(x)ᵀ`.
    fn weight_grad(self, x: &[f32], grad: &[f32]) -> Vec<f32> {
        let (c_in, c_out, area) = (self.channels_in, self.channels_out, self.area());
        if self.kernel == 3 {
            let parts: Vec<Vec<f32>> = x
                .par_chunks((SLICE * c_in * area).max(1))
                .zip(grad.par_chunks((SLICE * c_out * area).max(1)))
                .map(|(x, grad)| {
                    let tiling = Tiling::new(self.size, x.len() / (c_in * area).max(1));
                    winograd::point_grads(
                        &Bordered::from_planes(x, c_in, tiling),
                        &Bordered::from_planes(grad, c_out, tiling),
                    )
                })
                .collect();
            return winograd::kernel_grads(&sum(parts, winograd::POINTS * c_out * c_in), c_out, c_in);
        }
        let parts: Vec<Vec<f32>> = x
            .par_chunks((SLICE * c_in * area).max(1))
            .zip(grad.par_chunks((SLICE * c_out * area).max(1)))
            .map(|(x, grad)| {
                let part = Self { batch: x.len() / (c_in * area).max(1), ..self };
                let cols = part.im2col(part.channel_major(x, c_in));
                let grad = part.channel_major(grad, c_out);
                let mut dw = vec![0.0; c_out * part.taps()];
                let dims = [c_out, part.columns(), part.taps()];
                matmul_t(&grad, &cols, &mut dw, dims, [false, true], false, Threads::One);
                dw
            })
            .collect();
        sum(parts, c_out * self.taps())
    }
}

/// The sum of equally long `parts` (`len` zeros when there are none).
fn sum(parts: Vec<Vec<f32>>, len: usize) -> Vec<f32> {
    let mut total = vec![0.0; len];
    for part in parts {
        total.iter_mut().zip(part).for_each(|(t, p)| *t += p);
    }
    total
}

/// Positions per Winograd slice: what [`crate::packed`] keeps in the caches at inference.
const SLICE: usize = crate::backend::INFERENCE_CHUNK;

/// A 3x3 "same" convolution of batch-major `x` (`[position][c_in][square]`) by Winograd's
/// F(4x4, 3x3) of [`crate::winograd`], batch-major, in slices of [`SLICE`] positions side by
/// side on the pool's threads.
fn winograd_conv(x: &[f32], weight: &[f32], [c_in, c_out]: [usize; 2], size: usize, batch: usize) -> Vec<f32> {
    let area = size * size;
    let conv = WinogradConv::new(weight, &vec![0.0; c_out], c_out, c_in);
    let mut out = zeros(batch * c_out * area);
    out.par_chunks_mut((SLICE * c_out * area).max(1)).zip(x.par_chunks((SLICE * c_in * area).max(1))).for_each(
        |(out, x)| {
            let positions = x.len() / (c_in * area).max(1);
            let x = Bordered::from_planes(x, c_in, Tiling::new(size, positions));
            conv.apply(&x, None, false, Threads::One, &mut Scratch::default()).write_planes(out);
        },
    );
    out
}

#[cfg(test)]
mod tests {
    use burn::nn::conv::Conv2dConfig;
    use burn::tensor::Distribution;

    use burn::module::{Module, ModuleVisitor, Param};

    use super::*;
    use crate::train::{TrainBatch, TrainConfig, Trainer};
    use crate::{TaflNet, TaflNetConfig, training_device};

    fn max_diff<const D: usize>(a: Tensor<D>, b: Tensor<D>) -> f32 {
        (a - b).abs().max().into_scalar::<f32>()
    }

    /// Forward, input and weight gradients of `conv2d` on this path and on Burn's.
    fn both_ways(conv: &Conv2d, x: &Tensor<4>, grad: &Tensor<4>) -> [(Tensor<4>, Tensor<4>, Tensor<4>); 2] {
        [true, false].map(|enabled| {
            set_enabled(enabled);
            let x = x.clone().detach().require_grad();
            let out = conv2d(conv, x.clone());
            let grads = (out.clone() * grad.clone()).sum().backward();
            let dx = x.grad(&grads).expect("x requires its gradient");
            let dw = conv.weight.val().grad(&grads).expect("the weight requires its gradient");
            set_enabled(true);
            (out.detach().inner(), dx, dw)
        })
    }

    #[test]
    fn equals_burns_convolution_and_its_gradients() {
        let device = training_device();
        assert!(applies_to(&device));
        for (batch, c_in, c_out, size, kernel, bias) in
            [(3, 10, 48, 11, 3, false), (2, 48, 32, 11, 1, true), (4, 5, 7, 7, 3, true), (1, 2, 3, 1, 3, false)]
        {
            let conv = Conv2dConfig::new([c_in, c_out], [kernel, kernel])
                .with_padding(PaddingConfig2d::Same)
                .with_bias(bias)
                .init(&device);
            let x = Tensor::<4>::random([batch, c_in, size, size], Distribution::Normal(0.0, 1.0), &device);
            let grad = Tensor::<4>::random([batch, c_out, size, size], Distribution::Normal(0.0, 1.0), &device);
            let [(out, dx, dw), (out_burn, dx_burn, dw_burn)] = both_ways(&conv, &x, &grad);
            let case = format!("batch {batch}, {c_in} -> {c_out}, {size}x{size}, kernel {kernel}");
            assert!(max_diff(out, out_burn) < 1e-4, "output, {case}");
            assert!(max_diff(dx, dx_burn) < 1e-4, "input gradient, {case}");
            // A weight gradient here sums up to 363 products of normal values and reaches 65,
            // where an f32 step is 8e-6: both sums round, in different orders (measured: 1.2e-4
            // apart, 2e-6 of the largest; the Winograd sums against f64 are checked in
            // `winograd`), so beyond 1e-4 the bound grows with the gradient.
            let dw_max = dw_burn.clone().abs().max().into_scalar::<f32>();
            let dw_diff = max_diff(dw, dw_burn);
            assert!(dw_diff < 1e-4_f32.max(1e-5 * dw_max), "weight gradient, {case}: {dw_diff} of {dw_max}");
        }
    }

    fn random_batch(config: &TaflNetConfig, batch: usize, device: &Device) -> TrainBatch {
        let (size, moves) = (config.board_size, config.policy_len());
        let policy = burn::tensor::activation::softmax(
            Tensor::<2>::random([batch, moves], Distribution::Normal(0.0, 1.0), device),
            1,
        );
        TrainBatch {
            planes: Tensor::random([batch, config.input_planes, size, size], Distribution::Default, device),
            policy,
            legal: Tensor::ones([batch, moves], device),
            value: Tensor::random([batch], Distribution::Uniform(-1.0, 1.0), device),
            ownership: None,
        }
    }

    /// Every weight and batch-norm statistic of `net`, tensor by tensor in visiting order.
    fn parameters(net: &TaflNet) -> Vec<Vec<f32>> {
        struct Collect(Vec<Vec<f32>>);
        impl ModuleVisitor for Collect {
            fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
                self.0.push(param.val().into_data().try_to_vec::<f32>().unwrap_or_default());
            }
        }
        let mut all = Collect(Vec::new());
        net.visit(&mut all);
        all.0
    }

    /// `steps` training steps from `net` on `batch`, with or without this path: the losses and
    /// the net they leave.
    fn train(net: &TaflNet, config: TrainConfig, batch: &TrainBatch, steps: usize, fast: bool) -> (Vec<f32>, TaflNet) {
        set_enabled(fast);
        let mut trainer = Trainer::new(net.clone(), config);
        let losses = (0..steps).map(|_| trainer.step(batch).total).collect();
        set_enabled(true);
        (losses, trainer.model())
    }

    /// One plain SGD step with a learning rate of 1 from `net`, with or without this path: the
    /// loss, and each tensor's move (its gradient, and the running statistics' update).
    fn gradient_step(net: &TaflNet, batch: &TrainBatch, fast: bool) -> (f32, Vec<Vec<f32>>) {
        let sgd = TrainConfig::new()
            .with_optimizer(crate::train::OptimizerKind::Sgd)
            .with_momentum(0.0)
            .with_weight_decay(0.0)
            .with_learning_rate(1.0);
        let (losses, after) = train(net, sgd, batch, 1, fast);
        let moves = parameters(net)
            .iter()
            .zip(parameters(&after))
            .map(|(before, after)| before.iter().zip(after).map(|(b, a)| a - b).collect())
            .collect();
        (losses[0], moves)
    }

    fn norm(values: impl Iterator<Item = f32>) -> f32 {
        values.map(|v| v * v).sum::<f32>().sqrt()
    }

    #[test]
    fn a_whole_nets_gradients_equal_burns() {
        let config = TaflNetConfig::new(11, crate::INPUT_PLANES, 2, 16).with_global_pool_interval(2);
        let device = training_device();
        device.seed(7);
        let net = config.init(&crate::device());
        let batch = random_batch(&config, 6, &device);
        let [(fast_loss, fast), (loss, stock)] = [true, false].map(|fast| gradient_step(&net, &batch, fast));
        let moved = stock.iter().flatten().fold(0.0, |m, v| v.abs().max(m));
        assert!(moved > 1e-3, "the step moved no weight ({moved})");
        assert!((fast_loss - loss).abs() <= 1e-5 * loss.abs(), "loss {fast_loss} against Burn's {loss}");
        for (i, (f, s)) in fast.iter().flatten().zip(stock.iter().flatten()).enumerate() {
            assert!((f - s).abs() < 1e-4, "parameter {i}: {f} against Burn's {s}");
        }
    }

    #[test]
    fn a_fixed_batch_loss_curve_matches_over_200_steps() {
        let config = TaflNetConfig::new(7, crate::INPUT_PLANES, 1, 8).with_global_pool_interval(1);
        let device = training_device();
        device.seed(7);
        let net = config.init(&crate::device());
        let batch = random_batch(&config, 8, &device);
        let adamw = TrainConfig::new().with_learning_rate(0.003);
        // At every net along Burn's AdamW curve, this path's loss and gradients are Burn's.
        // Two free-running curves cannot be held that close, nor every weight's gradient to 1e-4:
        // once trained, a few activations sit within rounding of the ReLU's kink, the two orders
        // of the sums (which also change with the threads free) put one on either side, and that
        // one square's gradient reaches every weight upstream. Measured here: a few steps of 200,
        // up to 2.2% of the whole gradient, 13% of a small batch-norm bias's. Adam then moves a
        // weight by about the learning rate whatever the size of its gradient; CI, on other SIMD
        // kernels, saw two free curves 1e-5 apart at step 7.
        let mut stock = Trainer::new(net.clone(), adamw.clone());
        let mut curve = Vec::new();
        for step in 0..200 {
            let model = stock.model();
            let [(fast_loss, fast), (loss, burn)] = [true, false].map(|fast| gradient_step(&model, &batch, fast));
            assert!(
                (fast_loss - loss).abs() <= 1e-5 * loss.abs(),
                "step {step}: loss {fast_loss} against Burn's {loss}"
            );
            let error = norm(fast.iter().flatten().zip(burn.iter().flatten()).map(|(f, s)| f - s));
            let size = norm(burn.iter().flatten().copied());
            assert!(error <= 0.1 * size, "step {step}: the gradient is off by {error} of {size}");
            set_enabled(false);
            stock.step(&batch);
            set_enabled(true);
            curve.push(loss);
        }
        // The random policy targets keep the loss above their entropy (about 6.5 here).
        assert!(curve[199] < curve[0] - 0.3, "the net learned nothing: {} to {}", curve[0], curve[199]);
        // Left to itself, this path learns as much from the batch.
        let (fast, _) = train(&net, adamw, &batch, 200, true);
        let (drop, fast_drop) = (curve[0] - curve[199], fast[0] - fast[199]);
        assert!((fast_drop - drop).abs() < 0.25 * drop, "the loss fell by {fast_drop} against Burn's {drop}");
    }

    #[test]
    fn an_empty_batch_gives_empty_outputs_and_zero_weight_gradients() {
        for kernel in [1, 3] {
            let shape = ConvShape { batch: 0, channels_in: 4, channels_out: 5, size: 7, kernel };
            let weight = vec![0.5; 5 * 4 * kernel * kernel];
            assert!(shape.forward(&[], &weight).is_empty());
            assert!(shape.input_grad(&weight, &[]).is_empty());
            assert_eq!(shape.weight_grad(&[], &[]), vec![0.0; weight.len()]);
        }
    }

    #[test]
    fn off_the_switch_and_off_autodiff_it_is_burns() {
        set_enabled(false);
        assert!(!applies_to(&training_device()));
        set_enabled(true);
        assert!(!applies_to(&crate::device()));
    }
}

#[cfg(test)]
mod timing {
    use std::time::Instant;

    use burn::nn::PaddingConfig2d;
    use burn::nn::conv::Conv2dConfig;
    use burn::tensor::Distribution;

    use super::*;

    #[test]
    #[ignore = "a measurement, not a check"]
    fn time_one_layer() {
        let device = crate::training_device();
        let (b, c, n) = (128, 48, 11);
        let conv = Conv2dConfig::new([c, c], [3, 3]).with_padding(PaddingConfig2d::Same).with_bias(false).init(&device);
        let x0 = Tensor::<4>::random([b, c, n, n], Distribution::Normal(0.0, 1.0), &device);
        let g = Tensor::<4>::random([b, c, n, n], Distribution::Normal(0.0, 1.0), &device);
        for enabled in [false, true, false, true] {
            set_enabled(enabled);
            let t = Instant::now();
            for _ in 0..10 {
                let x = x0.clone().detach().require_grad();
                let out = conv2d(&conv, x.clone());
                let grads = (out * g.clone()).sum().backward();
                let _ = x.grad(&grads).unwrap().sum().into_scalar::<f32>();
            }
            println!("enabled {enabled}: {:.2} ms per layer", t.elapsed().as_secs_f64() * 100.0);
        }
        let shape = ConvShape { batch: b, channels_in: c, channels_out: c, size: n, kernel: 3 };
        let x: Vec<f32> = (0..b * c * n * n).map(|i| (i % 7) as f32).collect();
        let w: Vec<f32> = (0..c * c * 9).map(|i| (i % 5) as f32).collect();
        let t = Instant::now();
        let xc = shape.channel_major(&x, c);
        println!("channel_major {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let cols = shape.im2col(xc);
        println!("im2col {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let _ = shape.col2im(cols);
        println!("col2im {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let out = shape.forward(&x, &w);
        println!("forward {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let _ = shape.input_grad(&w, &out);
        println!("input_grad {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let _ = shape.weight_grad(&x, &out);
        println!("weight_grad {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let v = values(&tensor(x.clone(), [b, c, n, n])).len();
        println!("tensor+values {:.2} ms {v}", t.elapsed().as_secs_f64() * 1e3);
    }
}

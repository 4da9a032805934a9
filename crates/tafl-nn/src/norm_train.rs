//! The net's batch norms while it trains, forward and backward, as a backend extension beside
//! [`crate::conv_train`].
//!
//! Why: Burn's batch norm gathers each channel's values by swapping the batch and channel
//! dimensions and copying the tensor into that order, twice on the way forward (mean, variance)
//! and twice on the way back; on `flex` those copies were about a tenth of a b4c48 training
//! step (`perf` on `tafl bench nn --train`). Here each channel's statistics and gradients are
//! summed where the values lie, `[batch][channel][square]`, one channel per task.
//!
//! The ReLU that follows a batch norm, and at the end of a residual block the sum with the
//! block's input before it, are done in the norm's own pass and backward ([`batch_norm_relu`],
//! [`batch_norm_add_relu`]): Burn's would each be one more pass, on the calling thread alone.
//!
//! The same arithmetic as Burn's `batch_norm_train` and its backward (biased variance, the
//! running statistics updated with the module's momentum); only an autodiff device on `flex`
//! takes this path, as for [`crate::conv_train`], and the tests check it against Burn's.

use std::borrow::Cow;

use burn::backend::autodiff::Autodiff;
use burn::backend::autodiff::NodeId;
use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::flex::FlexTensor;
use burn::backend::tensor::FloatTensor;
use burn::backend::{Backend, Dispatch, Flex, TensorMetadata, backend_extension};
use burn::nn::BatchNorm;
use burn::tensor::Tensor;
use rayon::prelude::*;

use crate::conv_train::{applies_to, tensor, values, zeros};

/// `norm.forward(x)` for a module in training mode: normalised with the batch's statistics,
/// which also move the running statistics by the module's momentum. Through this module's
/// sums where [`applies_to`] the device, Burn's otherwise.
///
/// # Shapes
/// - `x`: `[batch, channels, size, size]`, and so is the output
pub fn batch_norm(norm: &BatchNorm, x: Tensor<4>) -> Tensor<4> {
    if !applies_to(&x.device()) {
        return norm.forward(x);
    }
    normalise(norm, x, false)
}

/// `relu(norm.forward(x))` as [`batch_norm`], the ReLU in the same pass over the values and
/// its mask in the same backward: Burn's ReLU and its backward each run as one more pass on the
/// calling thread alone (in `perf`, a fifth of that thread's time in a b4c48 training step).
///
/// # Shapes
/// - `x`: `[batch, channels, size, size]`, and so is the output
pub fn batch_norm_relu(norm: &BatchNorm, x: Tensor<4>) -> Tensor<4> {
    if !applies_to(&x.device()) {
        return burn::tensor::activation::relu(norm.forward(x));
    }
    normalise(norm, x, true)
}

/// `relu(residual + norm.forward(x))`, the end of a residual block, as [`batch_norm_relu`]
/// with the residual added in the same pass; its gradient is the ReLU's masked gradient.
///
/// # Shapes
/// - `x`, `residual`: `[batch, channels, size, size]`, and so is the output
pub fn batch_norm_add_relu(norm: &BatchNorm, x: Tensor<4>, residual: Tensor<4>) -> Tensor<4> {
    if !applies_to(&x.device()) {
        return burn::tensor::activation::relu(residual + norm.forward(x));
    }
    let moments = batch_moments(norm, &x);
    Tensor::<4>::from_dispatch(<Dispatch as ChannelNorm>::channel_norm_add_relu(
        x.into_dispatch(),
        norm.gamma.val().into_dispatch(),
        norm.beta.val().into_dispatch(),
        moments.into_dispatch(),
        residual.into_dispatch(),
        norm.epsilon,
    ))
}

/// [`batch_norm`] on this module's path, followed by a ReLU when `relu`.
fn normalise(norm: &BatchNorm, x: Tensor<4>, relu: bool) -> Tensor<4> {
    let moments = batch_moments(norm, &x);
    Tensor::<4>::from_dispatch(<Dispatch as ChannelNorm>::channel_norm(
        x.into_dispatch(),
        norm.gamma.val().into_dispatch(),
        norm.beta.val().into_dispatch(),
        moments.into_dispatch(),
        norm.epsilon,
        relu,
    ))
}

/// The batch's statistics `[2, channels]` of `x`, once for the running averages (moved by the
/// module's momentum here) and for the norm and its backward.
fn batch_moments(norm: &BatchNorm, x: &Tensor<4>) -> Tensor<2> {
    let [channels] = norm.gamma.dims();
    // The batch's statistics once, for the running averages and for the norm and its backward.
    let moments = Tensor::<2>::from_dispatch(<Dispatch as ChannelNorm>::channel_moments(
        x.clone().detach().inner().into_dispatch(),
    ));
    let moments = Tensor::<2>::from_inner(moments);
    let [mean, variance] = [0, 1].map(|row| moments.clone().slice(row..row + 1).reshape([channels]));
    let momentum = norm.momentum as f32;
    let device = x.device();
    let update =
        |state: Tensor<1>, batch: Tensor<1>| (state.to_device(&device) * (1.0 - momentum) + batch * momentum).detach();
    norm.running_mean.update(update(norm.running_mean.value_sync(), mean));
    norm.running_var.update(update(norm.running_var.value_sync(), variance));
    moments
}

/// Batch normalisation with the batch's own statistics: `x [batch, channels, ...]`, `gamma`
/// and `beta` `[channels]`.
#[backend_extension(Autodiff, Flex)]
pub trait ChannelNorm: Backend {
    /// `(x − mean) / √(variance + epsilon) · gamma + beta`, each channel with its own mean and
    /// biased variance over the batch and the board: `moments`, as [`Self::channel_moments`]
    /// gives them for `x` (a constant to autodiff: the backward accounts for them itself).
    /// With `relu`, negative values (and zeros) are 0.
    fn channel_norm(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        moments: FloatTensor<Self>,
        epsilon: f64,
        relu: bool,
    ) -> FloatTensor<Self>;

    /// `relu(residual + channel_norm(x, …))`.
    fn channel_norm_add_relu(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        moments: FloatTensor<Self>,
        residual: FloatTensor<Self>,
        epsilon: f64,
    ) -> FloatTensor<Self>;

    /// Each channel's mean and biased variance, `[2, channels]` (not differentiated).
    fn channel_moments(x: FloatTensor<Self>) -> FloatTensor<Self>;
}

impl ChannelNorm for Flex {
    fn channel_norm(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        moments: FloatTensor<Self>,
        epsilon: f64,
        relu: bool,
    ) -> FloatTensor<Self> {
        norm_pass([&x, &gamma, &beta, &moments], epsilon, if relu { Then::Relu } else { Then::Nothing })
    }

    fn channel_norm_add_relu(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        moments: FloatTensor<Self>,
        residual: FloatTensor<Self>,
        epsilon: f64,
    ) -> FloatTensor<Self> {
        norm_pass([&x, &gamma, &beta, &moments], epsilon, Then::AddRelu(&values(&residual)))
    }

    fn channel_moments(x: FloatTensor<Self>) -> FloatTensor<Self> {
        let layout = Layout::of(&x);
        let x = values(&x);
        let (mean, variance): (Vec<f32>, Vec<f32>) = (0..layout.channels)
            .into_par_iter()
            .map(|c| layout.moments(&x, c))
            .map(|(m, v)| (m as f32, v as f32))
            .unzip();
        tensor([mean, variance].concat(), [2, layout.channels])
    }
}

/// The forward pass of a batch norm on `flex`: `x` normalised with `moments`, scaled by `gamma`,
/// shifted by `beta`, then what `then` says.
fn norm_pass([x, gamma, beta, moments]: [&FlexTensor; 4], epsilon: f64, then: Then<'_>) -> FlexTensor {
    let layout = Layout::of(x);
    let stats = layout.statistics(&values(moments), epsilon);
    tensor(layout.forward(&values(x), &values(gamma), &values(beta), &stats, then), x.shape())
}

impl<C: CheckpointStrategy> ChannelNorm for Autodiff<Flex, C> {
    fn channel_norm(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        moments: FloatTensor<Self>,
        epsilon: f64,
        relu: bool,
    ) -> FloatTensor<Self> {
        let backward = ChannelNormBackward { epsilon };
        let moments = moments.into_primitive();
        match backward.prepare::<C>([x.node(), gamma.node(), beta.node()]).compute_bound().stateful() {
            OpsKind::Tracked(prep) => {
                let (x, gamma) = (x.into_primitive(), gamma.into_primitive());
                let out =
                    Flex::channel_norm(x.clone(), gamma.clone(), beta.into_primitive(), moments.clone(), epsilon, relu);
                // The output (shared, not copied) is the ReLU's mask.
                prep.finish((x, gamma, moments, relu.then(|| out.clone())), out)
            }
            OpsKind::UnTracked(prep) => prep.finish(Flex::channel_norm(
                x.into_primitive(),
                gamma.into_primitive(),
                beta.into_primitive(),
                moments,
                epsilon,
                relu,
            )),
        }
    }

    fn channel_norm_add_relu(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        moments: FloatTensor<Self>,
        residual: FloatTensor<Self>,
        epsilon: f64,
    ) -> FloatTensor<Self> {
        let backward = ResidualNormBackward { epsilon };
        let moments = moments.into_primitive();
        let nodes = [x.node(), gamma.node(), beta.node(), residual.node()];
        match backward.prepare::<C>(nodes).compute_bound().stateful() {
            OpsKind::Tracked(prep) => {
                let (x, gamma) = (x.into_primitive(), gamma.into_primitive());
                let (beta, residual) = (beta.into_primitive(), residual.into_primitive());
                let out =
                    Flex::channel_norm_add_relu(x.clone(), gamma.clone(), beta, moments.clone(), residual, epsilon);
                prep.finish((x, gamma, moments, out.clone()), out)
            }
            OpsKind::UnTracked(prep) => prep.finish(Flex::channel_norm_add_relu(
                x.into_primitive(),
                gamma.into_primitive(),
                beta.into_primitive(),
                moments,
                residual.into_primitive(),
                epsilon,
            )),
        }
    }

    fn channel_moments(x: FloatTensor<Self>) -> FloatTensor<Self> {
        // The batch's statistics, a constant to autodiff: `channel_norm`'s backward accounts for
        // them itself.
        let node = x.node();
        NoGradient.prepare::<C>([node]).compute_bound().stateless(Flex::channel_moments(x.into_primitive()))
    }
}

#[derive(Debug)]
struct NoGradient;

impl Backward<Flex, 1> for NoGradient {
    type State = ();

    fn backward(self, _ops: Ops<(), 1>, _grads: &mut Gradients, _checkpointer: &mut Checkpointer) {}
}

#[derive(Debug)]
struct ChannelNormBackward {
    epsilon: f64,
}

impl Backward<Flex, 3> for ChannelNormBackward {
    /// The input, gamma, the batch's moments `[2, channels]` and, after a ReLU, the output.
    type State = (FlexTensor, FlexTensor, FlexTensor, Option<FlexTensor>);

    fn backward(self, ops: Ops<Self::State, 3>, grads: &mut Gradients, _checkpointer: &mut Checkpointer) {
        let grad = grads.consume::<Flex>(&ops.node);
        let (x, gamma, moments, relu_out) = ops.state;
        let grad = match &relu_out {
            Some(out) => Cow::Owned(relu_backward(&values(out), &values(&grad))),
            None => values(&grad),
        };
        let nodes = ops.parents.map(|node| node.map(|n| n.id));
        register_norm_grads(self.epsilon, nodes, [&x, &gamma, &moments], &grad, grads);
    }
}

#[derive(Debug)]
struct ResidualNormBackward {
    epsilon: f64,
}

impl Backward<Flex, 4> for ResidualNormBackward {
    /// The input, gamma, the batch's moments `[2, channels]` and the output.
    type State = (FlexTensor, FlexTensor, FlexTensor, FlexTensor);

    fn backward(self, ops: Ops<Self::State, 4>, grads: &mut Gradients, _checkpointer: &mut Checkpointer) {
        let [node_x, node_gamma, node_beta, node_residual] = ops.parents;
        let grad = grads.consume::<Flex>(&ops.node);
        let (x, gamma, moments, out) = ops.state;
        let masked = relu_backward(&values(&out), &values(&grad));
        let nodes = [node_x, node_gamma, node_beta].map(|node| node.map(|n| n.id));
        register_norm_grads(self.epsilon, nodes, [&x, &gamma, &moments], &masked, grads);
        if let Some(node) = node_residual {
            grads.register::<Flex>(node.id, tensor(masked, x.shape()));
        }
    }
}

/// The gradients of a batch norm's input, gamma and beta (where their `nodes` ask for them)
/// from the gradient `grad` of its output (before any ReLU or residual).
fn register_norm_grads(
    epsilon: f64,
    nodes: [Option<NodeId>; 3],
    [x, gamma, moments]: [&FlexTensor; 3],
    grad: &[f32],
    grads: &mut Gradients,
) {
    let [node_x, node_gamma, node_beta] = nodes;
    let layout = Layout::of(x);
    let stats = layout.statistics(&values(moments), epsilon);
    let (dx, dgamma, dbeta) = layout.backward(&values(x), &values(gamma), grad, &stats);
    let channels = |v: Vec<f32>| tensor(v, [layout.channels]);
    if let Some(id) = node_x {
        grads.register::<Flex>(id, tensor(dx, x.shape()));
    }
    if let Some(id) = node_gamma {
        grads.register::<Flex>(id, channels(dgamma));
    }
    if let Some(id) = node_beta {
        grads.register::<Flex>(id, channels(dbeta));
    }
}

/// The gradient through a ReLU: `grad` where its output `out` is positive, else 0 (as Burn's
/// `relu_backward`), in parallel.
fn relu_backward(out: &[f32], grad: &[f32]) -> Vec<f32> {
    let mut masked = zeros(grad.len());
    const CHUNK: usize = 1 << 14;
    masked.par_chunks_mut(CHUNK).zip(out.par_chunks(CHUNK)).zip(grad.par_chunks(CHUNK)).for_each(|((m, out), grad)| {
        m.iter_mut().zip(out).zip(grad).for_each(|((m, &o), &g)| *m = if o <= 0.0 { 0.0 } else { g });
    });
    masked
}

/// `<=`, not `max`: a NaN stays NaN, as through Burn's ReLU.
#[inline(always)]
fn relu(y: f32) -> f32 {
    if y <= 0.0 { 0.0 } else { y }
}

/// What a batch norm's pass does after normalising: nothing, a ReLU, or adding a residual of
/// the same shape and then a ReLU.
#[derive(Clone, Copy)]
enum Then<'a> {
    Nothing,
    Relu,
    AddRelu(&'a [f32]),
}

/// Where each channel's values lie in a `[batch, channels, ...]` tensor: `batch` runs of
/// `area` values, `channels · area` apart.
#[derive(Clone, Copy, Debug)]
struct Layout {
    batch: usize,
    channels: usize,
    area: usize,
}

impl Layout {
    fn of(x: &FlexTensor) -> Self {
        let dims = x.shape().dims::<4>();
        Self { batch: dims[0], channels: dims[1], area: dims[2] * dims[3] }
    }

    /// The values of `channel`, run by run.
    fn runs(self, x: &[f32], channel: usize) -> impl Iterator<Item = &[f32]> {
        (0..self.batch).map(move |b| &x[(b * self.channels + channel) * self.area..][..self.area])
    }

    /// Values per channel, at least 1 (an empty batch has mean 0 and variance 0).
    fn count(self) -> f64 {
        (self.batch * self.area).max(1) as f64
    }

    /// Mean and biased variance of `channel` in two passes, each run summed in `f64` lanes
    /// ([`run_sum`]), then the runs.
    fn moments(self, x: &[f32], channel: usize) -> (f64, f64) {
        let sum: f64 = self.runs(x, channel).map(|run| run_sum(run, run, |v, _| f64::from(v))).sum();
        let mean = sum / self.count();
        let squares: f64 =
            self.runs(x, channel).map(|run| run_sum(run, run, |v, _| (f64::from(v) - mean).powi(2))).sum();
        (mean, squares / self.count())
    }

    /// Per channel: the mean and `1 / √(variance + epsilon)`, from the moments `[2, channels]`.
    fn statistics(self, moments: &[f32], epsilon: f64) -> Vec<(f32, f32)> {
        let (mean, variance) = moments.split_at(self.channels);
        mean.iter().zip(variance).map(|(&m, &v)| (m, (1.0 / (f64::from(v) + epsilon).sqrt()) as f32)).collect()
    }

    fn forward(self, x: &[f32], gamma: &[f32], beta: &[f32], stats: &[(f32, f32)], then: Then<'_>) -> Vec<f32> {
        let (chunk, area) = ((self.channels * self.area).max(1), self.area.max(1));
        let mut out = zeros(x.len());
        out.par_chunks_mut(chunk).zip(x.par_chunks(chunk)).enumerate().for_each(|(position, (out, x))| {
            for (c, (out, x)) in out.chunks_exact_mut(area).zip(x.chunks_exact(area)).enumerate() {
                let (mean, inv_std) = stats[c];
                let (scale, shift) = (gamma[c] * inv_std, beta[c] - mean * gamma[c] * inv_std);
                let values = out.iter_mut().zip(x);
                match then {
                    Then::Nothing => values.for_each(|(o, v)| *o = v * scale + shift),
                    Then::Relu => values.for_each(|(o, v)| *o = relu(v * scale + shift)),
                    Then::AddRelu(residual) => {
                        let skip = &residual[position * chunk + c * area..][..area];
                        values.zip(skip).for_each(|((o, v), s)| *o = relu(s + (v * scale + shift)));
                    }
                }
            }
        });
        out
    }

    /// `(dx, dgamma, dbeta)` from the output gradient `grad`: with x̂ the normalised input,
    /// `dbeta = Σ grad`, `dgamma = Σ grad · x̂` and `dx = gamma / σ · (grad − dbeta / n − x̂ ·
    /// dgamma / n)`, each sum over the channel's `n` values.
    fn backward(self, x: &[f32], gamma: &[f32], grad: &[f32], stats: &[(f32, f32)]) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        let sums: Vec<(f64, f64)> = (0..self.channels)
            .into_par_iter()
            .map(|c| {
                let (mean, inv_std) = stats[c];
                let runs = self.runs(grad, c).zip(self.runs(x, c));
                runs.fold((0.0, 0.0), |(dbeta, dgamma), (g, v)| {
                    let normalised = run_sum(g, v, |g, v| f64::from(g) * f64::from((v - mean) * inv_std));
                    (dbeta + run_sum(g, g, |g, _| f64::from(g)), dgamma + normalised)
                })
            })
            .collect();
        let n = self.count();
        let mut dx = zeros(x.len());
        let chunk = (self.channels * self.area).max(1);
        dx.par_chunks_mut(chunk).zip(x.par_chunks(chunk)).zip(grad.par_chunks(chunk)).for_each(|((dx, x), grad)| {
            let runs = dx.chunks_exact_mut(self.area.max(1)).zip(x.chunks_exact(self.area.max(1)));
            for (c, ((dx, x), grad)) in runs.zip(grad.chunks_exact(self.area.max(1))).enumerate() {
                let ((mean, inv_std), (dbeta, dgamma)) = (stats[c], sums[c]);
                let (mean_grad, mean_projection) = ((dbeta / n) as f32, (dgamma / n) as f32);
                let scale = gamma[c] * inv_std;
                for ((d, &v), &g) in dx.iter_mut().zip(x).zip(grad) {
                    *d = scale * (g - mean_grad - (v - mean) * inv_std * mean_projection);
                }
            }
        });
        let (dbeta, dgamma) = sums.into_iter().map(|(b, g)| (b as f32, g as f32)).unzip();
        (dx, dgamma, dbeta)
    }
}

/// `Σ f(a[i], b[i])` over a run in `f64`, in lanes (so that it vectorises, where one running
/// sum would not), the lanes added up at the end.
#[inline(always)]
fn run_sum(a: &[f32], b: &[f32], f: impl Fn(f32, f32) -> f64) -> f64 {
    const LANES: usize = 8;
    let (a, b) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: f64 = a.remainder().iter().zip(b.remainder()).map(|(&x, &y)| f(x, y)).sum();
    let mut lanes = [0.0_f64; LANES];
    for (a, b) in a.zip(b) {
        lanes.iter_mut().zip(a).zip(b).for_each(|((l, &x), &y)| *l += f(x, y));
    }
    lanes.iter().sum::<f64>() + tail
}

#[cfg(test)]
mod tests {
    use burn::module::{Param, RunningState};
    use burn::nn::BatchNormConfig;
    use burn::tensor::Distribution;

    use super::*;
    use crate::conv_train::set_enabled;
    use crate::training_device;

    fn max_diff<const D: usize>(a: Tensor<D>, b: Tensor<D>) -> f32 {
        (a - b).abs().max().into_scalar::<f32>()
    }

    /// Output, gradients of input, gamma, beta (and the residual), and the running statistics
    /// after one step, on this path and on Burn's: the batch norm alone, then a ReLU, then a
    /// residual added before the ReLU.
    #[test]
    fn equals_burns_batch_norm_its_gradients_and_running_statistics() {
        let device = training_device();
        for (batch, channels, size) in [(5, 7, 11), (1, 3, 3), (16, 48, 9)] {
            let shape = [batch, channels, size, size];
            let x = Tensor::<4>::random(shape, Distribution::Normal(0.5, 2.0), &device);
            let grad = Tensor::<4>::random(shape, Distribution::Normal(0.0, 1.0), &device);
            let skip = Tensor::<4>::random(shape, Distribution::Normal(0.0, 1.0), &device);
            let random =
                |low: f64, high: f64| Tensor::<1>::random([channels], Distribution::Uniform(low, high), &device);
            let [gamma, beta, mean, var] =
                [(0.5, 2.0), (-1.0, 1.0), (-1.0, 1.0), (0.5, 2.0)].map(|(l, h)| random(l, h));
            for then in ["nothing", "relu", "add-relu"] {
                let [ours, burns] = [true, false].map(|enabled| {
                    set_enabled(enabled);
                    // A module of its own each time: clones share their running statistics.
                    let mut norm = BatchNormConfig::new(channels).init(&device);
                    norm.gamma = Param::from_tensor(gamma.clone());
                    norm.beta = Param::from_tensor(beta.clone());
                    norm.running_mean = RunningState::new(mean.clone());
                    norm.running_var = RunningState::new(var.clone());
                    let (x, skip) = (x.clone().detach().require_grad(), skip.clone().detach().require_grad());
                    let out = match then {
                        "nothing" => batch_norm(&norm, x.clone()),
                        "relu" => batch_norm_relu(&norm, x.clone()),
                        _ => batch_norm_add_relu(&norm, x.clone(), skip.clone()),
                    };
                    let grads = (out.clone() * grad.clone()).sum().backward();
                    set_enabled(true);
                    let dx = x.grad(&grads).expect("x requires its gradient");
                    let dgamma = norm.gamma.val().grad(&grads).expect("gamma requires its gradient");
                    let dbeta = norm.beta.val().grad(&grads).expect("beta requires its gradient");
                    let dskip = skip.grad(&grads);
                    let running = [norm.running_mean.value(), norm.running_var.value()];
                    (out.detach().inner(), [Some(dx), dskip], [dgamma, dbeta], running)
                });
                let case = format!("batch {batch}, {channels} channels, {size}x{size}, then {then}");
                assert!(max_diff(ours.0, burns.0) < 1e-4, "output, {case}");
                for (name, (a, b)) in ["input", "residual"].iter().zip(ours.1.into_iter().zip(burns.1)) {
                    match (a, b) {
                        (Some(a), Some(b)) => assert!(max_diff(a, b) < 1e-4, "{name} gradient, {case}"),
                        (None, None) => {}
                        (a, b) => panic!("{name} gradient: {} here, {} in Burn, {case}", a.is_some(), b.is_some()),
                    }
                }
                for (name, (a, b)) in ["gamma", "beta"].iter().zip(ours.2.into_iter().zip(burns.2)) {
                    // Sums over up to 1 296 values of order 1.
                    let scale = b.clone().abs().max().into_scalar::<f32>().max(1.0);
                    assert!(max_diff(a, b) < 1e-5 * scale, "{name} gradient, {case}");
                }
                for (name, (a, b)) in ["mean", "variance"].iter().zip(ours.3.into_iter().zip(burns.3)) {
                    assert!(max_diff(a, b) < 1e-4, "running {name}, {case}");
                }
            }
        }
    }
}

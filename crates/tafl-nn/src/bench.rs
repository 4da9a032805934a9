//! Forward-pass throughput, for `tafl bench nn` and for choosing a net size.

use std::time::{Duration, Instant};

use burn::tensor::{Distribution, Tensor};

use crate::model::Prediction;
use crate::packed::{InferencePath, PackedNet};

use crate::backend::Device;
use crate::model::TaflNetConfig;
use crate::train::{TrainBatch, TrainConfig, Trainer};

/// Throughput of the forward pass at one batch size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ForwardThroughput {
    /// Positions per forward call.
    pub batch: usize,
    /// Forward calls timed.
    pub iterations: u32,
    /// Positions evaluated per second.
    pub positions_per_s: f64,
    /// Arithmetic throughput, from [`TaflNetConfig::flops_per_position`].
    pub gflops: f64,
}

/// A net ready to evaluate planes on one [`InferencePath`], as an evaluator holds it.
#[derive(Debug)]
pub struct BenchNet {
    config: TaflNetConfig,
    stock: crate::TaflNet,
    packed: Option<PackedNet>,
    device: Device,
}

impl BenchNet {
    /// A freshly initialised `config` net on `path`, batch norms folded as an evaluator would.
    #[must_use]
    pub fn new(config: &TaflNetConfig, path: InferencePath, device: &Device) -> Self {
        let stock = config.init(device).fold_batch_norms();
        let packed = match path {
            InferencePath::Stock => None,
            InferencePath::Fast => Some(PackedNet::new(&stock, config)),
            InferencePath::FastBurnMatmul => Some(PackedNet::new(&stock, config).with_burn_matmul(device)),
            InferencePath::Winograd => Some(PackedNet::new(&stock, config).with_winograd()),
        };
        Self { config: config.clone(), stock, packed, device: device.clone() }
    }

    /// Evaluates `planes` (`[batch][plane][rank][file]`), outputs read back as plain vectors.
    ///
    /// # Panics
    /// If `planes` is not a whole number of positions.
    #[must_use]
    pub fn predict(&self, planes: &[f32]) -> Prediction {
        let out = match &self.packed {
            Some(packed) => packed.predict(planes),
            None => self.stock.predict(&self.config, planes, &self.device),
        };
        out.unwrap_or_else(|e| panic!("benchmark planes: {e}"))
    }
}

/// Measures the inference forward pass of `net` at `batch` positions per call, for about
/// `seconds` (after one warm-up call), from plain planes to outputs read back, as an
/// evaluator calls it.
#[must_use]
pub fn forward_throughput(net: &BenchNet, batch: usize, seconds: f64) -> ForwardThroughput {
    let config = &net.config;
    let size = config.board_size;
    let planes = crate::model::read_back(Tensor::<4>::random(
        [batch, config.input_planes, size, size],
        Distribution::Bernoulli(0.2),
        &net.device,
    ));
    let run = || {
        let _ = net.predict(&planes);
    };
    run();
    let budget = Duration::from_secs_f64(seconds.max(0.0));
    let start = Instant::now();
    let mut iterations = 0u32;
    while iterations == 0 || start.elapsed() < budget {
        run();
        iterations += 1;
    }
    let positions_per_s = f64::from(iterations) * batch as f64 / start.elapsed().as_secs_f64();
    let gflops = positions_per_s * config.flops_per_position() as f64 / 1e9;
    ForwardThroughput { batch, iterations, positions_per_s, gflops }
}

/// Training throughput: samples per second of [`Trainer::step`] (forward, backward and an
/// optimiser update) on a random batch of `batch` samples, for about `seconds` after one
/// warm-up step; the convolutions and batch norms through [`crate::conv_train`] and
/// [`crate::norm_train`] when `fast_conv`, else through Burn's own.
#[must_use]
pub fn train_throughput(config: &TaflNetConfig, batch: usize, seconds: f64, fast_conv: bool) -> f64 {
    train_throughputs(config, batch, seconds, &[fast_conv], || None)[0].samples_per_s
}

/// What [`train_throughputs`] measured of one path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrainThroughput {
    /// Training samples per second of wall time spent in this path's steps.
    pub samples_per_s: f64,
    /// Mean cores busy during this path's steps: CPU time over wall time (`None` when the
    /// clock given does not tell).
    pub cores: Option<f64>,
}

/// [`train_throughput`] of several paths (`fast_conv` of each) on one trainer and one batch,
/// their steps taken in turn (one of each, again and again) for about `seconds` in all, after a
/// warm-up step of each: a machine whose speed drifts (a shared host) slows every path alike,
/// so the ratios hold where separate runs spread ±12%. `cpu_seconds` reads the process's CPU
/// time, for the cores each path kept busy.
#[must_use]
pub fn train_throughputs(
    config: &TaflNetConfig,
    batch: usize,
    seconds: f64,
    fast_conv: &[bool],
    cpu_seconds: impl Fn() -> Option<f64>,
) -> Vec<TrainThroughput> {
    if fast_conv.is_empty() {
        return Vec::new();
    }
    let mut trainer = Trainer::new(config.init(&crate::backend::device()), TrainConfig::new());
    let data = random_batch(config, batch, &trainer.device());
    let step = |trainer: &mut Trainer, fast: bool| {
        crate::conv_train::with_enabled(fast, || trainer.step(&data));
    };
    fast_conv.iter().for_each(|&fast| step(&mut trainer, fast));
    let budget = Duration::from_secs_f64(seconds.max(0.0));
    let start = Instant::now();
    // Per path: steps, wall seconds, CPU seconds (`None` once the clock failed).
    let mut spent = vec![(0u32, 0.0, Some(0.0)); fast_conv.len()];
    while spent[0].0 == 0 || start.elapsed() < budget {
        for (&fast, (steps, wall, cpu)) in fast_conv.iter().zip(&mut spent) {
            let (began, cpu_began) = (Instant::now(), cpu_seconds());
            step(&mut trainer, fast);
            *steps += 1;
            *wall += began.elapsed().as_secs_f64();
            *cpu = cpu.zip(cpu_began).zip(cpu_seconds()).map(|((sum, before), after)| sum + after - before);
        }
    }
    spent
        .into_iter()
        .map(|(steps, wall, cpu)| TrainThroughput {
            samples_per_s: f64::from(steps) * batch as f64 / wall.max(1e-9),
            cores: cpu.map(|cpu| cpu / wall.max(1e-9)),
        })
        .collect()
}

/// A batch of `batch` random positions, each with a uniform policy over every move and a value
/// of zero.
fn random_batch(config: &TaflNetConfig, batch: usize, device: &Device) -> TrainBatch {
    let (size, moves) = (config.board_size, config.policy_len());
    TrainBatch {
        planes: Tensor::random([batch, config.input_planes, size, size], Distribution::Default, device),
        policy: Tensor::<2>::ones([batch, moves], device) / moves as f64,
        legal: Tensor::ones([batch, moves], device),
        value: Tensor::zeros([batch], device),
        ownership: None,
    }
}

/// The batch sizes `tafl bench nn` reports: single-position search, a small and a large
/// self-play batch.
pub const BENCH_BATCHES: [usize; 4] = [1, 8, 64, 256];

/// [`forward_throughput`] of a `config` net on `path` at each of [`BENCH_BATCHES`], `seconds` each.
#[must_use]
pub fn forward_throughput_table(
    config: &TaflNetConfig,
    path: InferencePath,
    seconds: f64,
    device: &Device,
) -> Vec<ForwardThroughput> {
    let net = BenchNet::new(config, path, device);
    BENCH_BATCHES.iter().map(|&batch| forward_throughput(&net, batch, seconds)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_something() {
        let config = TaflNetConfig::new(7, 4, 1, 8);
        for path in [InferencePath::Stock, InferencePath::Fast, InferencePath::Winograd] {
            let net = BenchNet::new(&config, path, &crate::backend::device());
            let r = forward_throughput(&net, 4, 0.0);
            assert_eq!((r.batch, r.iterations), (4, 1));
            // The figures are what was timed: rates are finite and positive, and the arithmetic
            // rate is the position rate times the net's cost per position.
            assert!(r.positions_per_s.is_finite() && r.positions_per_s > 0.0, "{r:?}");
            let expected = r.positions_per_s * config.flops_per_position() as f64 / 1e9;
            assert!((r.gflops - expected).abs() <= 1e-9 * expected, "{r:?}: expected {expected} GFLOP/s");
        }
        for fast_conv in [true, false] {
            let trained = train_throughput(&config, 4, 0.0, fast_conv);
            assert!(trained.is_finite() && trained > 0.0, "{trained}");
        }
    }

    #[test]
    fn paths_taken_in_turn_each_get_their_own_figures() {
        let config = TaflNetConfig::new(7, 4, 1, 8);
        assert!(train_throughputs(&config, 2, 0.0, &[], || Some(0.0)).is_empty());
        // A clock that advances one second per reading: each step is timed between two readings,
        // so each path's CPU time is one second per step.
        let clock = std::cell::Cell::new(0.0);
        let tick = || {
            clock.set(clock.get() + 1.0);
            Some(clock.get())
        };
        let paths = train_throughputs(&config, 2, 0.0, &[false, true, true], tick);
        assert_eq!(paths.len(), 3);
        for path in &paths {
            assert!(path.samples_per_s.is_finite() && path.samples_per_s > 0.0, "{path:?}");
            // One step of each path at zero seconds: 1 CPU-second over that step's wall time.
            let cores = path.cores.unwrap_or_default();
            assert!((cores - path.samples_per_s / 2.0).abs() <= 1e-6 * cores, "{path:?}");
        }
        let blind = train_throughputs(&config, 2, 0.0, &[true], || None);
        assert_eq!(blind[0].cores, None);
    }
}

//! `tafl bench nn` and `tafl bench mcts`: throughput of the network and of self-play search.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, anyhow};
use clap::{Args, Subcommand};
use tafl_nn::bench::{BenchNet, forward_throughput, train_throughputs};
use tafl_nn::evaluator::expected_for;
use tafl_nn::{INPUT_PLANES, InferencePath, NetEvaluator, TACTICAL_INPUT_PLANES, TaflNetConfig};
use tafl_rules::{Game, Variant};
use tafl_search::SearchParams;
use tafl_search::mcts::bench::searches_in_flight_with;

use crate::{Failure, bad_input, variant};

const EXAMPLES: &str = "Examples:
  tafl bench nn --net b6c64 --batches 1,8,64,256 --seconds 5
  tafl bench nn --net b4c48 --batches 64,256 --conv stock,fast,winograd --threads 2
  tafl bench nn --blocks 10 --channels 128 --train
  tafl bench nn --net b4c48 --batches 256 --train --train-batch 128 --train-conv stock,fast
  RAYON_NUM_THREADS=1 tafl bench nn --batches 256
  tafl bench mcts --net b6c64 --games 256 --visits 32 --seconds 20
  tafl bench mcts --model data/runs/r1 --cache 100000
  tafl bench mcts --net b4c48 --games 64 --visits 24 --conv stock,fast,winograd
  tafl bench mcts --net b4c48 --games 64 --visits 32 --conv winograd --tactical-planes";

/// Arguments of `tafl bench`.
#[derive(Args)]
#[command(after_help = EXAMPLES)]
pub struct BenchArgs {
    #[command(subcommand)]
    what: BenchCommand,
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Forward-pass throughput of a randomly initialised net per batch size (and training with
    /// --train).
    #[command(after_help = EXAMPLES)]
    Nn(NnArgs),
    /// Many MCTS searches in flight (as self-play runs them), one net batch per round.
    #[command(after_help = EXAMPLES)]
    Mcts(MctsArgs),
}

/// Which net to measure.
#[derive(Args)]
struct NetArgs {
    /// Net shape as a name, `b<blocks>c<channels>` (overrides --blocks and --channels).
    #[arg(long)]
    net: Option<String>,
    /// Residual blocks.
    #[arg(long, default_value_t = 6)]
    blocks: usize,
    /// Channels of the trunk.
    #[arg(long, default_value_t = 64)]
    channels: usize,
    /// A preset (copenhagen, copenhagen-13, tablut, brandubh) or a variant TOML file.
    #[arg(long, default_value = "copenhagen")]
    variant: String,
    /// Threads of the CPU backend (default: RAYON_NUM_THREADS, else every core).
    #[arg(long)]
    threads: Option<usize>,
    /// Forward passes to measure side by side, comma-separated: `stock` (Burn's), `fast` (the
    /// packed CPU path, im2col convolutions), `fast-burn` (the packed path with Burn's
    /// matmul), `winograd` (the packed path with Winograd F(4x4, 3x3) convolutions, which
    /// evaluators use on the CPU).
    #[arg(long, value_delimiter = ',', default_value = "stock,fast,winograd")]
    conv: Vec<String>,
    /// A net that also reads the six tactical planes (input encoding version 2, `[net]
    /// tactical-planes`): what computing them costs a search.
    #[arg(long)]
    tactical_planes: bool,
}

#[derive(Args)]
struct NnArgs {
    #[command(flatten)]
    net: NetArgs,
    /// Batch sizes to measure, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,8,64,256")]
    batches: Vec<usize>,
    /// Seconds per batch size.
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
    /// Also measure training steps (forward, backward, optimiser update).
    #[arg(long)]
    train: bool,
    /// Batch size of the training measurement.
    #[arg(long, default_value_t = 256)]
    train_batch: usize,
    /// Convolutions and batch norms of the training measurement: `stock` (Burn's) and `fast`
    /// (`tafl_nn::conv_train` and `norm_train`: Winograd for the forward pass and both
    /// gradients, batch norms summed in place; what `tafl train` uses on the CPU). Their steps
    /// are taken in turn, one of each again and again, for --seconds each: a shared machine's
    /// drift in speed then slows every path alike and their ratios hold.
    #[arg(long, value_delimiter = ',', default_value = "stock,fast")]
    train_conv: Vec<TrainConv>,
}

/// How a training step computes its convolutions and batch norms (`--train-conv`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TrainConv {
    Stock,
    Fast,
}

impl TrainConv {
    /// Whether this is `tafl_nn::conv_train`'s path.
    pub fn fast(self) -> bool {
        self == Self::Fast
    }

    fn name(self) -> &'static str {
        match self {
            Self::Stock => "stock",
            Self::Fast => "fast",
        }
    }
}

#[derive(Args)]
struct MctsArgs {
    #[command(flatten)]
    net: NetArgs,
    /// Load this checkpoint (or a run directory's best model, or a bundle) instead of a random net of --net's shape.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Games in flight (the net batch is up to one leaf per game).
    #[arg(long, default_value_t = 256)]
    games: usize,
    /// Simulations per move (Gumbel root).
    #[arg(long, default_value_t = 32)]
    visits: u32,
    /// Seconds to run.
    #[arg(long, default_value_t = 20.0)]
    seconds: f64,
    /// Entries of the evaluation cache; 0 for none.
    #[arg(long, default_value_t = 0)]
    cache: usize,
}

/// Runs `tafl bench ...`.
pub fn run(args: &BenchArgs) -> Result<u8, Failure> {
    match &args.what {
        BenchCommand::Nn(a) => nn(a),
        BenchCommand::Mcts(a) => mcts(a),
    }
}

/// `b6c64` → (6, 64).
fn parse_net_name(name: &str) -> anyhow::Result<(usize, usize)> {
    let bad = || anyhow!("--net `{name}` is not of the form b<blocks>c<channels>, like b6c64");
    let rest = name.strip_prefix('b').ok_or_else(bad)?;
    let (blocks, channels) = rest.split_once('c').ok_or_else(bad)?;
    let blocks: usize = blocks.parse().map_err(|_| bad())?;
    let channels: usize = channels.parse().map_err(|_| bad())?;
    if blocks == 0 || channels == 0 {
        return Err(bad());
    }
    Ok((blocks, channels))
}

impl NetArgs {
    fn setup(&self) -> Result<(&'static Variant, TaflNetConfig), Failure> {
        if let Some(threads) = self.threads {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build_global()
                .context("setting the number of threads")
                .map_err(bad_input)?;
        }
        let variant = variant::load(&self.variant).map_err(bad_input)?;
        let (blocks, channels) = match &self.net {
            Some(name) => parse_net_name(name).map_err(bad_input)?,
            None => (self.blocks, self.channels),
        };
        let planes = if self.tactical_planes { TACTICAL_INPUT_PLANES } else { INPUT_PLANES };
        let config = TaflNetConfig::new(usize::from(variant.size()), planes, blocks, channels);
        Ok((variant, config))
    }

    fn paths(&self) -> Result<Vec<InferencePath>, Failure> {
        self.conv
            .iter()
            .map(|name| {
                InferencePath::from_name(name)
                    .ok_or_else(|| bad_input(anyhow!("--conv `{name}` is none of {}", path_names())))
            })
            .collect()
    }
}

/// The names `--conv` takes, comma-separated, for error messages.
fn path_names() -> String {
    InferencePath::ALL.map(InferencePath::name).join(", ")
}

fn describe(config: &TaflNetConfig, variant: &Variant) {
    let size = config.board_size;
    println!(
        "net {} on {} ({size}x{size}, {} input planes, {} policy outputs): {:.1} MFLOP per position",
        config.name(),
        variant.name(),
        config.input_planes,
        config.policy_len(),
        config.flops_per_position() as f64 / 1e6,
    );
    println!("backend {}, {} threads", tafl_nn::backend::BACKEND_NAME, rayon::current_num_threads());
}

fn nn(args: &NnArgs) -> Result<u8, Failure> {
    let (variant, config) = args.net.setup()?;
    let paths = args.net.paths()?;
    if args.batches.contains(&0) {
        return Err(bad_input(anyhow!("--batches must be positive")));
    }
    describe(&config, variant);
    let device = tafl_nn::device();
    let nets: Vec<BenchNet> = paths.iter().map(|&path| BenchNet::new(&config, path, &device)).collect();
    println!(
        "{:>6} {:>10} {:>8} {:>13} {:>10} {:>9} {:>7} {:>9}",
        "batch", "conv", "calls", "positions/s", "ms/call", "GFLOP/s", "cores", "vs first"
    );
    // The paths take turns at each batch size, so that a load that comes and goes on a shared
    // machine weighs on all of them alike.
    for &batch in &args.batches {
        let mut first = None;
        for (path, net) in paths.iter().zip(&nets) {
            let usage = CpuUsage::start();
            let r = forward_throughput(net, batch, args.seconds);
            let ms = 1e3 * batch as f64 / r.positions_per_s.max(1e-9);
            let base = *first.get_or_insert(r.positions_per_s);
            println!(
                "{:>6} {:>10} {:>8} {:>13.0} {:>10.2} {:>9.2} {:>7} {:>8.2}x",
                r.batch,
                path.name(),
                r.iterations,
                r.positions_per_s,
                ms,
                r.gflops,
                usage.cores(),
                r.positions_per_s / base.max(1e-9),
            );
        }
    }
    if args.train {
        let batch = args.train_batch.max(1);
        let fast: Vec<bool> = args.train_conv.iter().map(|conv| conv.fast()).collect();
        let seconds = args.seconds * fast.len() as f64;
        let measured = train_throughputs(&config, batch, seconds, &fast, process_cpu_seconds);
        let base = measured.first().map_or(1.0, |first| first.samples_per_s);
        for (conv, path) in args.train_conv.iter().zip(measured) {
            let samples = path.samples_per_s;
            // A training step costs about three forward passes (forward, two backward products).
            let gflops = samples * 3.0 * config.flops_per_position() as f64 / 1e9;
            let cores = path.cores.map_or_else(|| "?".to_owned(), |cores| format!("{cores:.2}"));
            println!(
                "train step at batch {batch}, conv {:>5}: {samples:.0} samples/s (~{gflops:.2} GFLOP/s counting 3x forward), {cores} cores, {:.2}x",
                conv.name(),
                samples / base.max(1e-9)
            );
        }
    }
    println!("cores: CPU time of this process over wall time; below the thread count, the machine is busy");
    Ok(0)
}

/// CPU time this process used since [`CpuUsage::start`], against wall time: how many cores
/// it actually got. A shared machine gives a benchmark fewer cores than it has threads.
struct CpuUsage {
    wall: Instant,
    cpu: Option<f64>,
}

impl CpuUsage {
    fn start() -> Self {
        Self { wall: Instant::now(), cpu: process_cpu_seconds() }
    }

    /// Mean cores used, as text; `?` where the platform does not tell.
    fn cores(&self) -> String {
        let wall = self.wall.elapsed().as_secs_f64().max(1e-9);
        match (self.cpu, process_cpu_seconds()) {
            (Some(before), Some(now)) => format!("{:.2}", (now - before) / wall),
            _ => "?".to_owned(),
        }
    }
}

/// User plus system CPU seconds of this process, from `/proc/self/stat` (Linux; `None`
/// elsewhere). Assumes the usual 100 clock ticks per second.
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces), from field 3 on.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i)?.parse::<f64>().ok();
    Some((ticks(11)? + ticks(12)?) / 100.0)
}

fn mcts(args: &MctsArgs) -> Result<u8, Failure> {
    let (variant, config) = args.net.setup()?;
    let paths = args.net.paths()?;
    let mut evaluator = match &args.model {
        // A checkpoint, a run directory (its best model) or a player bundle.
        Some(dir) => NetEvaluator::load(&tafl_players::players::resolve_model(dir), &expected_for(variant))
            .with_context(|| format!("loading {}", dir.display()))
            .map_err(bad_input)?,
        None => {
            let device = tafl_nn::device();
            NetEvaluator::new(config.init(&device), config, device)
        }
    }
    .with_cache(args.cache);
    describe(evaluator.config(), variant);
    println!(
        "{} games in flight, Gumbel root with {} visits per move, {:.0} s, cache {}",
        args.games.max(1),
        args.visits,
        args.seconds,
        if args.cache == 0 { "off".to_owned() } else { format!("{} entries", args.cache) },
    );
    let params = SearchParams::gumbel(args.visits);
    for path in paths {
        // A fresh cache for each path, so that none starts warm.
        evaluator = evaluator.with_path(path).with_cache(args.cache);
        println!("conv {}", path.name());
        mcts_one(&evaluator, variant, &params, args);
    }
    Ok(0)
}

fn mcts_one(evaluator: &NetEvaluator, variant: &'static Variant, params: &SearchParams, args: &MctsArgs) {
    let usage = CpuUsage::start();
    let r = searches_in_flight_with(evaluator, &Game::new(variant), params, args.games, args.seconds);
    let cores = usage.cores();
    println!("{:<26} {:>12.0}", "evaluations/s", r.evaluations_per_s);
    println!("{:<26} {:>12.0}", "simulations/s", r.simulations_per_s);
    println!("{:<26} {:>12.1}", "moves/s", r.moves_per_s);
    println!("{:<26} {:>12.1}", "mean batch", r.mean_batch);
    println!("{:<26} {:>11.1}%", "time in the net", 100.0 * r.share_of_time_in_evaluator);
    println!("{:<26} {:>11.1}%", "time in search", 100.0 * (1.0 - r.share_of_time_in_evaluator));
    println!("{:<26} {:>12}", "cores used", cores);
    if let Some(stats) = evaluator.cache_stats() {
        let total = (stats.hits + stats.misses).max(1);
        println!("{:<26} {:>11.1}%", "cache hits", 100.0 * stats.hits as f64 / total as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::parse_net_name;

    #[test]
    fn net_names() {
        assert_eq!(parse_net_name("b6c64").ok(), Some((6, 64)));
        assert_eq!(parse_net_name("b10c128").ok(), Some((10, 128)));
        for bad in ["", "b6", "c64", "b0c64", "bxc64", "6c64", "b6c64x"] {
            assert!(parse_net_name(bad).is_err(), "{bad}");
        }
    }
}

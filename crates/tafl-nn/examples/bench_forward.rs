//! Forward-pass throughput of a net on 11x11 at batch 1, 8, 64 and 256.
//!
//! `cargo run --release -p tafl-nn --example bench_forward -- [blocks] [channels] [seconds] [planes]`

use tafl_nn::bench::{forward_throughput_table, train_throughput};
use tafl_nn::{InferencePath, TaflNetConfig, backend};

fn arg(index: usize, default: usize) -> usize {
    std::env::args().nth(index).and_then(|a| a.parse().ok()).unwrap_or(default)
}

fn main() {
    let config = TaflNetConfig::new(11, arg(4, 12), arg(1, 6), arg(2, 64));
    let seconds = arg(3, 5) as f64;
    println!(
        "{} on {}: {:.1} MFLOP/position, {} threads",
        config.name(),
        backend::BACKEND_NAME,
        config.flops_per_position() as f64 / 1e6,
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    );
    for path in [InferencePath::Stock, InferencePath::Fast, InferencePath::Winograd] {
        for r in forward_throughput_table(&config, path, seconds, &backend::device()) {
            println!(
                "{:>5} batch {:>4}: {:>9.1} positions/s {:>7.2} GFLOP/s ({} calls)",
                path.name(),
                r.batch,
                r.positions_per_s,
                r.gflops,
                r.iterations
            );
        }
    }
    let samples_per_s = train_throughput(&config, 256, seconds, true);
    println!("training, batch 256: {samples_per_s:.1} samples/s");
}

//! Perft speed from the Copenhagen start: making every move, and bulk-counting the last ply.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
use criterion::{Criterion, criterion_group, criterion_main};
use tafl_rules::{Position, Variant};

fn perft(c: &mut Criterion) {
    let start = Position::start(Variant::copenhagen());
    let mut group = c.benchmark_group("perft-copenhagen");
    group.sample_size(10);
    group.bench_function("depth3-make-every-move", |b| b.iter(|| start.perft(3, false)));
    group.bench_function("depth4-bulk", |b| b.iter(|| start.perft(4, true)));
    group.finish();
}

criterion_group!(benches, perft);
criterion_main!(benches);

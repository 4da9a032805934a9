#!/usr/bin/env bash
# The throughput figures of a run in object storage (docs/cluster.md), one machine:
#  1. ingestion: the samples per second one trainer reads into its replay window (list, fetch,
#     decode) from a local run and from the same run in S3 (moto on localhost, cold cache), the
#     860 human games of the archive as the run's shards (43 k samples);
#  2. self-play: games per hour of N workers (N = 1, 2, 4) on one local run, each worker
#     `tafl selfplay --games G` with RAYON_NUM_THREADS=T (default: all cores each), wall time
#     from the first start to the last exit.
# Measure with nothing else running. Usage:
#   TAFL=target/release/tafl scripts/cluster/throughput.sh [GAMES_PER_WORKER] [CONFIG]
# (TAFL built with --features s3; moto is installed by scripts/moto-server.sh.)
set -euo pipefail
cd "$(dirname "$0")/../.."
tafl="$(realpath "${TAFL:-target/release/tafl}")"
games="${1:-32}"
config="$(realpath "${2:-configs/cpu.toml}")"
archive="$(realpath "${ARCHIVE:-../shared/data/games/copenhagen-11x11-archive.csv}")"
work="$(mktemp -d)"
scripts/moto-server.sh install
moto="${TAFL_CACHE:-$HOME/.cache/tafl}/moto-venv/bin/moto_server"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
"$moto" -H 127.0.0.1 -p "$port" >"$work/moto.log" 2>&1 &
moto_pid=$!
trap 'kill $moto_pid 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
export AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_ALLOW_HTTP=true AWS_REGION=us-east-1
export AWS_ACCESS_KEY_ID=tafl-bench AWS_SECRET_ACCESS_KEY=tafl-bench
curl -sf -X PUT "$AWS_ENDPOINT_URL/bench" >/dev/null

# The line `optimize … read in S s: R samples/s` of one forced round of ten steps.
ingest() {
  local run="$1"
  TAFL_CACHE_DIR="$work/cache-$2" "$tafl" import --config "$work/ingest.toml" --run "$run" --quiet "$archive" >/dev/null
  # A cold cache for the trainer: a machine that has not seen the run.
  TAFL_CACHE_DIR="$work/trainer-$2" "$tafl" optimize --run "$run" --force --quiet 2>&1 |
    grep -o 'window of [0-9]* samples ([^)]*)' || true
}
# Copenhagen (the archive's game) whatever the self-play config; ten steps, the reading is what counts.
sed -e 's/^min-steps = .*/min-steps = 10/' -e 's/^max-steps = .*/max-steps = 10/' -e 's/^steps = .*/steps = 10/' configs/cpu.toml >"$work/ingest.toml"
echo "== ingestion (860 human games as shards, one trainer, cold cache)"
echo "local disk: $(ingest "$work/local" local)"
echo "s3 (moto):  $(ingest "s3://bench/ingest" s3)"

echo "== self-play: $games games per worker, $(nproc) cores, RAYON_NUM_THREADS=${RAYON_NUM_THREADS:-all}"
for n in 1 2 4; do
  run="$work/play-$n"
  # The run, its config and first model exist before the clock starts.
  "$tafl" selfplay --config "$config" --run "$run" --games 1 --quiet >/dev/null 2>&1
  start=$(date +%s.%N)
  pids=()
  for w in $(seq "$n"); do
    TAFL_WORKER_ID="w$w" TAFL_CACHE_DIR="$work/cache-play" "$tafl" selfplay --run "$run" --games "$games" --quiet >"$work/w$n-$w.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  end=$(date +%s.%N)
  python3 -c "n=$n; g=$games; s=$end-$start; print(f'{n} worker(s): {n*g} games in {s:.0f} s = {n*g*3600/s:.0f} games/h')"
done

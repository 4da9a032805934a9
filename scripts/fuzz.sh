#!/usr/bin/env bash
# Runs every fuzz target for a while (default 150 s each, one after the other) and prints the
# last status lines of each. Crashes are written to fuzz/artifacts/TARGET/, the corpus grows
# in fuzz/corpus/TARGET/.
#
# The targets are libFuzzer programs (libfuzzer-sys). They are built here with the stable
# toolchain: plain `cargo build` with the coverage instrumentation that cargo-fuzz would add
# (SanitizerCoverage counters and comparison tracing) and `--cfg fuzzing` on this repository's
# crates (scripts/fuzz-rustc.sh), but without
# AddressSanitizer, which needs nightly and adds little to code without `unsafe`. With nightly
# and cargo-fuzz installed, `cargo +nightly fuzz run TARGET` works on the same targets too.
#
# Usage: [FUZZ_JOBS=N] scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET…]   (default: every target)
# Seeds of the corpora: scripts/fuzz-seeds.sh (run it once before a first run).
set -euo pipefail
seconds="${1:-150}"
shift || true
cd "$(dirname "$0")/../fuzz"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(fen opentafl moves archive variant play move_list htp_server htp_client uci_server uci_client opentafl_server player_spec server_line config shard checkpoint match_summary)
fi
# The instrumentation goes only to this repository's crates (scripts/fuzz-rustc.sh says why).
export RUSTC_WRAPPER="$PWD/../scripts/fuzz-rustc.sh"
# An explicit --target keeps the fuzz build's host tools apart from the targets.
host=$(rustc -vV | sed -n 's/^host: //p')
cargo build --release --bins --target "$host"
# Inputs past the limit are cut: 512 bytes hold any protocol line, spec or record; a checkpoint
# of the smallest net needs more.
max_len() {
  case "$1" in
    checkpoint) echo 16384 ;;
    shard|config|match_summary) echo 4096 ;;
    *) echo 512 ;;
  esac
}
run_target() {
  local target="$1"
  mkdir -p "corpus/$target" "artifacts/$target"
  local status=0
  ./target/"$host"/release/"$target" "corpus/$target" -artifact_prefix="artifacts/$target/" \
      -max_total_time="$seconds" -max_len="$(max_len "$target")" -print_final_stats=1 > "artifacts/$target.log" 2>&1 || status=1
  echo "== $target"
  grep -E "^#[0-9]+ +DONE|ERROR|panicked|SUMMARY|crash-|stat::number_of_executed_units" "artifacts/$target.log" | tail -4
  return "$status"
}
# FUZZ_JOBS targets run at once (default 1), each on one core.
jobs="${FUZZ_JOBS:-1}"
failed=0
running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
  run_target "$target" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done
exit "$failed"

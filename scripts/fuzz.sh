#!/usr/bin/env bash
# Runs every fuzz target for a while (default 150 s each, one after the other) and prints the
# last status lines of each. Crashes are written to fuzz/artifacts/TARGET/, the corpus grows
# in fuzz/corpus/TARGET/.
#
# The targets are libFuzzer programs (libfuzzer-sys). They are built here with the stable
# toolchain: plain `cargo build` with the coverage instrumentation that cargo-fuzz would add
# (SanitizerCoverage counters and comparison tracing) and `--cfg fuzzing`, but without
# AddressSanitizer, which needs nightly and adds little to code without `unsafe`. With nightly
# and cargo-fuzz installed, `cargo +nightly fuzz run TARGET` works on the same targets too.
#
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET…]   (default: every target)
set -euo pipefail
seconds="${1:-150}"
shift || true
cd "$(dirname "$0")/../fuzz"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(fen opentafl moves archive variant play move_list htp_server htp_client uci_server opentafl_server player_spec server_line)
fi
export RUSTFLAGS="--cfg fuzzing -Cdebug-assertions -Coverflow-checks -Cpasses=sancov-module \
  -Cllvm-args=-sanitizer-coverage-level=4 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
  -Cllvm-args=-sanitizer-coverage-pc-table -Cllvm-args=-sanitizer-coverage-trace-compares"
# An explicit --target keeps the instrumentation off build scripts and proc macros.
host=$(rustc -vV | sed -n 's/^host: //p')
cargo build --release --bins --target "$host"
failed=0
for target in "${targets[@]}"; do
  echo "== $target"
  mkdir -p "corpus/$target" "artifacts/$target"
  if ! ./target/"$host"/release/"$target" "corpus/$target" -artifact_prefix="artifacts/$target/" \
      -max_total_time="$seconds" -max_len=512 -print_final_stats=1 > "artifacts/$target.log" 2>&1; then
    failed=1
  fi
  grep -E "^#[0-9]+ +DONE|ERROR|panicked|SUMMARY|crash-|stat::number_of_executed_units" "artifacts/$target.log" | tail -4
done
exit "$failed"

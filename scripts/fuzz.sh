#!/usr/bin/env bash
# Runs every cargo-fuzz target for a while (default 150 s each) and prints the last status lines.
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz --locked`).
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]
set -euo pipefail
seconds="${1:-150}"
cd "$(dirname "$0")/../fuzz"
for target in fen opentafl moves archive variant play server_line; do
  echo "== $target"
  cargo +nightly fuzz run -O "$target" -- -max_total_time="$seconds" -max_len=512 2>&1 \
    | grep -E "DONE|ERROR|panicked|SUMMARY|crash-" | tail -3
done

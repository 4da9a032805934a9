#!/usr/bin/env bash
# Runs the tests that need the reference engine `hnefatafl-text-protocol` (crate
# hnefatafl-copenhagen 6.4.1 from crates.io): our HTP server must answer every scripted command
# as the reference does (crates/tafl-protocol/tests/htp_reference.rs).
#
# The engine is installed once with `cargo install --root` into a cache folder and reused;
# nothing is vendored. The test fails (it does not skip) when the engine is missing.
#
# Usage: scripts/htp-reference.sh [--interop]
#   --interop  also plays the arena's match against the engine (slow: minutes a game)
# Environment: TAFL_CACHE  cache folder (default ~/.cache/tafl); the engine goes to
#              $TAFL_CACHE/hnefatafl-copenhagen-6.4.1/bin.
set -euo pipefail
cd "$(dirname "$0")/.."
version=6.4.1
root="${TAFL_CACHE:-$HOME/.cache/tafl}/hnefatafl-copenhagen-$version"
engine="$root/bin/hnefatafl-text-protocol"
if [ ! -x "$engine" ]; then
  echo "installing hnefatafl-copenhagen $version (hnefatafl-text-protocol) into $root" >&2
  start=$(date +%s)
  cargo install "hnefatafl-copenhagen@$version" --locked --no-default-features \
    --bin hnefatafl-text-protocol --root "$root"
  echo "installed in $(( $(date +%s) - start )) s" >&2
fi
if [ ! -x "$engine" ]; then
  echo "error: $engine is missing after the install" >&2
  exit 1
fi
export HTP_REFERENCE="$engine"
export PATH="$root/bin:$PATH"
cargo test --release --locked -p tafl-protocol --test htp_reference -- --ignored
if [ "${1:-}" = "--interop" ]; then
  cargo test --release --locked -p tafl-arena --test arena -- --ignored interop
fi

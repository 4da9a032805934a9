#!/usr/bin/env bash
# Perft from the Copenhagen start with the reference engine's move generator (crate
# hnefatafl-copenhagen 6.4.1, an independent implementation), to compare with
# `tafl perft --depth N` and the counts in crates/tafl-rules/tests/perft.rs.
# Measured (2026-12-01, 2 cores under heavy load, 18 min with the build): depth 1-4
# no-history 116, 6788, 806344, 50456804 (the same as tafl); with-history depth 4 50450144.
# Usage: scripts/reference-perft.sh [DEPTH]   (default 4)
set -euo pipefail
cd "$(dirname "$0")/reference-perft"
cargo run --release -- "${1:-4}"

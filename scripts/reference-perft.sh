#!/usr/bin/env bash
# Perft from the Copenhagen start with the reference engine's move generator (crate
# hnefatafl-copenhagen 6.4.1, an independent implementation), to compare with
# `tafl perft --depth N` and the counts in crates/tafl-rules/tests/perft.rs.
# Usage: scripts/reference-perft.sh [DEPTH]   (default 4)
set -euo pipefail
cd "$(dirname "$0")/reference-perft"
cargo run --release -- "${1:-4}"

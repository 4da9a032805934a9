#!/usr/bin/env bash
# Measures the levels of `--level N` (docs/levels.md): `tafl ladder --level N` against the
# anchors of configs/levels-anchors.toml, on the same openings for every level. The tables go
# to data/levels/level-N/ladder.txt; scripts/levels.sh prints them one after the other.
#
#   scripts/levels.sh                     # every level, 20 games per anchor, seed 2612
#   GAMES=40 SEED=7 LEVELS="4 5 6" scripts/levels.sh
#
# One game at a time by default (THREADS=1): the top level thinks for a second a move, and
# games side by side would take that second from each other.
set -euo pipefail
cd "$(dirname "$0")/.."
TAFL=${TAFL:-target/release/tafl}
GAMES=${GAMES:-20}
SEED=${SEED:-2612}
THREADS=${THREADS:-1}
LEVELS=${LEVELS:-"1 2 3 4 5 6 7 8 9 10"}
for n in $LEVELS; do
  "$TAFL" ladder --level "$n" --ladder configs/levels-anchors.toml --games "$GAMES" --seed "$SEED" \
    --threads "$THREADS" --out "data/levels/level-$n" --quiet > /dev/null
  cat "data/levels/level-$n/ladder.txt"
  echo
done

#!/usr/bin/env bash
# Measures each level of `--level N` (docs/levels.md) against the level below it, directly: the
# step a person feels when moving up one level. Paired games on the same openings, one game at a
# time on one core (level 10 thinks for a second a move). Matches go to data/levels/steps/.
#
#   scripts/level-steps.sh                      # levels 4..9 against the one below, 40 games, seed 2701
#   GAMES=100 SEED=7 LEVELS="9 10" scripts/level-steps.sh
set -euo pipefail
cd "$(dirname "$0")/.."
TAFL=${TAFL:-target/release/tafl}
GAMES=${GAMES:-40}
SEED=${SEED:-2701}
LEVELS=${LEVELS:-"4 5 6 7 8 9"}
CORE=${CORE:-0}
# The players, read from their one place (crates/tafl-arena/src/levels.rs), level 1 first.
mapfile -t specs < <(sed -n '/^const LEVELS/,/^];/p' crates/tafl-arena/src/levels.rs | grep -o '"[^"]*"' | tr -d '"')
spec() { # spec N: level N's player, named level-N
  local text=${specs[$(($1 - 1))]}
  if [[ $text == *:* ]]; then echo "$text,name=level-$1"; else echo "$text:name=level-$1"; fi
}
for n in $LEVELS; do
  out=data/levels/steps/$n-vs-$((n - 1))
  RAYON_NUM_THREADS=1 taskset -c "$CORE" "$TAFL" arena --a "$(spec "$n")" --b "$(spec $((n - 1)))" \
    --games "$GAMES" --threads 1 --seed "$SEED" --out "$out" --quiet | tee "$out.txt"
  echo
done

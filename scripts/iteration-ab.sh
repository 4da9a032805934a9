#!/usr/bin/env bash
# Issue 33's measure of the default run's iteration, for two binaries (or two sets of flags):
# each trains the same ITERATIONS iterations of CONFIG from the same start into a fresh run
# directory, A then B, ROUNDS times, and the wall time is read from each run's own log with its
# parts (self-play, training, evaluations). Give it both cores and nothing else: the figure is
# wall time (pause a background run with `kill -STOP`, then `-CONT`).
#
#   A="/tmp/old/tafl --train-conv stock" scripts/iteration-ab.sh
#   A=/tmp/old/tafl B="target/release/tafl" ITERATIONS=10 ROUNDS=2 scripts/iteration-ab.sh
#
# A, B        a tafl binary, then any extra `tafl train` flags (B: target/release/tafl)
# INIT        --init-from of every run (data/candidates/n9-m000021 where it exists, else builtin)
# CONFIG      the run's config (configs/cpu.toml)
# ITERATIONS  iterations measured (10): each run is told ITERATIONS + 1, the first being the start
# ROUNDS      A then B, this many times (1)
# OUT         where the runs and their logs go (a fresh temporary directory)
#
#   scripts/iteration-ab.sh summary LOG   the same figures from the log of any `tafl train`
set -euo pipefail
cd "$(dirname "$0")/.."

# summary LOG: the run's wall time at its last iteration and its parts, from `tafl train`'s lines.
summary() {
  awk '
    /^iteration [0-9]+ .* elapsed$/ { wall = $(NF - 1); sub(/s$/, "", wall) }
    /^selfplay m[0-9]+: [0-9]+ games in [0-9.]+s/ {
      for (i = 1; i <= NF; i++) if ($i == "in") { t = $(i + 1); sub(/s$/, "", t); play += t; break }
      if (match($0, /mean [0-9.]+ plies/)) { split(substr($0, RSTART, RLENGTH), m, " "); plies += $3 * m[2] }
    }
    /^optimize m[0-9]+ .* steps x [0-9]+ .* samples\/s$/ {
      for (i = 1; i <= NF; i++) {
        if ($i == "steps" && $(i + 1) == "x") { steps = $(i - 1); batch = $(i + 2) }
        if ($i == "samples/s") { rate = $(i - 1) }
      }
      if (rate > 0) train += steps * batch / rate
    }
    /^evaluate .* \(100%\) in [0-9.]+s/ {
      for (i = 1; i <= NF; i++) if ($i == "in") { t = $(i + 1); sub(/s:?$/, "", t); eval_s += t; break }
    }
    END {
      printf "wall %s s, self-play %d s (%.0f moves/s), training %.0f s, evaluations %d s\n",
        (wall == "" ? "?" : wall), play, (play > 0 ? plies / play : 0), train, eval_s
    }' "$1"
}

[ "${1:-}" = summary ] && { summary "${2:?usage: scripts/iteration-ab.sh summary LOG}"; exit 0; }

A=${A:?set A to a tafl binary (and flags) to compare with B}
B=${B:-target/release/tafl}
INIT=${INIT:-data/candidates/n9-m000021}
[ -e "$INIT" ] || [ "$INIT" = builtin ] || INIT=builtin
CONFIG=${CONFIG:-configs/cpu.toml}
ITERATIONS=${ITERATIONS:-10}
ROUNDS=${ROUNDS:-1}
OUT=${OUT:-$(mktemp -d /tmp/iteration-ab.XXXXXX)}

echo "$(date -u +%FT%TZ) $ITERATIONS iterations of $CONFIG from $INIT, A then B, $ROUNDS round(s), in $OUT"
for round in $(seq "$ROUNDS"); do
  for arm in A B; do
    read -r -a cmd <<< "${!arm}"
    run="$OUT/$arm-$round"
    "${cmd[0]}" train --config "$CONFIG" --run "$run" --init-from "$INIT" --iterations "$((ITERATIONS + 1))" \
      "${cmd[@]:1}" > "$run.log" 2>&1
    echo "$arm round $round (${!arm}): $(summary "$run.log")"
  done
done

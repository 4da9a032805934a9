#!/usr/bin/env bash
# One lever of issue 32, measured as docs/training.md asks: two runs from the same start for the
# same wall time at the same moment, one core each (core 0 and core 1, one thread each), differing
# only in their config; then the two final models in paired games against each other and against
# the anchors, attackers and defenders apart (the tables of `tafl arena`).
#
#   CONTROL=configs/cpu.toml LEVER=my-lever.toml INIT=builtin HOURS=1.5 scripts/lever.sh NAME
#
# NAME          the runs go to data/levers/NAME/{control,lever}, the matches to .../match-*
# CONTROL       the control's config (default configs/cpu.toml)
# LEVER         the lever's config: the control's with one thing changed (required)
# INIT          `--init-from` of both runs (default: none, a fresh start with the warm start);
#               a net of another size than INIT's cannot start from it
# HOURS         wall time of each run (default 1.0)
# ITERATIONS    instead of HOURS: this many iterations each, the same work for a lever that does
#               not change an iteration's cost (then a build beside the runs slows both alike)
# GAMES         paired games of the two models (default 100), at VISITS visits (default 200);
#               SEED 3251; ANCHOR_GAMES paired games against each anchor (default GAMES)
# ANCHORS       the other opponents of both models (default alpha-beta depths 2 and 3)
# VARIANT       the variant of the configs, for the matches (default copenhagen)
# MATCHES_ONLY  1: play the matches of a pair trained already (runs extended by hand, or matches
#               lost with the machine), without training; a match finished before between the
#               same players (models, games, seed) is kept, so an interrupted set of matches
#               goes on where it stopped
#
# Nothing else should run meanwhile: the two runs share the machine's two cores, and a build
# beside them takes an unequal share from each (`nice` does not make that fair).
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: LEVER=config.toml scripts/lever.sh NAME}
TAFL=${TAFL:-target/release/tafl}
CONTROL=${CONTROL:-configs/cpu.toml}
LEVER=${LEVER:?set LEVER to a config: the control config with one thing changed}
HOURS=${HOURS:-1.0}
GAMES=${GAMES:-100}
ANCHOR_GAMES=${ANCHOR_GAMES:-$GAMES}
VISITS=${VISITS:-200}
SEED=${SEED:-3251}
ANCHORS=${ANCHORS:-"alphabeta:depth=2 alphabeta:depth=3"}
VARIANT=${VARIANT:-copenhagen}
out=data/levers/$name
mkdir -p "$out"
init=()
[ -n "${INIT:-}" ] && init=(--init-from "$INIT")
length=(--hours "$HOURS")
[ -n "${ITERATIONS:-}" ] && length=(--iterations "$ITERATIONS")

arm() { # arm CORE NAME CONFIG
  RAYON_NUM_THREADS=1 taskset -c "$1" "$TAFL" train --config "$3" --run "$out/$2" "${length[@]}" \
    "${init[@]}" --quiet > "$out/$2.log" 2>&1
}
if [ "${MATCHES_ONLY:-0}" != 1 ]; then
  echo "$(date -u +%FT%TZ) runs: control $CONTROL on core 0, lever $LEVER on core 1, ${length[*]} each"
  arm 0 control "$CONTROL" &
  control=$!
  arm 1 lever "$LEVER" &
  lever=$!
  wait "$control" "$lever"
fi

best() { # the newest model of a run
  ls "$out/$1/models" | grep -E '^m[0-9]+$' | sort | tail -n 1
}
spec() { # the final model of a run as a player
  echo "mcts:model=$out/$1/models/$(best "$1"),visits=$VISITS,name=$1-$(best "$1")"
}
match() { # match NAME GAMES A B; one finished before between the same players is kept
  local played="$out/match-$1" players="$3 $4 $2 $SEED"
  if [ -f "$played/summary.json" ] && [ "$(cat "$played.players" 2>/dev/null)" = "$players" ]; then
    echo "kept: match-$1 (played before)"
    cat "$played.txt"
    return
  fi
  "$TAFL" arena --variant "$VARIANT" --a "$3" --b "$4" --games "$2" --seed "$SEED" --threads 2 --max-plies 300 \
    --out "$played" --quiet | tee "$played.txt"
  echo "$players" > "$played.players"
}
echo "$(date -u +%FT%TZ) matches at $VISITS visits, $GAMES games (anchors $ANCHOR_GAMES), seed $SEED"
match lever-vs-control "$GAMES" "$(spec lever)" "$(spec control)"
for anchor in $ANCHORS; do
  for arm_name in control lever; do
    match "$arm_name-vs-${anchor//[:=]/-}" "$ANCHOR_GAMES" "$(spec "$arm_name")" "$anchor"
  done
done

#!/usr/bin/env bash
# Runs the Slurm launch files on a real one-node Slurm: Debian's slurm-wlm and munge (apt-get, when
# slurmctld is missing), munged, slurmctld and slurmd started in the background from a temporary
# directory (no systemd, no cgroups, one fake GPU: gres.conf File=/dev/null). Checks: `sbatch
# --test-only` of both scripts; slurm-workers.sbatch as a real 2-task array on a file:// run
# (configs/smoke.toml) until its time limit, both tasks writing shards named by their
# TAFL_WORKER_ID, one task requeued with `scontrol requeue` and writing again; slurm-trainer.sbatch
# (its --gres=gpu:1 met) claiming the trainer fence, training and gating one round on those games,
# requeued and taking its own fence over, then scancel.
# CPUs, memory and time are overridden on the sbatch command line (1 CPU, 1G, 1-2 minutes); every
# other option is the script's. About 2.5 minutes on 2 cores (the install adds 10-60 s).
#   scripts/cluster/slurm-check.sh               # TAFL=path/to/tafl, default target/{release,debug}/tafl
# Exit 0: all passed; 1: a check failed (what failed and the daemons' logs are printed); 77:
# skipped, the reason printed (not root, no apt-get, no tafl binary: then only --test-only ran).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PATH:/usr/sbin:/sbin"
SKIPPED=77
started=$(date +%s)
say() { echo "slurm-check: $*" >&2; }
skip() { say "SKIPPED: $*"; exit "$SKIPPED"; }
tmp=""
show_logs() {
  [ -n "$tmp" ] && [ -d "$tmp/log" ] || return 0
  for f in "$tmp"/log/* "$tmp"/jobs/*.log; do
    [ -s "$f" ] || continue
    # A daemon's standard error repeats its log file: shown only when the log file is empty.
    [[ "$f" != *.out ]] || ! [ -s "${f%.out}.log" ] || continue
    echo "----- ${f#"$tmp"/} (last 40 lines)" >&2
    tail -n 40 "$f" >&2
  done
}
fail() { say "FAILED: $*"; show_logs; exit 1; }

# --- tafl binary --------------------------------------------------------------------------------
tafl="${TAFL:-}"
if [ -z "$tafl" ]; then
  for t in "${CARGO_TARGET_DIR:-target}/release/tafl" "${CARGO_TARGET_DIR:-target}/debug/tafl"; do
    if [ -x "$t" ]; then tafl=$t; break; fi
  done
fi
[ -z "$tafl" ] || tafl=$(realpath "$tafl")
[ -z "$tafl" ] || [ -x "$tafl" ] || fail "TAFL=$TAFL is not an executable"

# --- Slurm and munge -----------------------------------------------------------------------------
[ "$(id -u)" -eq 0 ] || skip "needs root (slurmd starts jobs as their user, munged and apt-get need it too)"
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
  command -v apt-get >/dev/null || skip "Slurm is not installed and there is no apt-get to install it (slurm-wlm, munge)"
  say "installing slurm-wlm and munge (apt-get)"
  t0=$(date +%s)
  out=$(apt-get update -qq 2>&1) || fail "apt-get update: $out"
  out=$(DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge 2>&1) \
    || fail "apt-get install slurm-wlm munge: $(tail -n 20 <<<"$out")"
  say "installed in $(( $(date +%s) - t0 ))s"
fi
for c in slurmctld slurmd munged sbatch sinfo squeue scontrol scancel; do
  command -v "$c" >/dev/null || fail "$c is missing after the install"
done

# --- configuration in a temporary directory ----------------------------------------------------
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tafl-slurm-check.XXXXXX")
# munged wants every directory above its socket searchable by all.
chmod 755 "$tmp"
mkdir -p "$tmp"/{log,state,spool,sock,jobs,tmp} "$tmp/munge"
chmod 700 "$tmp/munge"
pids=() names=()
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "${SLURM_CONF:-}" ] && [ -n "${pids[*]}" ]; then
    # Jobs first (their slurmstepd processes outlive slurmd), then the daemons.
    mapfile -t jobs < <(squeue -h -o %A 2>/dev/null || true)
    if [ "${#jobs[@]}" -gt 0 ]; then
      scancel "${jobs[@]}" 2>/dev/null || true
      for _ in $(seq 1 20); do [ -z "$(squeue -h -t R,CG 2>/dev/null)" ] && break; sleep 1; done
    fi
  fi
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  # A slurmstepd left behind by this check (it carries this check's SLURM_CONF).
  for env in /proc/[0-9]*/environ; do
    if grep -qsF "SLURM_CONF=$tmp/slurm.conf" "$env" 2>/dev/null; then
      p=${env#/proc/}; p=${p%/environ}
      [ "$p" = "$$" ] || kill -9 "$p" 2>/dev/null || true
    fi
  done
  if [ "$rc" -ne 0 ] && [ "$rc" -ne "$SKIPPED" ] && [ "${KEEP:-0}" != 0 ]; then
    say "kept $tmp (KEEP=1)"
  else
    rm -rf "$tmp"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

host=$(hostname -s)
# Two free ports next to each other (the standard 6817/6818 may belong to a real Slurm here).
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for _ in $(seq 1 50); do
  port=$(( 20000 + RANDOM % 20000 ))
  if port_free "$port" && port_free $((port + 1)); then break; fi
done
# The node as slurmd sees it: real CPUs, sockets, cores, memory.
hw=$(slurmd -C | head -n 1 | cut -d' ' -f2-)
cpus=$(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<<"$hw")
[ "${cpus:-0}" -ge 2 ] || skip "needs 2 CPUs (the two workers run at once), slurmd -C says: $hw"
head -c 1024 /dev/urandom > "$tmp/munge/munge.key"
chmod 400 "$tmp/munge/munge.key"
cat > "$tmp/slurm.conf" <<EOF
ClusterName=taflcheck
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
# cred_expire: a requeued job waits this long (default 120 s) before it may start again.
AuthInfo=socket=$tmp/sock/munge.sock,cred_expire=10
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
PlugStackConfig=$tmp/plugstack.conf
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=5,bf_interval=5
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
KillWait=5
MinJobAge=600
GresTypes=gpu
NodeName=$host NodeAddr=127.0.0.1 $hw Gres=gpu:1 State=UNKNOWN
PartitionName=check Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
# A GPU that is not there: slurmd drops a GPU without a device file, /dev/null stands in.
echo "NodeName=$host Name=gpu File=/dev/null" > "$tmp/gres.conf"
: > "$tmp/plugstack.conf"
export SLURM_CONF="$tmp/slurm.conf"

# --- daemons --------------------------------------------------------------------------------------
munged -F --socket="$tmp/sock/munge.sock" --key-file="$tmp/munge/munge.key" --log-file="$tmp/log/munged.log" \
  --pid-file="$tmp/munge/munged.pid" --seed-file="$tmp/munge/munged.seed" >"$tmp/log/munged.out" 2>&1 &
pids+=($!) names+=(munged)
for _ in $(seq 1 50); do [ -S "$tmp/sock/munge.sock" ] && break; sleep 0.2; done
[ -S "$tmp/sock/munge.sock" ] || fail "munged did not start"
slurmctld -D -c >"$tmp/log/slurmctld.out" 2>&1 &
pids+=($!) names+=(slurmctld)
slurmd -D -N "$host" >"$tmp/log/slurmd.out" 2>&1 &
pids+=($!) names+=(slurmd)
state=""
for i in $(seq 1 60); do
  for d in "${!pids[@]}"; do kill -0 "${pids[d]}" 2>/dev/null || fail "${names[d]} exited before the node came up"; done
  state=$(sinfo -h -N -n "$host" -o %t 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 1
done
[ "$state" = idle ] || fail "node $host not idle after 60 s (sinfo says '${state:-no answer}')"
say "slurmctld and slurmd up (ports $port, $((port + 1))), node $host idle: $hw, gres gpu:1 (fake) after ${i}s"

# --- sbatch --test-only ---------------------------------------------------------------------------
small=(--cpus-per-task=1 --mem=1G --chdir="$tmp/jobs")
run="file://$tmp/run"
workers=scripts/cluster/slurm-workers.sbatch
trainer=scripts/cluster/slurm-trainer.sbatch
for args in "--array=0-1 $workers" "$trainer"; do
  # shellcheck disable=SC2086 # $args: options and the script, split on purpose
  out=$(sbatch --test-only "${small[@]}" $args "$run" 2>&1) || fail "sbatch --test-only ${args}: $out"
  say "sbatch --test-only ${args##* }: $out"
done

[ -n "$tafl" ] || skip "no tafl binary (set TAFL, or build target/debug/tafl): only sbatch --test-only ran"

# --- the run ----------------------------------------------------------------------------------------
t0=$(date +%s)
"$tafl" selfplay --config configs/smoke.toml --run "$run" --games 8 --quiet >"$tmp/log/setup.log" 2>&1 \
  || fail "tafl selfplay --config configs/smoke.toml --run $run --games 8 (setting up the run)"
say "run $run set up (configs/smoke.toml, 8 games) in $(( $(date +%s) - t0 ))s"
export TAFL="$tafl" TMPDIR="$tmp/tmp"

# The state of a job (array task JOB_TASK), from the controller.
job_state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -n 1; }
job_field() { scontrol show job "$1" 2>/dev/null | sed -n "s/.* $2=\([^ ]*\).*/\1/p" | head -n 1; }
shards() { find "$tmp/run/selfplay" -name "*-slurm-$1-$2-*.bin" 2>/dev/null | wc -l; }
wait_for() { # SECONDS WHAT COMMAND...: polls COMMAND every second
  local secs=$1 what=$2; shift 2
  for _ in $(seq 1 "$secs"); do "$@" && return 0; sleep 1; done
  fail "$what: not within ${secs}s"
}

# --- workers: a real 2-task array until its time limit, one task requeued -------------------------
t0=$(date +%s)
sbatch --parsable --wait --array=0-1 --time=1 "${small[@]}" "$workers" "$run" >"$tmp/jobs/workers.sbatch" 2>&1 &
waiter=$!
wait_for 10 "sbatch printing the job id" grep -qs '^[0-9]' "$tmp/jobs/workers.sbatch"
jid=$(head -n 1 "$tmp/jobs/workers.sbatch")
say "workers: job array $jid submitted (--array=0-1 --time=1 --cpus-per-task=1 --mem=1G)"
running() { [ "$(job_state "${jid}_$1")" = RUNNING ]; }
wait_for 30 "task ${jid}_0 running" running 0
wait_for 30 "task ${jid}_1 running" running 1
has_shard() { [ "$(shards "$jid" "$1")" -gt 0 ]; }
wait_for 50 "a shard of task ${jid}_0 (TAFL_WORKER_ID slurm-$jid-0)" has_shard 0
before=$(shards "$jid" 0)
say "workers: task ${jid}_0 wrote its first shard after $(( $(date +%s) - t0 ))s; scontrol requeue ${jid}_0"
scontrol requeue "${jid}_0" || fail "scontrol requeue ${jid}_0"
requeued=$(date +%s)
restarted() { running 0 && [ "$(job_field "${jid}_0" Restarts)" = 1 ]; }
wait_for 60 "task ${jid}_0 running again after the requeue" restarted
say "workers: task ${jid}_0 running again $(( $(date +%s) - requeued ))s after the requeue (Restarts=1)"
more() { [ "$(shards "$jid" 0)" -gt "$before" ]; }
wait_for 80 "a new shard of the requeued task ${jid}_0" more
if wait "$waiter"; then rc=0; else rc=$?; fi
for task in 0 1; do
  s=$(job_state "${jid}_$task")
  # Workers play until the time limit ends them (sbatch --wait then exits 1): TIMEOUT is success.
  [ "$s" = TIMEOUT ] || fail "task ${jid}_$task ended $s, not TIMEOUT (sbatch --wait exit $rc)"
  n=$(shards "$jid" "$task")
  [ "$n" -gt 0 ] || fail "task ${jid}_$task: no shard named *-slurm-$jid-$task-*.bin under $tmp/run/selfplay"
  log="$tmp/jobs/tafl-selfplay-${jid}_$task.log"
  [ -f "$log" ] || fail "no log $log (#SBATCH --output)"
  # tafl's errors start "error:" (Slurm's own notes "slurmstepd-HOST: error: *** JOB ...").
  if grep -q '^error:' "$log"; then fail "task ${jid}_$task: $(grep '^error:' "$log" | head -n 5)"; fi
  listed=$(find "$tmp/run/selfplay" -name "*-slurm-$jid-$task-*.bin" -printf '%P\n' | sort)
  say "workers: task ${jid}_$task TIMEOUT, $n shards, $(head -n 1 <<<"$listed") ... $(tail -n 1 <<<"$listed")"
done
say "workers: done in $(( $(date +%s) - t0 ))s (sbatch --wait exit $rc: the tasks' time limit)"

# --- the trainer: claims the fence, trains a round, is requeued, is cancelled ----------------------
t0=$(date +%s)
tjid=$(sbatch --parsable --time=2 "${small[@]}" "$trainer" "$run" 2>&1) || fail "sbatch $trainer: $tjid"
say "trainer: job $tjid submitted (--gres=gpu:1 from the script, the fake GPU)"
trunning() { [ "$(job_state "$tjid")" = RUNNING ]; }
wait_for 30 "trainer job $tjid running" trunning
fences() { grep -ls "\"slurm-trainer-$tjid\"" "$tmp"/run/trainer/fence-*.json 2>/dev/null | wc -l; }
fenced() { [ "$(fences)" -ge "$1" ]; }
wait_for 60 "trainer/fence-*.json naming slurm-trainer-$tjid" fenced 1
say "trainer: $(cd "$tmp/run" && ls trainer/fence-*.json) claimed by slurm-trainer-$tjid after $(( $(date +%s) - t0 ))s"
# The workers left thousands of new games: one round (optimize, gate) publishes m000001.
trained() { [ -f "$tmp/run/models/m000001/meta.json" ] && grep -qs '^gate m000001' "$tmp/jobs/tafl-trainer-$tjid.log"; }
wait_for 90 "the trainer publishing and gating models/m000001 (a round on the workers' games)" trained
say "trainer: m000001 trained and gated after $(( $(date +%s) - t0 ))s: $(grep -h '^gate' "$tmp/jobs/tafl-trainer-$tjid.log" | head -n 1)"
[ "$(job_state "$tjid")" = RUNNING ] || fail "trainer job $tjid is $(job_state "$tjid") after its round (--loop goes on)"
# Preempted and requeued, it takes over its own fence (same TAFL_WORKER_ID): a second fence.
scontrol requeue "$tjid" || fail "scontrol requeue $tjid"
requeued=$(date +%s)
trestarted() { trunning && [ "$(job_field "$tjid" Restarts)" = 1 ]; }
wait_for 60 "trainer job $tjid running again after the requeue" trestarted
wait_for 60 "a second trainer/fence-*.json naming slurm-trainer-$tjid after the requeue" fenced 2
say "trainer: requeued, running again and holding $(cd "$tmp/run" && ls trainer/fence-*.json | tail -n 1) $(( $(date +%s) - requeued ))s later"
[ "$(job_state "$tjid")" = RUNNING ] || fail "trainer job $tjid is $(job_state "$tjid") after taking over its fence"
scancel "$tjid"
cancelled() { [ "$(job_state "$tjid")" = CANCELLED ]; }
wait_for 30 "trainer job $tjid CANCELLED after scancel" cancelled
log="$tmp/jobs/tafl-trainer-$tjid.log"
[ -f "$log" ] || fail "no log $log (#SBATCH --output)"
if grep -q '^error:' "$log"; then fail "trainer job $tjid: $(grep '^error:' "$log" | head -n 5)"; fi
say "trainer: cancelled with scancel, done in $(( $(date +%s) - t0 ))s"
say "passed in $(( $(date +%s) - started ))s"

#!/usr/bin/env bash
# Checks the launch files without a cluster: the Kubernetes manifests against the API's schemas
# (PyPI kubernetes-validate, installed once into $TAFL_CACHE/k8s-validate-venv, schemas bundled,
# no cluster needed) and the Slurm scripts' shell syntax and #SBATCH options (`sbatch --test-only`
# when Slurm is installed and a controller answers; otherwise only the syntax is checked, and the
# script says so). Then slurm-check.sh runs the Slurm scripts for real on a one-node Slurm that it
# starts here (root; installs slurm-wlm and munge with apt-get when missing; about 2.5 minutes;
# TAFL names the tafl binary, default target/{release,debug}/tafl); it skips, saying why, where it
# cannot (exit 77), and this script goes on.
set -euo pipefail
cd "$(dirname "$0")"
cache="${TAFL_CACHE:-$HOME/.cache/tafl}"
venv="$cache/k8s-validate-venv"
version=1.37.0
if ! [ -x "$venv/bin/kubernetes-validate" ]; then
  echo "installing kubernetes-validate $version into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "kubernetes-validate==$version" >&2
fi
# 1.32: a recent Kubernetes with indexed Jobs' backoffLimitPerIndex (beta since 1.29, on by default).
"$venv/bin/kubernetes-validate" --strict --kubernetes-version 1.32 kubernetes/*.yaml
for script in slurm-*.sbatch; do
  bash -n "$script"
  if command -v sbatch >/dev/null && sbatch --test-only "$script" s3://check/run >/dev/null 2>&1; then
    echo "$script: sbatch --test-only accepted it"
  else
    echo "$script: shell syntax checked; sbatch --test-only not run (no Slurm controller here)"
  fi
done
status=0
./slurm-check.sh || status=$?
case $status in
  0) echo "slurm-check.sh: both Slurm scripts ran on a one-node Slurm (workers, requeue, trainer)" ;;
  77) echo "slurm-check.sh: skipped (why: above)" ;;
  *) echo "slurm-check.sh: FAILED (exit $status)" >&2; exit "$status" ;;
esac

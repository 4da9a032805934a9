#!/usr/bin/env bash
# A local S3-compatible server for the tests of run directories in object storage: moto_server from
# PyPI's moto[server] 5.2.5 (Apache-2.0), installed once into a cached virtual environment, started
# on a free localhost port for the tests and stopped after them.
#
# Usage:
#   scripts/moto-server.sh install   # the venv in $TAFL_CACHE (default ~/.cache/tafl)/moto-venv
#   scripts/moto-server.sh test      # install, build tafl with --features s3, start moto, run the
#                                    # S3 tests (crates/tafl-cli/tests/s3.rs) against it
#   scripts/moto-server.sh serve     # install and run moto in the foreground (manual tries):
#                                    # AWS_ENDPOINT_URL=http://127.0.0.1:PORT AWS_ALLOW_HTTP=true ...
#
# The tests read the endpoint from TAFL_TEST_S3_ENDPOINT and skip themselves (with a message) when
# it is unset; this script sets it, and fails if they did not run. They also stop and restart the
# server (storage down for a while): TAFL_TEST_S3_RESTART names a command that does it
# (`$TAFL_TEST_S3_RESTART stop`, then `$TAFL_TEST_S3_RESTART start BUCKET`).
set -euo pipefail
cd "$(dirname "$0")/.."
version=5.2.5
cache="${TAFL_CACHE:-$HOME/.cache/tafl}"
venv="$cache/moto-venv"
moto="$venv/bin/moto_server"

install() {
  if [ -x "$moto" ] && "$venv/bin/python" -c "import moto, sys; sys.exit(moto.__version__ != '$version')" 2>/dev/null; then
    return
  fi
  echo "installing moto[server] $version into $venv" >&2
  start=$(date +%s)
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "moto[server]==$version" >&2
  echo "installed in $(( $(date +%s) - start ))s" >&2
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Starts moto on $port in the background, its pid in $state/pid; waits until it answers.
start_moto() {
  "$moto" -H 127.0.0.1 -p "$port" >"$state/moto.log" 2>&1 &
  echo $! >"$state/pid"
  for _ in $(seq 100); do
    if curl -s -o /dev/null "http://127.0.0.1:$port/"; then
      return
    fi
    sleep 0.1
  done
  echo "moto_server did not start on port $port:" >&2
  cat "$state/moto.log" >&2
  exit 1
}

stop_moto() {
  if [ -f "$state/pid" ]; then
    kill "$(cat "$state/pid")" 2>/dev/null || true
    wait "$(cat "$state/pid")" 2>/dev/null || true
    rm -f "$state/pid"
  fi
}

case "${1:-test}" in
  install) install ;;
  serve)
    install
    exec "$moto" -H 127.0.0.1 -p "${PORT:-$(free_port)}"
    ;;
  restart-helper)
    # Called by the tests: `restart-helper STATE stop` stops moto; `restart-helper STATE start
    # BUCKET` starts it again on the same port and makes the bucket again (moto keeps everything
    # in memory). Apart, so that a test keeps the storage down until a worker has met the outage.
    state="$2"; port="$(cat "$state/port")"
    case "$3" in
      stop) stop_moto ;;
      start) start_moto; curl -sf -X PUT "http://127.0.0.1:$port/$4" >/dev/null ;;
      *) echo "usage: $0 restart-helper STATE stop|start BUCKET" >&2; exit 2 ;;
    esac
    ;;
  test)
    install
    state="$(mktemp -d)"
    port="$(free_port)"
    echo "$port" >"$state/port"
    trap 'stop_moto; rm -rf "$state"' EXIT
    start_moto
    echo "moto_server $version on 127.0.0.1:$port" >&2
    export TAFL_TEST_S3_ENDPOINT="http://127.0.0.1:$port"
    export TAFL_TEST_S3_RESTART="$PWD/scripts/moto-server.sh restart-helper $state"
    export TAFL_TEST_S3_REQUIRED=1
    # What tafl and the tests' own store handles read; moto takes any credentials.
    export AWS_ENDPOINT_URL="$TAFL_TEST_S3_ENDPOINT" AWS_ALLOW_HTTP=true AWS_REGION=us-east-1
    export AWS_ACCESS_KEY_ID=tafl-test AWS_SECRET_ACCESS_KEY=tafl-test
    # The release build with the s3 feature by default; CI may pass its own flags (the feature
    # set decides whether Burn is rebuilt: see the README).
    # shellcheck disable=SC2086
    cargo test ${CARGO_TEST_FLAGS:---release -p tafl-cli --features s3} --locked --test s3 -- --test-threads=1 2>&1 | tee "$state/test.log"
    if ! grep -q "test result: ok" "$state/test.log" || grep -q "skipped: TAFL_TEST_S3_ENDPOINT" "$state/test.log"; then
      echo "the S3 tests did not run" >&2
      exit 1
    fi
    ;;
  *) echo "usage: $0 install|test|serve" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# The reference game server for `tafl online`'s tests: hnefatafl-server 6.4.1 from crates.io
# (AGPL; built from its published source, never vendored), installed once and cached.
#
# Usage:
#   scripts/hnefatafl-server.sh install   # build it into the cache (about 5-9 minutes, once)
#   scripts/hnefatafl-server.sh path      # print the binary's path (installing it if needed)
#   scripts/hnefatafl-server.sh test      # install, then run the tests against it (ignored ones,
#                                         # about a minute)
#
# The cache is $TAFL_CACHE (default ~/.cache/tafl)/hnefatafl-server-6.4.1. The tests start the
# server themselves on localhost:49152 with --skip-the-data-file --skip-advertising-updates.
set -euo pipefail
cd "$(dirname "$0")/.."
version=6.4.1
cache="${TAFL_CACHE:-$HOME/.cache/tafl}/hnefatafl-server-$version"
binary="$cache/bin/hnefatafl-server"

install() {
  if [ -x "$binary" ]; then
    return
  fi
  echo "installing hnefatafl-server $version into $cache" >&2
  start=$(date +%s)
  nice cargo install "hnefatafl-copenhagen@$version" --locked --no-default-features --features server \
    --bin hnefatafl-server --root "$cache" >&2
  echo "installed in $(( $(date +%s) - start ))s" >&2
}

case "${1:-test}" in
  install) install ;;
  path) install; echo "$binary" ;;
  test)
    install
    # The release build of tafl-cli by default (the development builds). CI sets
    # CARGO_TEST_FLAGS=--workspace to reuse the build of `cargo test --workspace`: `-p tafl-cli`
    # alone unifies features differently and would rebuild Burn.
    # shellcheck disable=SC2086
    TAFL_HNEFATAFL_SERVER="$binary" cargo test ${CARGO_TEST_FLAGS:---release -p tafl-cli} --locked \
      --test online_server -- --ignored --test-threads=1
    ;;
  *) echo "usage: $0 install|path|test" >&2; exit 2 ;;
esac

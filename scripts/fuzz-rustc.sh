#!/usr/bin/env bash
# RUSTC_WRAPPER of scripts/fuzz.sh: adds libFuzzer's coverage instrumentation (what cargo-fuzz
# adds through RUSTFLAGS) to this repository's crates and the fuzz targets only. Dependencies from
# the registry (Burn among them) build plain: instrumenting Burn would double the build and slow
# every run, for coverage of code that is not the parsers'. Build scripts and proc macros, which run
# at build time, stay plain too.
rustc="$1"
shift
plain=0
for arg in "$@"; do
  case "$arg" in
    */.cargo/registry/*|*/.cargo/git/*|build_script_*|proc-macro) plain=1 ;;
  esac
done
if [ "$plain" = 1 ]; then
  exec "$rustc" "$@"
fi
exec "$rustc" "$@" --cfg fuzzing -Cdebug-assertions -Coverflow-checks -Cpasses=sancov-module \
  -Cllvm-args=-sanitizer-coverage-level=4 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
  -Cllvm-args=-sanitizer-coverage-pc-table -Cllvm-args=-sanitizer-coverage-trace-compares

#!/usr/bin/env bash
# Burn's wgpu backend run for real on a machine without a GPU: Mesa's lavapipe (Debian's
# mesa-vulkan-drivers, a Vulkan 1.3 device in software on the CPU) runs wgpu's kernels, and
# crates/tafl-nn/tests/wgpu.rs checks the net's forward pass, five training steps and a
# checkpoint's round trip there against the `flex` CPU backend, within 1e-4. Then `tafl train`
# itself on that device: one whole iteration of configs/smoke.toml (warm start, self-play,
# training round, gate; the smoke config evaluates every second iteration) with the binary built
# with --features wgpu.
#
#   scripts/wgpu-lavapipe.sh        # installs the packages when missing (apt), then the tests
#
# Last run 2026-12-07 (Mesa 22.3.6's lavapipe, on one core): both tests passed (14 s), and the
# iteration ran whole in 306 s: 64 games of self-play at 265 evaluations/s, a training round of
# 30 steps at 16 samples/s, a gate of 8 games (the debug build: a check that it runs, not a speed).
# The build with --features wgpu takes about 20 minutes on 2 cores for the test, an hour more for
# the whole binary beside other work (its own target directory,
# target-wgpu, so that it never invalidates the main build); CI does not run it (it would take
# CI past 60 minutes) and checks that the feature compiles instead (`cargo check --features wgpu`).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -e /usr/share/vulkan/icd.d/lvp_icd.x86_64.json ] || ! ldconfig -p | grep -q libvulkan.so.1; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get install -y --no-install-recommends mesa-vulkan-drivers libvulkan1
fi
# Only the software device: cubecl would otherwise look for a discrete or integrated GPU first.
export VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
export CUBECL_WGPU_DEFAULT_DEVICE=Cpu
# lavapipe complains on every device opened when this is unset (harmless, but it buries the results).
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
cargo test --locked -p tafl-nn --features wgpu --test wgpu --target-dir target-wgpu -- --test-threads 1
# The whole training loop on the device: a tiny net on Brandubh, one iteration.
cargo build --locked -p tafl-cli --features wgpu --target-dir target-wgpu
run=$(mktemp -d)
trap 'rm -rf "$run"' EXIT
target-wgpu/debug/tafl train --config configs/smoke.toml --run "$run" --iterations 1 --quiet
test -f "$run/models/best" || { echo "no best model after one iteration" >&2; exit 1; }
echo "tafl train on wgpu (lavapipe): one iteration in $run, models: $(ls "$run/models" | tr '\n' ' ')"

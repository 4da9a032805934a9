#!/usr/bin/env bash
# The GPU check of issue 15: the net on a GPU through Burn's wgpu backend (Vulkan), measured
# against the CPU build in one table.
#
# Two halves, because the GPU machine has no Rust toolchain and reaches no network:
#
#   scripts/device-check.sh prepare   # here: build tafl with --features wgpu (release) and
#                                     # without, copy both binaries to .device/, download the
#                                     # Vulkan/EGL loaders (Debian amd64 .debs) to .gl/;
#                                     # both folders are ignored by git (.git/info/exclude)
#   scripts/device-check.sh run       # there, in a copy of the repository with .device and .gl
#                                     # carried: unpack the loaders, check that the adapter
#                                     # Vulkan offers is the NVIDIA GPU and not a software one
#                                     # (llvmpipe), then `tafl bench nn` for b6c64 and b10c128 at
#                                     # batch 256 and 1024 and training steps, on the GPU and on
#                                     # the CPU, and print one table (also to $OUT/device-check.md)
#
# With the `device` tool of this workplace:
#   run(command="scripts/device-check.sh run", carry=[".device", ".gl"], timeout_s=480)
#
# SECONDS_PER_BATCH (default 5) sets the time of each measurement.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
seconds="${SECONDS_PER_BATCH:-5}"

prepare() {
  for d in /.device/ /.gl/; do
    grep -qxF "$d" .git/info/exclude 2>/dev/null || echo "$d" >> .git/info/exclude
  done
  mkdir -p .device .gl
  cargo build --release --locked -p tafl-cli --features wgpu --target-dir target-wgpu
  cp target-wgpu/release/tafl .device/tafl-wgpu
  cargo build --release --locked -p tafl-cli
  cp target/release/tafl .device/tafl-cpu
  local lists=/tmp/device-check-apt
  mkdir -p "$lists/partial"
  local o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 "-oDir::State::Lists=$lists")
  apt-get "${o[@]}" update
  (cd .gl && apt-get "${o[@]}" download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
  du -sh .device .gl
}

# The adapter wgpu will choose: the GPU's Vulkan driver must be there, and no software one first.
check_adapter() {
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
  if ! ldconfig -p | grep -q libvulkan.so.1; then
    echo "device-check: no Vulkan loader (libvulkan.so.1) after unpacking .gl/" >&2
    exit 1
  fi
  local icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$icd" ]; then
    export VK_DRIVER_FILES="$icd"
  fi
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  # Only the NVIDIA driver may be offered: with a software rasteriser beside it wgpu could pick
  # it, and every figure below would be the CPU's.
  local drivers="${VK_DRIVER_FILES:-$(ls /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json 2>/dev/null | tr '\n' ':')}"
  echo "Vulkan drivers offered: $drivers"
  if echo "$drivers" | grep -qi "lvp\|llvmpipe\|swiftshader"; then
    echo "device-check: a software Vulkan driver is offered ($drivers); set VK_DRIVER_FILES to the GPU's" >&2
    exit 1
  fi
}

# Runs the GPU bench in the background and looks for it among the GPU's processes: proof that
# the work ran on the GPU and not on a CPU adapter.
bench_on_gpu() {
  local log=$1; shift
  .device/tafl-wgpu bench nn "$@" > "$log" 2>&1 &
  local pid=$! seen=no
  while kill -0 "$pid" 2>/dev/null; do
    if nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null | grep -qw "$pid" \
      || nvidia-smi 2>/dev/null | grep -qw "$pid"; then
      seen=yes
    fi
    sleep 1
  done
  wait "$pid"
  echo "$seen"
}

run() {
  check_adapter
  local out="${OUT:-/tmp}" table
  table="$out/device-check.md"
  {
    echo "| net | backend (conv) | positions/s at batch 256 | at batch 1024 | training samples/s (batch 256) |"
    echo "|---|---|---|---|---|"
  } > "$table"
  for net in b6c64 b10c128; do
    local seen
    seen=$(bench_on_gpu "$out/gpu-$net.log" --net "$net" --conv stock --batches 256,1024 --seconds "$seconds" --train --train-batch 256 \
      --train-conv stock)
    cat "$out/gpu-$net.log"
    if [ "$seen" != yes ]; then
      echo "device-check: tafl-wgpu never showed among the GPU's processes for $net" >&2
      exit 1
    fi
    .device/tafl-cpu bench nn --net "$net" --batches 256,1024 --seconds "$seconds" --conv fast --train --train-batch 256 \
      --train-conv fast > "$out/cpu-$net.log" 2>&1
    cat "$out/cpu-$net.log"
    for backend in gpu cpu; do
      local log="$out/$backend-$net.log" conv=stock
      [ "$backend" = cpu ] && conv=fast
      # Rows of the bench: batch, conv, calls, positions/s, ...; then `train step at batch N, conv
      # C: S samples/s` (one path on each backend: Burn's own on the GPU, the fast one on the CPU).
      local b256 b1024 train
      b256=$(awk -v c="$conv" '$1 == 256 && $2 == c { print $4 }' "$log")
      b1024=$(awk -v c="$conv" '$1 == 1024 && $2 == c { print $4 }' "$log")
      train=$(sed -n 's/^train step at batch [0-9]*, conv *[a-z]*: \([0-9.]*\) samples.*/\1/p' "$log")
      echo "| $net | $backend ($conv) | ${b256:-?} | ${b1024:-?} | ${train:-?} |" >> "$table"
    done
  done
  echo
  cat "$table"
}

case "${1:-}" in
  prepare) prepare ;;
  run) run ;;
  *) sed -n '2,21p' "$0"; exit 2 ;;
esac

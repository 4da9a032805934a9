#!/usr/bin/env bash
# Seeds the fuzz corpora (fuzz/corpus/TARGET/) with real inputs, so that the fuzzer starts
# from files that load: the shipped configs, a few archived games, and a shard and a checkpoint
# of a tiny Brandubh run (a net of about 5 KB; `tafl train` makes it in seconds).
#
# Usage: [TAFL=target/release/tafl] scripts/fuzz-seeds.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tafl="${TAFL:-$root/target/release/tafl}"
corpus="$root/fuzz/corpus"
mkdir -p "$corpus"/{config,archive,shard,checkpoint}
for f in "$root"/configs/*.toml; do
  cp "$f" "$corpus/config/seed-$(basename "$f")"
done
games="$root/../shared/data/games/copenhagen-11x11-archive.csv"
if [ -f "$games" ]; then
  head -c 400 "$games" > "$corpus/archive/seed-archive"
fi
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cat > "$scratch/tiny.toml" <<'TOML'
[run]
variant = "brandubh"
iterations = 1
seed = 3
[net]
blocks = 1
channels = 4
global-pool-interval = 0
policy-channels = 2
value-channels = 2
value-hidden = 4
[selfplay]
games-per-iteration = 8
games-in-flight = 8
shard-games = 8
full-visits = 8
fast-visits = 4
max-plies = 60
[optimize]
min-steps = 1
max-steps = 1
window-min = 1
[gate]
enabled = false
[evaluate]
every = 0
[warm-start]
records = []
teacher = ""
TOML
"$tafl" train --config "$scratch/tiny.toml" --run "$scratch/run" --quiet > "$scratch/train.log" 2>&1 \
  || { cat "$scratch/train.log"; exit 1; }
python3 - "$scratch/run" "$corpus" <<'PY'
import glob, os, struct, sys
run, corpus = sys.argv[1], sys.argv[2]

def fnv1a(b):
    h = 0xcbf29ce484222325
    for x in b:
        h = ((h ^ x) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h

# Checkpoint: flag byte, meta.json and config.json after their u16 lengths, then the weights.
model = os.path.join(run, "models", "m000000")
meta, config, weights = (open(os.path.join(model, n), "rb").read() for n in ("meta.json", "config.json", "weights.bpk"))
for flag in (0, 1):
    seed = bytes([flag]) + struct.pack("<H", len(meta)) + meta + struct.pack("<H", len(config)) + config + weights
    open(os.path.join(corpus, "checkpoint", f"seed-{flag}"), "wb").write(seed)

# Shard: the first samples of a self-play shard (selfplay/MODEL/*.bin), as a whole shard (mode 0) and as a bare payload
# (mode 1; the target adds the header).
shard = open(sorted(glob.glob(os.path.join(run, "selfplay", "**", "*.bin"), recursive=True))[0], "rb").read()
(head_len,) = struct.unpack_from("<I", shard, 8)
head, payload = bytearray(shard[12:12 + head_len]), shard[12 + head_len:]
def sample_end(at):  # 3 masks of 4 u64, u8, u8, u16, u16, Vec<(u16, f32)>, 3 f32
    at += 96 + 6
    (n,) = struct.unpack_from("<Q", payload, at)
    return at + 8 + 6 * n + 12
end = 8
for _ in range(3):
    end = sample_end(end)
body = struct.pack("<Q", 3) + payload[8:end]
# ShardHeader: format u32, variant String, encoding u32, size u8, count u64, games u64,
# model String, created u64, payload_len u64, checksum u64.
(vlen,) = struct.unpack_from("<Q", head, 4)
count_at = 4 + 8 + vlen + 4 + 1
struct.pack_into("<Q", head, count_at, 3)
(mlen,) = struct.unpack_from("<Q", head, count_at + 16)
tail = count_at + 16 + 8 + mlen + 8
struct.pack_into("<QQ", head, tail, len(body), fnv1a(body))
whole = shard[:8] + struct.pack("<I", len(head)) + bytes(head) + body
open(os.path.join(corpus, "shard", "seed-0"), "wb").write(b"\x00" + whole)
open(os.path.join(corpus, "shard", "seed-1"), "wb").write(b"\x01" + body)
print(f"seeds: checkpoint {len(meta) + len(config) + len(weights)} bytes, shard {len(whole)} bytes")
PY

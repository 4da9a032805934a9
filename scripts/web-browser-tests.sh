#!/usr/bin/env bash
# Browser tests of `tafl serve` (crates/tafl-web/browser/test.cjs) in Debian's Chromium, driven by
# npm's playwright-core (which downloads no browser). Installs what it needs once:
#   chromium + chromium-driver (apt-get, when missing), playwright-core (npm, cached in
#   $TAFL_WEB_TEST_CACHE, default ~/.cache/tafl-web-tests), then builds tafl (release).
# Screenshots of each view go to $ARTIFACTS (default target/web-browser-tests).
#
#   scripts/web-browser-tests.sh              # a fake run folder written by the test
#   scripts/web-browser-tests.sh RUN_DIR      # a real run (for screenshots)
#   TAFL=target/debug/tafl scripts/...        # a tafl binary already built (CI: the one
#                                             # `cargo test --workspace` built), no release build
set -euo pipefail
cd "$(dirname "$0")/.."
PLAYWRIGHT_VERSION=1.65.1
CACHE=${TAFL_WEB_TEST_CACHE:-$HOME/.cache/tafl-web-tests}
ARTIFACTS=${ARTIFACTS:-target/web-browser-tests}

if ! command -v chromium >/dev/null; then
    echo "installing chromium and chromium-driver (apt-get)"
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null
fi
if [ ! -f "$CACHE/node_modules/playwright-core/package.json" ] \
    || ! grep -q "\"version\": \"$PLAYWRIGHT_VERSION\"" "$CACHE/node_modules/playwright-core/package.json"; then
    echo "installing playwright-core $PLAYWRIGHT_VERSION (npm) into $CACHE"
    mkdir -p "$CACHE"
    (cd "$CACHE" && npm install --no-audit --no-fund --loglevel=error "playwright-core@$PLAYWRIGHT_VERSION")
fi
if [ -z "${TAFL:-}" ]; then
    cargo build --release --locked -p tafl-cli
    TAFL=target/release/tafl
fi
NODE_PATH="$CACHE/node_modules" node crates/tafl-web/browser/test.cjs "$(realpath "$TAFL")" "$ARTIFACTS" "$@"

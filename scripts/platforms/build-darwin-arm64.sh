#!/usr/bin/env bash
# darwin-arm64: on a macOS runner only (the release workflow), with Apple's toolchain: Zig cannot
# build it (the SQLite3MC amalgamation includes sys/syscall.h, which Zig's macOS headers lack).
# macOS 11 is the floor (the first on Apple silicon).
set -euo pipefail
here="$(dirname "$0")"
[ "$(uname -s)" = Darwin ] || { echo "build-darwin-arm64.sh runs on macOS only" >&2; exit 1; }
rustup target list --installed | grep -qx aarch64-apple-darwin || rustup target add aarch64-apple-darwin
export MACOSX_DEPLOYMENT_TARGET=11.0
exec "$here/build.sh" darwin-arm64 aarch64-apple-darwin

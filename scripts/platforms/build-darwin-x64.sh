#!/usr/bin/env bash
# darwin-x64: on a macOS runner only (the release workflow), with Apple's toolchain: Zig cannot
# build it (the SQLite3MC amalgamation includes sys/syscall.h, which Zig's macOS headers lack).
# macOS 10.15 is the floor (Node.js 20's own).
set -euo pipefail
here="$(dirname "$0")"
[ "$(uname -s)" = Darwin ] || { echo "build-darwin-x64.sh runs on macOS only" >&2; exit 1; }
rustup target list --installed | grep -qx x86_64-apple-darwin || rustup target add x86_64-apple-darwin
export MACOSX_DEPLOYMENT_TARGET=10.15
exec "$here/build.sh" darwin-x64 x86_64-apple-darwin

#!/usr/bin/env bash
# linux-arm64-gnu: glibc 2.17 is the floor (cargo-zigbuild links against glibc 2.17's symbols).
set -euo pipefail
here="$(dirname "$0")"
source "$here/tools.sh" aarch64-unknown-linux-gnu
# SQLite (and mimalloc) optimized for size: Zig's clang at -O2 makes SQLite's code 16 % larger
# than gcc's, and the x64 package 1.61 MB packed, over the 1.5 MB limit (docs/install.md).
export CFLAGS_aarch64_unknown_linux_gnu="-Os"
exec "$here/build.sh" linux-arm64-gnu aarch64-unknown-linux-gnu.2.17 --cross-compile

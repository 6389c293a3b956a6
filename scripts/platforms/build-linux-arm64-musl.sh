#!/usr/bin/env bash
# linux-arm64-musl: as linux-x64-musl, for aarch64.
set -euo pipefail
here="$(dirname "$0")"
source "$here/tools.sh" aarch64-unknown-linux-musl
export RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=-crt-static"
# SQLite (and mimalloc) optimized for size: Zig's clang at -O2 makes SQLite's code 16 % larger
# than gcc's, and the x64 package 1.61 MB packed, over the 1.5 MB limit (docs/install.md).
export CFLAGS_aarch64_unknown_linux_musl="-Os"
# mimalloc's thread-locals in the local-dynamic TLS model, as for linux-x64-musl: musl's loader
# refuses initial-exec TLS in a library loaded by dlopen.
exec "$here/build.sh" linux-arm64-musl aarch64-unknown-linux-musl --cross-compile \
  --features mimalloc/local_dynamic_tls

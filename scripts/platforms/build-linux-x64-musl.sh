#!/usr/bin/env bash
# linux-x64-musl: an addon is loaded by a process that has a libc already; it links musl
# dynamically (Rust's musl targets link it statically unless told otherwise).
set -euo pipefail
here="$(dirname "$0")"
source "$here/tools.sh" x86_64-unknown-linux-musl
export RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=-crt-static"
# SQLite (and mimalloc) optimized for size: Zig's clang at -O2 makes SQLite's code 16 % larger
# than gcc's, and the x64 package 1.61 MB packed, over the 1.5 MB limit (docs/install.md).
export CFLAGS_x86_64_unknown_linux_musl="-Os"
# mimalloc's thread-locals in the local-dynamic TLS model: its default, initial-exec, needs a
# slot in the static TLS block that musl's loader does not give a library loaded by dlopen (glibc
# keeps spare room for it), so the addon did not load: "initial-exec TLS resolves to dynamic
# definition" (test/platforms/musl.test.mjs runs it in Bun's musl build).
exec "$here/build.sh" linux-x64-musl x86_64-unknown-linux-musl --cross-compile \
  --features mimalloc/local_dynamic_tls

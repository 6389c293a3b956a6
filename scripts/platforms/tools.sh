#!/usr/bin/env bash
# Installs what the cross builds need, idempotently, pinned: Zig (PyPI's ziglang), which
# cargo-zigbuild (PyPI's prebuilt wheel of the crates.io tool) uses as C compiler and linker,
# and the Rust targets' standard libraries. Sourced by the build scripts beside it: puts
# `zig` on PATH.
#   scripts/platforms/tools.sh [rust-target ...]
set -euo pipefail
ZIGLANG_VERSION=0.17.1
CARGO_ZIGBUILD_VERSION=0.24.1

if ! python3 -m ziglang version 2>/dev/null | grep -qx "$ZIGLANG_VERSION" ||
  ! cargo-zigbuild --version 2>/dev/null | grep -q " $CARGO_ZIGBUILD_VERSION\$"; then
  python3 -m pip install --quiet --disable-pip-version-check \
    "ziglang==$ZIGLANG_VERSION" "cargo-zigbuild==$CARGO_ZIGBUILD_VERSION"
fi
# napi build -x and cargo-zigbuild look for `zig` on PATH: the one in the wheel.
zig_dir="$(python3 -c 'import ziglang, os; print(os.path.dirname(ziglang.__file__))')"
export PATH="$zig_dir:$PATH"
for target in "$@"; do
  rustup target list --installed | grep -qx "$target" || rustup target add "$target"
done

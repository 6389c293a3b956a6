#!/usr/bin/env bash
# win32-x64-gnu: cross-built on Linux with cargo-zigbuild (Zig's MinGW-w64), loaded by any
# Windows Node.js ≥ 20 (N-API is the same whatever compiler built the addon). Two things the
# plain build trips on, both handled here:
#  - mimalloc's C code uses __DATE__, an error under Zig's -Werror=date-time: made a warning
#    (and, as on Linux, the C code is optimized for size: -Os);
#  - napi-build links `-lnode` from $LIBNODE_PATH, where it wants a libnode.dll: napi-sys
#    imports N-API from node.exe on windows-gnu (on MSVC it looks it up at run time). So this
#    makes an import library for node.exe with Zig's dlltool from a .def of every N-API
#    function napi-sys declares, beside an empty libnode.dll for napi-build's check. libuv is
#    looked up at run time (handoff/poller.rs), so the addon imports nothing else from node.exe.
# napi build -x rejects windows-gnu targets (it would use cargo-xwin), so this calls
# cargo-zigbuild itself, as napi build -x does for the Linux targets.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/tools.sh" x86_64-pc-windows-gnu
root="$(cd "$here/../.." && pwd)"
cd "$root"
platform=win32-x64-gnu
rust_target=x86_64-pc-windows-gnu
out="target/platforms/$platform"
libnode="target/platforms/libnode-$rust_target"
rm -rf "$out" "$libnode"
mkdir -p "$out" "$libnode"
napi_sys="$(cargo metadata --format-version 1 --locked --filter-platform "$rust_target" |
  node -e 'const m = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log(require("path").dirname(m.packages.find((p) => p.name === "napi-sys").manifest_path))')"
{
  echo "LIBRARY node.exe"
  echo "EXPORTS"
  grep -ohE '\bfn (napi|node_api)_[a-z0-9_]+' "$napi_sys"/src/*.rs | sed 's/^fn //' | sort -u
} >"$libnode/node.def"
zig dlltool -m i386:x86-64 -d "$libnode/node.def" -l "$libnode/libnode.a"
: >"$libnode/libnode.dll"
started=$SECONDS
LIBNODE_PATH="$root/$libnode" CFLAGS_x86_64_pc_windows_gnu="-Wno-error=date-time -Os" \
  cargo zigbuild --release -p resqlite-engine --target "$rust_target"
cp "npm/$platform/package.json" "npm/$platform/README.md" "$out/"
binary="resqlite.$platform.node"
[ "$(node -p "require('./$out/package.json').main")" = "$binary" ]
# Where cargo put it: CARGO_TARGET_DIR, if set (napi build finds it there for the other scripts).
cp "${CARGO_TARGET_DIR:-target}/$rust_target/release/resqlite_engine.dll" "$out/$binary"
echo "built $out/$binary ($(wc -c <"$out/$binary" | tr -d " ") bytes) in $((SECONDS - started)) s"

#!/usr/bin/env bash
# Builds Litestream's VFS read-replica extension (litestream-vfs.so) from its Go module, for
# bench/experiments/replica-lag.mjs (experiments/052). Needs Go and a C compiler (cgo).
# Usage: bash bench/experiments/build-litestream-vfs.sh <output dir>   (takes a few minutes)
set -euo pipefail
out="$(mkdir -p "$1" && cd "$1" && pwd)"
version=v0.5.18
go=$(command -v go || echo /usr/local/go/bin/go)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
"$go" mod init vfsbuild >/dev/null 2>&1
"$go" mod download "github.com/benbjohnson/litestream@$version"
src="$("$go" mod download -json "github.com/benbjohnson/litestream@$version" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
(cd "$src" && CGO_ENABLED=1 "$go" build -tags vfs,SQLITE3VFS_LOADABLE_EXT -buildmode=c-archive \
  -o "$work/litestream-vfs.a" ./cmd/litestream-vfs)
cp "$src"/src/*.h "$src/src/litestream-vfs.c" "$work/"
chmod u+w "$work"/*.h "$work"/*.c
gcc -DSQLITE3VFS_LOADABLE_EXT -fPIC -shared -I"$work" -o "$out/litestream-vfs.so" \
  "$work/litestream-vfs.c" "$work/litestream-vfs.a" -lpthread -ldl -lm
echo "$out/litestream-vfs.so"

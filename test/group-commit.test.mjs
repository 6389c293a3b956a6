// Writes queued together may commit together (experiments/015); each must still behave as if
// it ran alone: its own result, its own error, in call order, nothing lost or doubled.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ResqliteError } from '../dist/esm/index.mjs';
import { openDb } from './helpers.mjs';

test('concurrent writes keep their own results and errors; a failing one takes nothing else with it', async (t) => {
  const db = await openDb(t);
  await db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT UNIQUE)');
  const calls = [];
  for (let i = 0; i < 200; i++) {
    // Every 10th repeats an earlier value: a UNIQUE violation in the middle of the queue.
    const v = i % 10 === 9 ? `v${i - 1}` : `v${i}`;
    calls.push(db.execute('INSERT INTO t (v) VALUES (?)', [v]));
  }
  const results = await Promise.allSettled(calls);
  let expectedRowid = 0;
  results.forEach((r, i) => {
    if (i % 10 === 9) {
      assert.equal(r.status, 'rejected', `call ${i} should have failed`);
      assert.ok(r.reason instanceof ResqliteError);
      assert.equal(r.reason.code, 'SQLITE_CONSTRAINT_UNIQUE');
    } else {
      assert.equal(r.status, 'fulfilled', `call ${i} failed: ${r.reason?.message}`);
      expectedRowid++;
      assert.deepEqual(r.value, { changes: 1, lastInsertRowid: expectedRowid }, `call ${i}`);
    }
  });
  const rows = await db.select('SELECT id, v FROM t ORDER BY id');
  assert.equal(rows.length, 180);
  assert.deepEqual(rows.slice(0, 3), [{ id: 1, v: 'v0' }, { id: 2, v: 'v1' }, { id: 3, v: 'v2' }]);
});

test("SQLite's own rollback in the middle of queued writes fails that write only", async (t) => {
  const db = await openDb(t);
  await db.execute(`CREATE TABLE t (v INTEGER);
    CREATE TRIGGER no_13 BEFORE INSERT ON t WHEN NEW.v = 13 BEGIN SELECT RAISE(ROLLBACK, 'thirteen'); END`);
  const results = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => db.execute('INSERT INTO t VALUES (?)', [i])));
  results.forEach((r, i) => {
    if (i === 13) {
      assert.equal(r.status, 'rejected');
      assert.equal(r.reason.code, 'SQLITE_CONSTRAINT_TRIGGER');
      assert.match(r.reason.message, /thirteen/);
    } else {
      assert.equal(r.status, 'fulfilled', `write ${i} failed: ${r.reason?.message}`);
    }
  });
  const values = (await db.select('SELECT v FROM t ORDER BY rowid')).map((r) => r.v);
  assert.deepEqual(values, Array.from({ length: 30 }, (_, i) => i).filter((i) => i !== 13));
});

test('statements that cannot share a transaction run in their place in the queue', async (t) => {
  const db = await openDb(t);
  await db.execute('CREATE TABLE t (v INTEGER)');
  const calls = [
    db.execute('INSERT INTO t VALUES (1)'),
    db.execute('INSERT INTO t VALUES (2)'),
    db.execute('CREATE TABLE u (w INTEGER)'),
    db.execute('INSERT INTO u SELECT count(*) FROM t'),
    db.execute('INSERT INTO t VALUES (3)'),
    db.execute('PRAGMA user_version = 7'),
    db.execute('INSERT INTO t VALUES (4)'),
    db.execute('VACUUM'),
    db.execute('INSERT INTO t VALUES (5)'),
  ];
  await Promise.all(calls);
  assert.deepEqual((await db.select('SELECT v FROM t ORDER BY rowid')).map((r) => r.v), [1, 2, 3, 4, 5]);
  assert.deepEqual(await db.select('SELECT w FROM u'), [{ w: 2 }]);
  assert.deepEqual(await db.select('PRAGMA user_version'), [{ user_version: 7 }]);
});

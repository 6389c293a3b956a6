// Live-query oracle: a seeded random workload (inserts, updates, deletes, no-op updates,
// INSERT OR REPLACE, cascades, a trigger, transactions, rollbacks, nested savepoint rollbacks)
// over four tables, watched by many live queries. After each burst settles, every stream's
// last delivered rows must equal a fresh select() of the same SQL; at the end the counters must
// show that column filtering skipped work.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { openDb, prng } from './helpers.mjs'
import { collect, counters, settle } from './live-helpers.mjs'

const SCHEMA = `
  CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER, city TEXT, bio TEXT);
  CREATE TABLE posts (id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                      title TEXT, score INTEGER, draft INTEGER NOT NULL DEFAULT 0, body TEXT);
  CREATE TABLE likes (user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                      post_id INTEGER NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
                      weight INTEGER, note TEXT, PRIMARY KEY (user_id, post_id)) WITHOUT ROWID;
  CREATE TABLE audit (id INTEGER PRIMARY KEY, post_id INTEGER, old_score INTEGER, new_score INTEGER);
  CREATE TRIGGER posts_score AFTER UPDATE OF score ON posts WHEN old.score IS NOT new.score
    BEGIN INSERT INTO audit (post_id, old_score, new_score) VALUES (new.id, old.score, new.score); END;
  CREATE VIEW post_stats AS
    SELECT p.id, p.title, u.name AS author, (SELECT count(*) FROM likes l WHERE l.post_id = p.id) AS likes
    FROM posts p JOIN users u ON u.id = p.user_id WHERE p.draft = 0;
`

// users.bio, posts.body and likes.note are read by no stream: updates of them only skip.
const STREAMS = [
  ['SELECT id, name FROM users ORDER BY id'],
  ['SELECT id, name, age FROM users WHERE age >= 30 ORDER BY id'],
  ['SELECT city, count(*) AS n FROM users GROUP BY city ORDER BY city'],
  ['SELECT count(*) AS n FROM users'],
  ['SELECT id, title FROM posts WHERE draft = 0 ORDER BY id'],
  ['SELECT user_id, count(*) AS n, sum(score) AS total FROM posts GROUP BY user_id ORDER BY user_id'],
  ['SELECT p.id, p.title, u.name FROM posts p JOIN users u ON u.id = p.user_id ORDER BY p.id'],
  ['SELECT * FROM post_stats ORDER BY id'],
  [
    'WITH top AS (SELECT post_id, sum(weight) AS w FROM likes GROUP BY post_id) ' +
      'SELECT p.title, top.w FROM top JOIN posts p ON p.id = top.post_id ORDER BY top.w DESC, p.id LIMIT 5',
  ],
  ['SELECT count(*) AS n FROM likes'],
  [
    'SELECT u.name, count(l.post_id) AS liked FROM users u LEFT JOIN likes l ON l.user_id = u.id GROUP BY u.id ORDER BY u.id',
  ],
  ['SELECT id, score FROM posts WHERE score > ? ORDER BY id', [50]],
  ['SELECT id FROM users WHERE city = ? ORDER BY id', ['paris']],
  ['SELECT max(age) AS oldest, min(age) AS youngest FROM users'],
  ['SELECT count(*) AS n, sum(new_score - old_score) AS drift FROM audit'],
  ['SELECT name FROM users WHERE id IN (SELECT user_id FROM posts WHERE draft = 1) ORDER BY name, id'],
  ['SELECT post_id, user_id, weight FROM likes WHERE weight >= 3 ORDER BY post_id, user_id'],
  ['SELECT title FROM posts ORDER BY score DESC, id LIMIT 3'],
  [
    'SELECT :city AS city, count(*) AS n FROM users u JOIN posts p ON p.user_id = u.id WHERE u.city = :city',
    { city: 'oslo' },
  ],
]

const CITIES = ['paris', 'oslo', 'rome', 'lima']
const NAMES = ['ann', 'bob', 'cy', 'dee', 'eve', 'fay', 'gus', 'hal']

test('oracle: after every burst, every live query equals a fresh select', { timeout: 600_000 }, async (t) => {
  const db = await openDb(t)
  await db.execute(SCHEMA)
  const rand = prng(0x5eed1234)
  const int = (n) => Math.floor(rand() * n)
  const pick = (xs) => xs[int(xs.length)]

  // some starting data
  for (let i = 0; i < 8; i++) {
    await db.execute('INSERT INTO users (name, age, city, bio) VALUES (?, ?, ?, ?)', [
      pick(NAMES),
      18 + int(50),
      pick(CITIES),
      'bio',
    ])
  }
  for (let i = 0; i < 12; i++) {
    await db.execute('INSERT INTO posts (user_id, title, score, draft, body) VALUES (?, ?, ?, ?, ?)', [
      1 + int(8),
      `p${i}`,
      int(100),
      int(4) === 0 ? 1 : 0,
      'body',
    ])
  }

  const baseline = await counters(db)
  const streams = STREAMS.map(([sql, params]) => ({ sql, params, c: collect(db.stream(sql, params)) }))
  await settle(
    db,
    streams.map((s) => s.c),
    baseline,
  )

  let commits = 0
  let rolledBack = 0
  const ops = { done: 0, failed: 0 }

  /** One random write through `x` (the db, or a transaction). Constraint failures are part of the workload. */
  async function randomWrite(x, ids) {
    const r = rand()
    const uid = () => (ids.users.length && rand() < 0.9 ? pick(ids.users) : 1 + int(40))
    const pid = () => (ids.posts.length && rand() < 0.9 ? pick(ids.posts) : 1 + int(60))
    let sql
    let params
    if (r < 0.07)
      [sql, params] = [
        'INSERT INTO users (name, age, city, bio) VALUES (?, ?, ?, ?)',
        [pick(NAMES), 18 + int(50), pick(CITIES), `b${int(9)}`],
      ]
    else if (r < 0.2)
      [sql, params] = ['UPDATE users SET bio = ? WHERE id = ?', [`bio${int(1000)}`, uid()]] // unread column
    else if (r < 0.25) [sql, params] = ['UPDATE users SET age = ? WHERE id = ?', [18 + int(50), uid()]]
    else if (r < 0.28) [sql, params] = ['UPDATE users SET city = ?, bio = ? WHERE id = ?', [pick(CITIES), 'x', uid()]]
    else if (r < 0.3) [sql, params] = ['UPDATE users SET name = ? WHERE id = ?', [pick(NAMES), uid()]]
    else if (r < 0.32)
      [sql, params] = ['DELETE FROM users WHERE id = ?', [uid()]] // cascades to posts and likes
    else if (r < 0.4)
      [sql, params] = [
        'INSERT INTO posts (user_id, title, score, draft, body) VALUES (?, ?, ?, ?, ?)',
        [uid(), `t${int(1000)}`, int(100), int(4) === 0 ? 1 : 0, 'b'],
      ]
    else if (r < 0.52)
      [sql, params] = ['UPDATE posts SET body = ? WHERE id = ?', [`body${int(1000)}`, pid()]] // unread column
    else if (r < 0.58)
      [sql, params] = ['UPDATE posts SET score = ? WHERE id = ?', [int(100), pid()]] // fires the trigger
    else if (r < 0.61) [sql, params] = ['UPDATE posts SET draft = 1 - draft WHERE id = ?', [pid()]]
    else if (r < 0.63) [sql, params] = ['UPDATE posts SET title = ? WHERE id = ?', [`t${int(1000)}`, pid()]]
    else if (r < 0.65) [sql, params] = ['DELETE FROM posts WHERE id = ?', [pid()]]
    else if (r < 0.74)
      [sql, params] = [
        'INSERT OR REPLACE INTO likes (user_id, post_id, weight, note) VALUES (?, ?, ?, ?)',
        [uid(), pid(), 1 + int(5), 'n'],
      ]
    else if (r < 0.82)
      [sql, params] = ['UPDATE likes SET note = ? WHERE post_id = ?', [`note${int(1000)}`, pid()]] // unread column
    else if (r < 0.86) [sql, params] = ['UPDATE likes SET weight = weight + 1 WHERE user_id = ?', [uid()]]
    else if (r < 0.88) [sql, params] = ['DELETE FROM likes WHERE post_id = ?', [pid()]]
    else if (r < 0.94)
      [sql, params] = ['UPDATE users SET name = name, age = age WHERE id = ?', [uid()]] // no value changes
    else if (r < 0.96)
      [sql, params] = ['UPDATE posts SET score = score WHERE user_id = ?', [uid()]] // no value changes, no trigger row
    else if (r < 0.97)
      [sql, params] = ['DELETE FROM likes', undefined] // no WHERE
    else
      [sql, params] = [
        'INSERT INTO users (id, name, age, city) VALUES (?, ?, 40, ?) ON CONFLICT(id) DO UPDATE SET age = excluded.age',
        [uid(), pick(NAMES), pick(CITIES)],
      ]
    try {
      await x.execute(sql, params)
      ops.done++
      return true
    } catch (e) {
      if (!String(e.code).startsWith('SQLITE_CONSTRAINT')) throw e
      ops.failed++
      return false
    }
  }

  async function currentIds() {
    const users = (await db.select('SELECT id FROM users')).map((r) => r.id)
    const posts = (await db.select('SELECT id FROM posts')).map((r) => r.id)
    return { users, posts }
  }

  const BURSTS = 60
  for (let burst = 0; burst < BURSTS; burst++) {
    const ids = await currentIds()
    const steps = 3 + int(8)
    const pending = []
    for (let s = 0; s < steps; s++) {
      const kind = rand()
      if (kind < 0.55) {
        // autocommit writes: some awaited, some left in flight (overlapping the re-runs)
        const p = randomWrite(db, ids).then((ok) => ok && commits++)
        if (rand() < 0.5) await p
        else pending.push(p)
      } else if (kind < 0.75) {
        await db.transaction(async (tx) => {
          for (let i = 0, n = 1 + int(5); i < n; i++) await randomWrite(tx, ids)
        })
        commits++
      } else if (kind < 0.85) {
        await assert.rejects(
          db.transaction(async (tx) => {
            for (let i = 0, n = 1 + int(5); i < n; i++) await randomWrite(tx, ids)
            throw new Error('rollback')
          }),
          /rollback/,
        )
        rolledBack++
      } else {
        // a committed transaction with a nested savepoint rolled back (and one released)
        await db.transaction(async (tx) => {
          await randomWrite(tx, ids)
          await tx
            .transaction(async (inner) => {
              for (let i = 0, n = 1 + int(4); i < n; i++) await randomWrite(inner, ids)
              throw new Error('undo')
            })
            .catch((e) => assert.match(e.message, /undo/))
          await tx.transaction(async (inner) => randomWrite(inner, ids))
          if (rand() < 0.5) await randomWrite(tx, ids)
        })
        commits++
      }
    }
    await Promise.all(pending)
    await settle(
      db,
      streams.map((s) => s.c),
      baseline,
    )
    for (const [i, s] of streams.entries()) {
      assert.deepStrictEqual(s.c.last, await db.select(s.sql, s.params), `burst ${burst}, stream ${i}: ${s.sql}`)
      assert.deepStrictEqual(s.c.errors, [], `stream ${i} must not fail`)
    }
  }

  const end = await counters(db)
  const requeries = end.requeries - baseline.requeries
  const skipped = end.skippedByColumns - baseline.skippedByColumns
  t.diagnostic(
    `${commits} commits, ${rolledBack} rollbacks, ${ops.done} writes (${ops.failed} failed on constraints); ` +
      `${STREAMS.length} streams: ${requeries} requeries, ${skipped} skipped by columns, ` +
      `${end.unchangedSuppressed - baseline.unchangedSuppressed} unchanged suppressed, ${end.emissions - baseline.emissions} emissions`,
  )
  assert.ok(commits > 100, `the workload committed enough (${commits})`)
  assert.ok(rolledBack > 5, `the workload rolled back enough (${rolledBack})`)
  assert.ok(skipped > 0, 'column filtering skipped work')
  assert.ok(
    requeries < STREAMS.length * commits,
    `requeries (${requeries}) < streams × commits (${STREAMS.length * commits})`,
  )
  assert.ok(requeries > 0)
  assert.equal(end.fallbackAll, baseline.fallbackAll, "every stream's reads were recorded")
  assert.equal(end.active, STREAMS.length)
  assert.equal(end.queries, STREAMS.length)
  for (const s of streams) assert.equal(s.c.completed, 0)
})

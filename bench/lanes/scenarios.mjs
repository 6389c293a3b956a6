// Two application scenarios over the generated chat and feed tables (data.mjs).
import { CHAT, FEED_POSTS, rng, zipf } from '../data.mjs'
import { measure } from '../measure.mjs'
import { hashRows, makeCase } from './common.mjs'
import { openLive } from './live.mjs'

const CHAT_OPS = 200 // operations per chat sample
const CHAT_CLIENTS = 8 // async libraries: requests in flight (8 clients of a server)
const SEEN_BASE = 1_800_000_000 // last_seen values written by the scenario are ≥ this

// The chat sample: a fixed, seeded mix of 40 % user point reads, 30 % "last 20 messages of a
// conversation" joined with their authors (conversations Zipf-distributed), 20 % new messages,
// 10 % last_seen updates (max(), so concurrent order does not change the outcome).
export function chatOps() {
  const rand = rng(31)
  const conv = zipf(rand, CHAT.conversations)
  const ops = []
  let nextId = CHAT.messages + 1
  for (let i = 0; i < CHAT_OPS; i++) {
    const x = rand()
    const user = 1 + Math.floor(rand() * CHAT.users)
    if (x < 0.4) ops.push({ kind: 'user', params: [user], rows: 1 })
    else if (x < 0.7) ops.push({ kind: 'last20', params: [1 + conv()], rows: 20 })
    else if (x < 0.9)
      ops.push({ kind: 'insert', params: [nextId++, 1 + conv(), user, `message ${i} ✓`, 1_750_000_000 + i], rows: 0 })
    else ops.push({ kind: 'seen', params: [SEEN_BASE + i, user], rows: 0 })
  }
  return ops
}

/** The chat sample's statements, by the kind of call (bench/experiments/ probes use them too). */
export const CHAT_SQL = {
  user: 'SELECT * FROM users WHERE id = ?',
  last20: `SELECT m.id, m.body, m.created_at, u.name AS author FROM messages m JOIN users u ON u.id = m.user_id
       WHERE m.conversation_id = ? ORDER BY m.id DESC LIMIT 20`,
  insert: 'INSERT INTO messages (id, conversation_id, user_id, body, created_at) VALUES (?, ?, ?, ?, ?)',
  seen: 'UPDATE users SET last_seen = max(last_seen, ?) WHERE id = ?',
}

/** The chat sample on a resqlite `Database`, through its calls with SQL text (the probes in
 * bench/experiments/): `clients` clients in flight, taking the ops in turn. */
export function chatSampleOn(db, clients = CHAT_CLIENTS) {
  const ops = chatOps()
  const call = ({ kind, params }) =>
    kind === 'user'
      ? db.selectOne(CHAT_SQL.user, params)
      : kind === 'last20'
        ? db.select(CHAT_SQL.last20, params)
        : db.execute(CHAT_SQL[kind], params)
  return async () => {
    let next = 0
    const client = async () => {
      while (next < ops.length) await call(ops[next++])
    }
    await Promise.all(Array.from({ length: clients }, client))
  }
}

/** Before each chat sample: the sample's writes undone, and the WAL checkpointed (so each
 * sample's first write starts it over, as after a quiet spell). */
export const CHAT_RESET = `DELETE FROM messages WHERE id > ${CHAT.messages}; UPDATE users SET last_seen = 1700000000 + id WHERE last_seen >= ${SEEN_BASE}; PRAGMA wal_checkpoint(PASSIVE)`

async function chat(d, cfg) {
  const u = d.uncounted
  const stmts = {}
  for (const [kind, sql] of Object.entries(CHAT_SQL)) stmts[kind] = await d.prepare(sql)
  const ops = chatOps()
  const inserts = ops.filter((o) => o.kind === 'insert').length
  const readRows = ops.reduce((n, o) => n + o.rows, 0)
  const reset = () => u.exec(CHAT_RESET)
  const rowsOf = (o, r) => (o.kind === 'user' ? (r ? 1 : 0) : o.kind === 'last20' ? r.length : 0)
  const call = (o) =>
    o.kind === 'user'
      ? stmts.user.get(o.params)
      : o.kind === 'last20'
        ? stmts.last20.all(o.params)
        : stmts[o.kind].run(o.params)
  const op = d.sync
    ? () => {
        let rows = 0
        for (const o of ops) rows += rowsOf(o, call(o))
        return rows
      }
    : async () => {
        let next = 0
        let rows = 0
        const client = async () => {
          while (next < ops.length) {
            const o = ops[next++]
            const r = await call(o) // (not `rows += … await …`: that reads rows before the await)
            rows += rowsOf(o, r)
          }
        }
        await Promise.all(Array.from({ length: CHAT_CLIENTS }, client))
        return rows
      }
  const countMessages = await u.prepare('SELECT count(*) AS c FROM messages')
  const count = async (rows) => ({ rows, messages: (await countMessages.all([]))[0].c })
  const m = await measure(d, op, cfg, {
    reset,
    expect: { ops: CHAT_OPS, rows: readRows, messages: CHAT.messages + inserts },
    count,
  })
  await reset()
  await op()
  const after = [
    await (await u.prepare(`SELECT * FROM messages WHERE id > ${CHAT.messages} ORDER BY id`)).all([]),
    await (await u.prepare(`SELECT id, last_seen FROM users WHERE last_seen >= ${SEEN_BASE} ORDER BY id`)).all([]),
  ]
  const title = `chat: ${CHAT_OPS} ops (40 % point, 30 % last-20 join, 20 % insert, 10 % update)${d.sync ? '' : `, ${CHAT_CLIENTS} clients`}`
  return [makeCase('scenarios', 'chat', title, hashRows(after), m, { perSample: [CHAT_OPS, 'ops'] })]
}

const PAGE = 50
const PAGES = 10
const LIKES = 50 // likes per live sample, on the latest 50 posts

// Feed, part 1: keyset paging — 10 pages of 50 posts, newest first, each page starting below
// the last id of the previous one (so they run one after another).
async function feedPaging(d, cfg) {
  const first = await d.prepare(`SELECT * FROM posts ORDER BY id DESC LIMIT ${PAGE}`)
  const next = await d.prepare(`SELECT * FROM posts WHERE id < ? ORDER BY id DESC LIMIT ${PAGE}`)
  const op = d.sync
    ? () => {
        const pages = [first.all([])]
        for (let p = 1; p < PAGES; p++) pages.push(next.all([pages[p - 1].at(-1).id]))
        return pages
      }
    : async () => {
        const pages = [await first.all([])]
        for (let p = 1; p < PAGES; p++) pages.push(await next.all([pages[p - 1].at(-1).id]))
        return pages
      }
  const check = hashRows(await op())
  const m = await measure(d, op, cfg, {
    expect: { ops: PAGES, rows: PAGES * PAGE },
    count: (pages) => ({ rows: pages.reduce((n, p) => n + p.length, 0) }),
  })
  return makeCase('scenarios', 'feed.paging', `feed: keyset paging, ${PAGES} pages × ${PAGE}`, check, m)
}

// Feed, part 2: the latest 50 posts kept live while 50 likes land on them (issued together on
// async libraries, a loop on sync ones). The sample ends when every like is written and the
// view shows all of them. A like is shown when the view's count for its post reaches the likes
// acknowledged on that post so far (counts only grow within a sample, so a view showing a later
// state shows it too).
async function feedLive(d, cfg) {
  const u = d.uncounted
  const latest = await d.prepare(`SELECT id, author_id, body, likes FROM posts ORDER BY id DESC LIMIT ${PAGE}`)
  const like = await d.prepare('UPDATE posts SET likes = likes + 1 WHERE id = ?')
  const rand = rng(41)
  const targets = Array.from({ length: LIKES }, () => FEED_POSTS - Math.floor(rand() * PAGE))
  const viewLikes = (rows) => rows.reduce((n, r) => n + r.likes, 0)
  const likesOf = (rows, id) => rows.find((r) => r.id === id)?.likes ?? 0
  const clear = () =>
    u.exec(`UPDATE posts SET likes = 0 WHERE id > ${FEED_POSTS - PAGE}; PRAGMA wal_checkpoint(PASSIVE)`)
  await clear()
  const live = await openLive(d, latest, [])
  // Before every sample, untimed: likes cleared, and the view showing it (a native view
  // delivers the cleared rows asynchronously; a sample must not start on the old ones).
  const reset = async () => {
    await clear()
    await live.written((rows) => viewLikes(rows) === 0)
  }
  const op = d.sync
    ? () => {
        for (const id of targets) {
          like.run([id])
          live.written()
        }
        return live.rows()
      }
    : async () => {
        const acked = new Map()
        await Promise.all(
          targets.map(async (id) => {
            await like.run([id])
            const n = (acked.get(id) ?? 0) + 1
            acked.set(id, n)
            await live.written((rows) => likesOf(rows, id) >= n)
          }),
        )
        return live.rows()
      }
  const perLive = live.expectPerSample(LIKES)
  // Besides the operations: what the view holds at the end must show every like of the sample.
  const m = await measure(d, op, cfg, {
    reset,
    expect: { ops: LIKES + perLive.ops, rows: PAGE, viewLikes: LIKES },
    count: (rows) => ({ rows: rows.length, viewLikes: viewLikes(rows) }),
  })
  await reset()
  const check = hashRows(await op())
  live.close()
  return makeCase(
    'scenarios',
    'feed.live',
    `feed: live latest-${PAGE} (${live.kind}) under ${LIKES} ${d.sync ? '' : 'concurrent '}likes`,
    check,
    m,
    { perSample: [LIKES, 'likes'] },
  )
}

export const SCENARIO_LANES = {
  chat,
  feed: async (d, cfg) => [await feedPaging(d, cfg), await feedLive(d, cfg)],
}

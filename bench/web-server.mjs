// The web-server lane's server (lanes/web.mjs): one library behind node:http, in a process of
// its own, as a user would write it. node web-server.mjs <lib> <db>; prints "LISTENING <port>"
// once it serves 127.0.0.1.
//   GET /page?user=U&conversation=C  three queries (a user, the conversation's last 20 messages
//                                     with their authors, its message count) as one JSON page
//   GET /report                       a GROUP BY over all 100,000 rows of t (REPORT_SQL)
//   GET /stats[?reset]                pages, reports and queries served, and the event loop's
//                                     active time (ms), since the last reset; pending: pages and
//                                     reports begun and not yet answered
// Every query goes through the driver's `bytes` (resqlite: selectBytes; the others: their rows
// + JSON.stringify), issued together and awaited together (for the synchronous libraries the
// three run one after another on the event loop, as they would in such a handler).
// `node web-server.mjs <lib> <db> prisma` serves the same through Prisma (the prisma-web lane):
// the page's three queries as Prisma calls over the library's adapter (drivers/prisma.mjs), the
// report as $queryRawUnsafe, each answer JSON.stringify'd.
import { createServer } from 'node:http'
import { performance } from 'node:perf_hooks'

const PAGE_SQL = {
  user: 'SELECT id, name, last_seen FROM users WHERE id = ?',
  messages: `SELECT m.id, m.body, m.created_at, u.name AS author
    FROM messages m JOIN users u ON u.id = m.user_id
    WHERE m.conversation_id = ? ORDER BY m.id DESC LIMIT 20`,
  count: 'SELECT count(*) AS n FROM messages WHERE conversation_id = ?',
}
// The most common (initial letter, value bucket) pairs: a scan of t and a GROUP BY on
// expressions no index has (about 50 ms in better-sqlite3 here).
const REPORT_SQL = `SELECT substr(name, 1, 1) AS initial, CAST(value * 10 AS INTEGER) AS bucket,
    count(*) AS n, avg(length(name)) AS mean_length
  FROM t GROUP BY initial, bucket ORDER BY n DESC, initial, bucket LIMIT 20`

const [lib, dbPath, api = 'driver'] = process.argv.slice(2)
const { page, report, close } = api === 'prisma' ? await throughPrisma() : await throughDriver()

async function throughDriver() {
  const { open } = await import(`./drivers/${lib}.mjs`)
  const d = await open(dbPath)
  const user = await d.prepare(PAGE_SQL.user)
  const messages = await d.prepare(PAGE_SQL.messages)
  const count = await d.prepare(PAGE_SQL.count)
  const report = await d.prepare(REPORT_SQL)
  return {
    page: (u, c) => Promise.all([user.bytes([u]), messages.bytes([c]), count.bytes([c])]),
    report: () => report.bytes([]),
    close: () => d.close(),
  }
}

async function throughPrisma() {
  const prisma = await (await import('./drivers/prisma.mjs')).openPrisma(lib, dbPath)
  const json = (value) => Buffer.from(JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? Number(v) : v)))
  return {
    page: async (u, c) => {
      const [user, messages, n] = await Promise.all([
        prisma.user.findUnique({ where: { id: u }, select: { id: true, name: true, lastSeen: true } }),
        prisma.message.findMany({
          where: { conversationId: c },
          orderBy: { id: 'desc' },
          take: 20,
          select: { id: true, body: true, createdAt: true, user: { select: { name: true } } },
        }),
        prisma.message.count({ where: { conversationId: c } }),
      ])
      return [json(user), json(messages), json({ n })]
    },
    report: async () => json(await prisma.$queryRawUnsafe(REPORT_SQL)),
    close: () => prisma.$disconnect(),
  }
}

let stats = { pages: 0, reports: 0, queries: 0 }
let elu = performance.eventLoopUtilization()
let pending = 0

const send = (res, status, body, type = 'application/json') => {
  res.writeHead(status, { 'content-type': type, 'content-length': body.length })
  res.end(body)
}
const OPEN = Buffer.from('{"user":')
const MESSAGES = Buffer.from(',"messages":')
const COUNT = Buffer.from(',"count":')
const CLOSE = Buffer.from('}')

const routes = {
  async '/page'(query) {
    const parts = await page(Number(query.get('user')), Number(query.get('conversation')))
    stats.queries += 3
    stats.pages++
    return Buffer.concat([OPEN, parts[0], MESSAGES, parts[1], COUNT, parts[2], CLOSE])
  },
  async '/report'() {
    const body = await report()
    stats.queries++
    stats.reports++
    return body
  },
  '/stats'(query) {
    const out = { ...stats, pending, eventLoopActiveMs: performance.eventLoopUtilization(elu).active }
    if (query.has('reset')) {
      stats = { pages: 0, reports: 0, queries: 0 }
      elu = performance.eventLoopUtilization()
    }
    return Buffer.from(JSON.stringify(out))
  },
}

const server = createServer(async (req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1')
  const route = routes[url.pathname]
  if (!route) return send(res, 404, Buffer.from(`no route ${url.pathname}`), 'text/plain')
  const counted = url.pathname !== '/stats'
  if (counted) pending++
  try {
    send(res, 200, await route(url.searchParams))
  } catch (err) {
    send(res, 500, Buffer.from(String(err?.stack ?? err)), 'text/plain')
  } finally {
    if (counted) pending--
  }
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => process.stdout.write(`LISTENING ${server.address().port}\n`))
// The lane stops the server with SIGTERM: close the database first.
process.on('SIGTERM', () => {
  server.closeAllConnections()
  server.close(async () => {
    await close()
    process.exit(0)
  })
})

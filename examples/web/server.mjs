// A shared todo list on node:http: JSON read endpoints served with selectBytes, writes through
// execute and transaction, and every open page kept current with Server-Sent Events fed by one
// db.stream (no polling). Run from a clone after `npm install`: `npm run example:web`, then
// open the address it prints in two windows.
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { fileURLToPath } from 'node:url'
import { Database } from '../../dist/esm/index.mjs'

const PAGE = readFileSync(new URL('./index.html', import.meta.url))
const MAX_BODY = 4096
const MAX_TITLE = 200

class HttpError extends Error {
  constructor(status, message) {
    super(message)
    this.status = status
  }
}

const readJson = async (req) => {
  let body = ''
  for await (const chunk of req) {
    body += chunk
    if (body.length > MAX_BODY) throw new HttpError(413, `body over ${MAX_BODY} bytes`)
  }
  try {
    return JSON.parse(body)
  } catch {
    throw new HttpError(400, 'body is not JSON')
  }
}

const titleOf = (body) => {
  const title = typeof body?.title === 'string' ? body.title.trim() : ''
  if (title === '' || title.length > MAX_TITLE) {
    throw new HttpError(400, `title must be a string of 1 to ${MAX_TITLE} characters`)
  }
  return title
}

const idOf = (text) => {
  const id = Number(text)
  if (!Number.isSafeInteger(id) || id <= 0) throw new HttpError(400, `bad todo id: ${text}`)
  return id
}

const sendJson = (res, status, body) => {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body))
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': bytes.length })
  res.end(bytes)
}

// Opens (or creates) the database file and serves it; resolves once listening.
// Returns { url, close }.
export async function startServer({ file, port = 0, host = '127.0.0.1' }) {
  const db = await Database.open(file)
  await db.execute(`CREATE TABLE IF NOT EXISTS todos (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    done INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
  )`)

  // One live query for every connected page: it re-runs only after a commit that changed the
  // todos, and its rows are serialised once per change, not once per client.
  const clients = new Set()
  let latest = 'data: []\n\n'
  const live = db.stream('SELECT id, title, done FROM todos ORDER BY id')
  const stop = live.subscribe(
    (rows) => {
      latest = `data: ${JSON.stringify(rows)}\n\n`
      for (const res of clients) res.write(latest)
    },
    (error) => console.error('live query failed:', error),
  )

  const routes = {
    'GET /': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': PAGE.length })
      res.end(PAGE)
    },
    // The rows as JSON, built natively: no row objects on the event loop.
    'GET /api/todos': async (_req, res) =>
      sendJson(res, 200, await db.selectBytes('SELECT id, title, done FROM todos ORDER BY id')),
    'GET /api/events': (req, res) => {
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
      })
      res.write(latest)
      clients.add(res)
      req.on('close', () => clients.delete(res))
    },
    'POST /api/todos': async (req, res) => {
      const title = titleOf(await readJson(req))
      const { lastInsertRowid } = await db.execute('INSERT INTO todos (title) VALUES (?)', [title])
      sendJson(res, 201, { id: Number(lastInsertRowid), title, done: 0 })
    },
    'POST /api/todos/toggle': async (req, res) => {
      const id = idOf((await readJson(req))?.id)
      const { changes } = await db.execute('UPDATE todos SET done = 1 - done WHERE id = ?', [id])
      if (changes === 0) throw new HttpError(404, `no todo ${id}`)
      sendJson(res, 200, { id })
    },
    // Two statements that must agree: count what is done and delete it, in one transaction.
    'POST /api/todos/clear-done': async (_req, res) => {
      const cleared = await db.transaction(async (tx) => {
        const { n } = await tx.selectOne('SELECT count(*) AS n FROM todos WHERE done = 1')
        await tx.execute('DELETE FROM todos WHERE done = 1')
        return n
      })
      sendJson(res, 200, { cleared })
    },
  }

  const server = createServer(async (req, res) => {
    const route = routes[`${req.method} ${new URL(req.url, 'http://localhost').pathname}`]
    try {
      if (!route) throw new HttpError(404, `no route ${req.method} ${req.url}`)
      await route(req, res)
    } catch (error) {
      if (!(error instanceof HttpError)) console.error(error)
      if (!res.headersSent) sendJson(res, error.status ?? 500, { error: error.message })
      else res.end()
    }
  })
  await new Promise((resolve) => server.listen(port, host, resolve))
  const { port: bound } = server.address()

  return {
    url: `http://${host}:${bound}/`,
    async close() {
      stop()
      for (const res of clients) res.end()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      await db.close()
    },
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.env.TODOS_DB ?? fileURLToPath(new URL('./todos.db', import.meta.url))
  const app = await startServer({ file, port: Number(process.env.PORT ?? 3000) })
  console.log(`todo list on ${app.url} (database ${file}); open it in two windows. Ctrl-C stops.`)
  process.on('SIGINT', async () => {
    await app.close()
    process.exit(0)
  })
}

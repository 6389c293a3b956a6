// An idle engine must not keep the process alive; pending work must (ARCHITECTURE.md "Close,
// teardown, process exit").

import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { tempDir } from './helpers.mjs'

const ESM_ENTRY = new URL('../dist/esm/index.mjs', import.meta.url).href
const CJS_ENTRY = fileURLToPath(new URL('../dist/cjs/index.js', import.meta.url))
const TIMEOUT_MS = 10_000

/** Runs `source` as a child process; asserts it exits by itself with code 0; returns stdout. */
function runChild(t, source, ext = '.mjs') {
  const dir = tempDir(t)
  const script = path.join(dir, `child${ext}`)
  fs.writeFileSync(script, source)
  const dbFile = path.join(dir, 'child.db')
  const r = spawnSync(process.execPath, [script, dbFile], {
    encoding: 'utf8',
    timeout: TIMEOUT_MS,
    killSignal: 'SIGKILL',
  })
  const diag = `\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`
  assert.ok(
    !r.error,
    `child did not exit by itself within ${TIMEOUT_MS} ms (${r.error?.code}, signal ${r.signal})${diag}`,
  )
  assert.equal(r.signal, null, `child was killed by ${r.signal}${diag}`)
  assert.equal(r.status, 0, `child exit code ${r.status}${diag}`)
  return r.stdout
}

test('a process that opens, queries and closes exits on its own with code 0', (t) => {
  const out = runChild(
    t,
    `import { Database } from ${JSON.stringify(ESM_ENTRY)};
const db = await Database.open(process.argv[2]);
await db.execute('CREATE TABLE t (v); INSERT INTO t VALUES (1), (2)');
const rows = await db.select('SELECT count(*) AS n FROM t');
console.log('rows=' + JSON.stringify(rows));
await db.close();
console.log('closed');
`,
  )
  assert.match(out, /rows=\[\{"n":2\}\]/)
  assert.match(out, /closed/)
})

test('a process that opens and queries but never closes still exits on its own with code 0', (t) => {
  const out = runChild(
    t,
    `import { Database } from ${JSON.stringify(ESM_ENTRY)};
const db = await Database.open(process.argv[2], { readers: 2 });
await db.execute('CREATE TABLE t (v); INSERT INTO t VALUES (1)');
console.log('rows=' + JSON.stringify(await db.select('SELECT v FROM t')));
console.log('bytes=' + (await db.selectBytes('SELECT v FROM t')).toString());
`,
  )
  assert.match(out, /rows=\[\{"v":1\}\]/)
  assert.match(out, /bytes=\[\{"v":1\}\]/)
})

test('pending work keeps the process alive until it completes, then it exits', (t) => {
  const out = runChild(
    t,
    `import { Database } from ${JSON.stringify(ESM_ENTRY)};
const db = await Database.open(process.argv[2]);
// not awaited: the module finishes while these are still running
db.select('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000) SELECT count(*) AS n FROM c')
  .then((rows) => console.log('late=' + JSON.stringify(rows)));
db.execute('CREATE TABLE t (v)').then((r) => console.log('changes=' + r.changes));
`,
  )
  assert.match(out, /late=\[\{"n":200000\}\]/)
  assert.match(out, /changes=0/)
})

test('a process whose open failed exits on its own', (t) => {
  const out = runChild(
    t,
    `import { Database } from ${JSON.stringify(ESM_ENTRY)};
import path from 'node:path';
try {
  await Database.open(path.join(process.argv[2], 'missing-dir', 'x.db'));
} catch (err) {
  console.log('code=' + err.code);
}
`,
  )
  assert.match(out, /code=SQLITE_CANTOPEN/)
})

test('a CommonJS process that never closes exits on its own', (t) => {
  const out = runChild(
    t,
    `const { Database } = require(${JSON.stringify(CJS_ENTRY)});
Database.open(process.argv[2])
  .then((db) => db.select('SELECT 41 + 1 AS v'))
  .then((rows) => console.log('cjs=' + JSON.stringify(rows)));
`,
    '.cjs',
  )
  assert.match(out, /cjs=\[\{"v":42\}\]/)
})

test('a worker thread that ends, or is terminated mid-query, without closing leaves the process and the file sound', (t) => {
  // The worker's environment is torn down while a reader may still be running its query; the
  // engine must detach from it (no call into a dead environment), and the main thread must
  // still be able to open and read the same file afterwards.
  const out = runChild(
    t,
    `import { Worker } from 'node:worker_threads';
import { Database } from ${JSON.stringify(ESM_ENTRY)};
const file = process.argv[2];
const setup = await Database.open(file);
await setup.execute('CREATE TABLE t (v); INSERT INTO t VALUES (1), (2), (3); CREATE TABLE w (v)');
await setup.close();
const body = \`
import { Database } from \${JSON.stringify(${JSON.stringify(ESM_ENTRY)})};
import { parentPort, workerData } from 'node:worker_threads';
const db = await Database.open(workerData.file);
const n = (await db.selectOne('SELECT count(*) AS n FROM t')).n;
if (workerData.busy) {
  // ~0.1-1 s of work: still running when the worker is terminated, done while main lives on.
  db.select("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 2000000) SELECT count(*) FROM c").catch(() => {});
  // Writes in flight too: the event loop is polling for their completions when it is torn down.
  const write = (i) => db.execute('INSERT INTO w VALUES (?)', [i]).then(() => write(i + 1), () => {});
  write(0);
}
parentPort.postMessage(n);
\`;
const url = new URL('data:text/javascript,' + encodeURIComponent(body));
for (const busy of [false, true]) {
  const w = new Worker(url, { workerData: { file, busy } });
  const exited = new Promise((r) => w.once('exit', r));
  const seen = await new Promise((resolve, reject) => { w.once('message', resolve); w.once('error', reject); });
  if (busy) await new Promise((r) => setTimeout(r, 30)).then(() => w.terminate());
  await exited;
  console.log('worker saw', seen, 'busy', busy);
}
// Outlive the terminated worker's query: its completion arrives after its environment is gone.
await new Promise((r) => setTimeout(r, 1500));
const db = await Database.open(file);
console.log('main', (await db.selectOne('SELECT sum(v) AS s FROM t')).s);
await db.close();
`,
  )
  assert.match(out, /worker saw 3 busy false/)
  assert.match(out, /worker saw 3 busy true/)
  assert.match(out, /main 6/)
})

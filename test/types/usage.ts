// Code as users write it, type-checked under `strict` against the built declarations
// (test/types.test.mjs): the examples of docs/api.md "Transactions" and "Functions" among it.
import type { Database, Row } from '../../dist/esm/index.mjs'

export async function usage(db: Database): Promise<void> {
  const n = await db.transaction(
    async (tx) => {
      await tx.execute('INSERT INTO orders (item) VALUES (?)', ['tea'])
      const row = await tx.selectOne('SELECT count(*) AS n FROM orders')
      return row?.n
    },
    { mode: 'immediate' },
  )
  void n
  db.function('slugify', (s) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-'), { deterministic: true })
  db.function('twice', (x: number) => x * 2)
  db.aggregate('product', { start: 1, step: (acc, x) => acc * x })
  db.aggregate('movingSum', { start: 0, step: (a, x) => a + x, inverse: (a, x) => a - x })
  const rows: Row[] = await db.select('SELECT slugify(title) AS slug FROM posts')
  void rows
}

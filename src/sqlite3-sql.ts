// What resqlite/sqlite3 reads from SQL text before it runs it: where a script's statements end,
// which statements begin or end a transaction or a savepoint (run as resqlite transactions, not
// sent to SQLite), and which PRAGMAs would change one connection only.

/** One statement of a script: its text, and its first tokens (as written; a quoted name
 * unquoted), enough to tell what kind of statement it is. */
export interface Piece {
  readonly text: string
  readonly tokens: readonly string[]
  /** Its parameters as SQLite numbers them: how many (`sqlite3_bind_parameter_count`), and
   * the named ones without their prefix. */
  readonly parameters: { readonly count: number; readonly names: readonly string[] }
}

const WORD = /[A-Za-z_0-9$\u0080-\uffff]/
/** Tokens kept per statement: the longest transaction statement is `ROLLBACK TRANSACTION TO
 * SAVEPOINT name`, and a PRAGMA's `schema . name = value`. */
const KEPT = 8

/** The statements of `sql`, empty ones (a lone `;`, comments) left out. A `;` inside a quoted
 * string or name, a comment, or a `CREATE TRIGGER` body (which ends at `END;`) ends nothing: the
 * rule SQLite's own `sqlite3_complete` applies. */
export function splitStatements(sql: string): Piece[] {
  const pieces: Piece[] = []
  let start = 0
  let tokens: string[] = []
  let last = ''
  let count = 0
  let names: string[] = []
  let i = 0
  const end = (to: number): void => {
    if (tokens.length > 0) pieces.push({ text: sql.slice(start, to).trim(), tokens, parameters: { count, names } })
    tokens = []
    last = ''
    count = 0
    names = []
    start = to
  }
  while (i < sql.length) {
    const c = sql[i]!
    if (c === '-' && sql[i + 1] === '-') {
      const nl = sql.indexOf('\n', i)
      i = nl === -1 ? sql.length : nl + 1
    } else if (c === '/' && sql[i + 1] === '*') {
      const close = sql.indexOf('*/', i + 2)
      i = close === -1 ? sql.length : close + 2
    } else if (c === "'" || c === '"' || c === '`' || c === '[') {
      const closer = c === '[' ? ']' : c
      let j = i + 1
      for (;;) {
        j = sql.indexOf(closer, j)
        if (j === -1) {
          j = sql.length
          break
        }
        // A doubled quote is an escaped one (not in [brackets]).
        if (closer !== ']' && sql[j + 1] === closer) j += 2
        else break
      }
      const raw = sql.slice(i, j + 1)
      if (tokens.length < KEPT) tokens.push(c === "'" ? raw : unquote(raw))
      last = 'name'
      i = j + 1
    } else if (WORD.test(c) && c !== '$') {
      let j = i + 1
      while (j < sql.length && WORD.test(sql[j]!)) j++
      const word = sql.slice(i, j)
      if (tokens.length < KEPT) tokens.push(word)
      last = word.toUpperCase()
      i = j
    } else if (c === '?' || ((c === ':' || c === '@' || c === '$') && WORD.test(sql[i + 1] ?? ''))) {
      // `?` takes the next number, `?NNN` that one; a name its own the first time it appears.
      let j = i + 1
      while (j < sql.length && WORD.test(sql[j]!)) j++
      const rest = sql.slice(i + 1, j)
      if (c === '?') count = rest === '' ? count + 1 : Math.max(count, Number(rest))
      else if (!names.includes(rest)) {
        names.push(rest)
        count++
      }
      last = c
      i = j
    } else if (c === ';') {
      i++
      if (!inTrigger(tokens) || last === 'END') end(i)
      else last = ';'
    } else {
      if (c.trim() !== '') {
        if (tokens.length < KEPT) tokens.push(c)
        last = c
      }
      i++
    }
  }
  end(sql.length)
  return pieces
}

function inTrigger(tokens: readonly string[]): boolean {
  const [create, temp, trigger] = tokens.slice(0, 3).map((t) => t.toUpperCase())
  if (create !== 'CREATE') return false
  return temp === 'TRIGGER' || ((temp === 'TEMP' || temp === 'TEMPORARY') && trigger === 'TRIGGER')
}

/** `"a""b"` → `a"b`, `[x]` → `x`. */
function unquote(raw: string): string {
  const q = raw[0]!
  const inner = raw.slice(1, raw.endsWith(q === '[' ? ']' : q) && raw.length > 1 ? -1 : undefined)
  return q === '[' ? inner : inner.replaceAll(q + q, q)
}

/** A statement that begins or ends a transaction or a savepoint. */
export type Control =
  | { readonly kind: 'begin'; readonly mode: 'deferred' | 'immediate' | 'exclusive' }
  | { readonly kind: 'commit' }
  | { readonly kind: 'rollback' }
  | { readonly kind: 'savepoint'; readonly name: string }
  | { readonly kind: 'release'; readonly name: string }
  | { readonly kind: 'rollbackTo'; readonly name: string }

/** What `tokens` (a statement's) say it is, when it begins or ends a transaction or a
 * savepoint; `undefined` for any other statement. */
export function control(tokens: readonly string[]): Control | undefined {
  const words = tokens.map((t) => t.toUpperCase())
  const [first, second] = words
  switch (first) {
    case 'BEGIN': {
      const mode = second === 'IMMEDIATE' ? 'immediate' : second === 'EXCLUSIVE' ? 'exclusive' : 'deferred'
      return { kind: 'begin', mode }
    }
    case 'COMMIT':
    case 'END':
      return { kind: 'commit' }
    case 'ROLLBACK': {
      const to = words.indexOf('TO')
      if (to === -1) return { kind: 'rollback' }
      const name = words[to + 1] === 'SAVEPOINT' ? tokens[to + 2] : tokens[to + 1]
      return { kind: 'rollbackTo', name: name ?? '' }
    }
    case 'SAVEPOINT':
      return { kind: 'savepoint', name: tokens[1] ?? '' }
    case 'RELEASE':
      return { kind: 'release', name: (second === 'SAVEPOINT' ? tokens[2] : tokens[1]) ?? '' }
    default:
      return undefined
  }
}

/** PRAGMAs that may be set through this module: each acts where resqlite/sqlite3 sends it (the
 * writer's connection, which runs every write and transaction), or is stored in the database
 * file. A setting of any other PRAGMA would change the writer's connection only while reads
 * run on other connections, so it is refused. */
const SETTABLE = new Set([
  'application_id',
  'auto_vacuum',
  'busy_timeout',
  'defer_foreign_keys',
  'foreign_keys',
  'ignore_check_constraints',
  'incremental_vacuum',
  'journal_mode',
  'legacy_alter_table',
  'optimize',
  'page_size',
  // Acts in shared-cache mode only, which resqlite has not (nor sqlite3 unless asked): no
  // connection reads another's uncommitted writes either way. Sequelize sets it for a
  // transaction's isolationLevel.
  'read_uncommitted',
  'recursive_triggers',
  'secure_delete',
  'synchronous',
  'user_version',
  'wal_checkpoint',
])

/** PRAGMAs whose argument names what to read, not a value to set. */
const QUERIES = new Set([
  'foreign_key_check',
  'foreign_key_list',
  'index_info',
  'index_list',
  'index_xinfo',
  'integrity_check',
  'quick_check',
  'table_info',
  'table_list',
  'table_xinfo',
])

/** Settings that act on writes alone. A database opened read-only has no writes for them to
 * act on, so it accepts them and they change nothing, as on sqlite3's read-only connection. */
const WRITE_SETTINGS = new Set([
  'defer_foreign_keys',
  'foreign_keys',
  'ignore_check_constraints',
  'legacy_alter_table',
  'recursive_triggers',
])

/** A PRAGMA statement's name, and whether it sets a value (`name = v`, or `name(v)` of a PRAGMA
 * that is not a {@link QUERIES query}); `undefined` for any other statement. */
function pragmaOf(tokens: readonly string[]): { name: string; sets: boolean } | undefined {
  if (tokens[0]?.toUpperCase() !== 'PRAGMA') return undefined
  const named = tokens[2] === '.' ? 3 : 1
  const name = tokens[named]?.toLowerCase()
  if (name === undefined) return undefined
  const next = tokens[named + 1]
  return { name, sets: (next === '=' || next === '(') && !QUERIES.has(name) }
}

/** For a PRAGMA statement that sets a value of one connection, the PRAGMA's name; else
 * `undefined` (a PRAGMA that reads, or one {@link SETTABLE}). */
export function connectionPragma(tokens: readonly string[]): string | undefined {
  const pragma = pragmaOf(tokens)
  return pragma?.sets === true && !SETTABLE.has(pragma.name) ? pragma.name : undefined
}

/** How a PRAGMA statement runs on a database opened read-only, which has no writer: `'read'`
 * (one that reads) on the readers, `'nothing'` for a {@link WRITE_SETTINGS write setting};
 * `undefined` for any other statement (another setting then fails as a write would). */
export function readOnlyPragma(tokens: readonly string[]): 'read' | 'nothing' | undefined {
  const pragma = pragmaOf(tokens)
  if (pragma === undefined) return undefined
  if (!pragma.sets) return 'read'
  return WRITE_SETTINGS.has(pragma.name) ? 'nothing' : undefined
}

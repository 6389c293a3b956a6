// The public option and result types.

export interface OpenOptions {
  /** Read-only connections reading in parallel. Default: clamp(cpus − 1, 2, 4). */
  readers?: number
  /** Milliseconds a connection waits for a lock held by another process. Default 5000. */
  busyTimeout?: number
  /** Open without a writer: `execute`, `executeBatch` and `transaction` reject. Default false. */
  readonly?: boolean
  /** Return every INTEGER as a bigint. Default false. */
  safeIntegers?: boolean
  /** Encrypts the database (README "Encryption"): a passphrase, or raw key bytes for the ciphers
   * that take them (chacha20, sqlcipher, ascon128: 32 bytes; aegis: 16 or 32 by algorithm;
   * optionally followed by the 16-byte KDF salt). Applied to every connection before anything
   * else; never stored in JavaScript. */
  encryptionKey?: string | Uint8Array
  /** The cipher of an encrypted database. Default `'chacha20'`. Needs `encryptionKey`. */
  cipher?: Cipher
  /** Re-run live queries when another process or connection commits to the file, checked
   * with `PRAGMA data_version` every `interval` ms (default 1000) while a live query is
   * subscribed. Off by default: each check is one small job for the writer. */
  watchExternalChanges?: boolean | { interval?: number }
  /** Databases to attach on every connection, by schema name: `{ aux: 'aux.db' }` makes
   * `aux.t` readable everywhere (live queries included) and writable through the writer. Each
   * file is created if needed and put in WAL mode; an encrypted database's attachments use its
   * key. (An `ATTACH` run through `execute` reaches the writer only.) */
  attach?: Record<string, string>
}

export interface Diagnostics {
  streams: import('./live-queries').LiveQueryCounters
  /** SQLite's memory, summed over every connection; each connection measures it after a job, at
   * most every 250 ms (SQLite walks every table and statement to measure). */
  sqlite: { pageCacheBytes: number; schemaBytes: number; statementBytes: number }
  /** Size of the WAL file now (0 when there is none). */
  walBytes: number
  /** Standalone writes queued together and committed in one transaction (README "Writes"):
   * how many such groups, and the writes in them. */
  groupCommit: { groups: number; writes: number }
}

export interface RekeyOptions {
  /** The cipher to re-encrypt with. Default: the cipher the database uses now
   * (`'chacha20'` for a plaintext one). */
  cipher?: Cipher
}

export type CipherName = 'chacha20' | 'sqlcipher' | 'aes256cbc' | 'aes128cbc' | 'ascon128' | 'aegis' | 'rc4'

/** A cipher by name with its defaults, or with parameters (unset ones keep sqlite3mc's defaults). */
export type Cipher =
  | CipherName
  | ChaCha20Cipher
  | SqlCipherCipher
  | Aes256CbcCipher
  | Aes128CbcCipher
  | Ascon128Cipher
  | AegisCipher
  | Rc4Cipher

/** ChaCha20-Poly1305 with a PBKDF2-SHA256 key (sqlite3mc's default cipher). */
export interface ChaCha20Cipher {
  name: 'chacha20'
  /** PBKDF2 iterations. Default 64007. */
  kdfIter?: number
  /** sqleet-compatible layout. Default false. */
  legacy?: boolean
  /** Page size used in legacy mode. Default 4096. */
  legacyPageSize?: number
}

/** AES-256-CBC + HMAC in SQLCipher's file format. */
export interface SqlCipherCipher {
  name: 'sqlcipher'
  /** SQLCipher major version whose format and defaults to use (1–4); 0: sqlite3mc's own
   * defaults. For files the `sqlcipher` tool reads, give the tool's version (Debian 12: 3). */
  legacy?: 0 | 1 | 2 | 3 | 4
  /** Page size in legacy mode (SQLCipher 1–3: 1024, 4: 4096). */
  legacyPageSize?: number
  kdfIter?: number
  fastKdfIter?: number
  hmacUse?: boolean
  hmacPgno?: 'native' | 'le' | 'be'
  hmacSaltMask?: number
  kdfAlgorithm?: 'sha1' | 'sha256' | 'sha512'
  hmacAlgorithm?: 'sha1' | 'sha256' | 'sha512'
}

/** AES-256-CBC without authentication (wxSQLite3 format). */
export interface Aes256CbcCipher {
  name: 'aes256cbc'
  kdfIter?: number
  legacy?: boolean
  legacyPageSize?: number
}

/** AES-128-CBC without authentication (wxSQLite3 format). */
export interface Aes128CbcCipher {
  name: 'aes128cbc'
  legacy?: boolean
  legacyPageSize?: number
}

/** Ascon-128 AEAD with a PBKDF2-SHA3 key. */
export interface Ascon128Cipher {
  name: 'ascon128'
  kdfIter?: number
}

/** AEGIS AEAD with an Argon2id key. */
export interface AegisCipher {
  name: 'aegis'
  /** Default 'aegis-256'. */
  algorithm?: 'aegis-128l' | 'aegis-128x2' | 'aegis-128x4' | 'aegis-256' | 'aegis-256x2' | 'aegis-256x4'
  /** Argon2 time cost (default 2), memory cost in KiB (default 19456), parallelism (default 1). */
  tcost?: number
  mcost?: number
  pcost?: number
}

/** RC4 (System.Data.SQLite's legacy format): insecure, for reading old files only. */
export interface Rc4Cipher {
  name: 'rc4'
  legacyPageSize?: number
}

export type TransactionMode = 'deferred' | 'immediate' | 'exclusive'

export interface TransactionOptions {
  /** How the outermost transaction begins. Default `'deferred'`. */
  mode?: TransactionMode
  /** Aborting rolls the (outermost) transaction back and rejects it with `ABORT_ERR`. */
  signal?: AbortSignal
}

export interface RunResult {
  changes: number
  lastInsertRowid: number | bigint
}

export interface BatchResult {
  changes: number
}

export interface QueryOptions {
  /** Aborting cancels the query; the promise rejects with `ABORT_ERR`. */
  signal?: AbortSignal
}

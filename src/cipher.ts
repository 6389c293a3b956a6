// The ciphers of SQLite3 Multiple Ciphers and the parameters resqlite exposes for each: the
// public (camelCase) name, sqlite3mc's parameter name, and the values it accepts. arguments.ts
// validates options against this table; the engine applies the parameters through
// sqlite3mc_config_cipher on every connection before its key.

/** One parameter: an integer in [min, max], a boolean (0/1), or one of named values. */
export type ParamSpec =
  | { native: string; kind: 'int'; min: number; max: number; pageSize?: true }
  | { native: string; kind: 'bool' }
  | { native: string; kind: 'enum'; values: Record<string, number> }

export interface CipherSpec {
  /** Parameters by public name, in the order they are applied. */
  params: Record<string, ParamSpec>
  /** Length in bytes of a raw key (a Uint8Array key), or undefined when the cipher takes
   * passphrases only. A raw key may also carry the 16-byte KDF salt after the key bytes. */
  rawKeyLength?: (params: Record<string, number>) => number
}

const MAX_PAGE = 65536
const iterations = (native: string): ParamSpec => ({ native, kind: 'int', min: 1, max: 2 ** 31 - 1 })
/** 0 (the cipher's default) or a page size SQLite allows: a power of two from 512 (sqlite3mc
 * refuses anything else on the connection, after the file was created). */
const pageSize: ParamSpec = { native: 'legacy_page_size', kind: 'int', min: 0, max: MAX_PAGE, pageSize: true }
const sha = { sha1: 0, sha256: 1, sha512: 2 }
const AEGIS_256 = 4

export const CIPHERS: Record<string, CipherSpec> = {
  chacha20: {
    params: {
      legacy: { native: 'legacy', kind: 'bool' },
      legacyPageSize: pageSize,
      kdfIter: iterations('kdf_iter'),
      plaintextHeaderSize: { native: 'plaintext_header_size', kind: 'int', min: 0, max: 100 },
    },
    rawKeyLength: () => 32,
  },
  sqlcipher: {
    // `legacy` first: sqlite3mc resets the other parameters to that SQLCipher version's defaults.
    params: {
      legacy: { native: 'legacy', kind: 'int', min: 0, max: 4 },
      legacyPageSize: pageSize,
      kdfIter: iterations('kdf_iter'),
      fastKdfIter: iterations('fast_kdf_iter'),
      hmacUse: { native: 'hmac_use', kind: 'bool' },
      hmacPgno: { native: 'hmac_pgno', kind: 'enum', values: { native: 0, le: 1, be: 2 } },
      hmacSaltMask: { native: 'hmac_salt_mask', kind: 'int', min: 0, max: 255 },
      kdfAlgorithm: { native: 'kdf_algorithm', kind: 'enum', values: sha },
      hmacAlgorithm: { native: 'hmac_algorithm', kind: 'enum', values: sha },
    },
    rawKeyLength: () => 32,
  },
  aes256cbc: {
    params: { legacy: { native: 'legacy', kind: 'bool' }, legacyPageSize: pageSize, kdfIter: iterations('kdf_iter') },
  },
  aes128cbc: {
    params: { legacy: { native: 'legacy', kind: 'bool' }, legacyPageSize: pageSize },
  },
  ascon128: {
    params: { kdfIter: iterations('kdf_iter') },
    rawKeyLength: () => 32,
  },
  aegis: {
    params: {
      algorithm: {
        native: 'algorithm',
        kind: 'enum',
        values: {
          'aegis-128l': 1,
          'aegis-128x2': 2,
          'aegis-128x4': 3,
          'aegis-256': 4,
          'aegis-256x2': 5,
          'aegis-256x4': 6,
        },
      },
      tcost: iterations('tcost'),
      mcost: iterations('mcost'),
      pcost: iterations('pcost'),
    },
    // AEGIS-128 variants take 16-byte keys, AEGIS-256 variants 32 (default AEGIS-256).
    rawKeyLength: (p) => ((p.algorithm ?? AEGIS_256) >= AEGIS_256 ? 32 : 16),
  },
  rc4: {
    params: { legacyPageSize: pageSize },
  },
}

export const DEFAULT_CIPHER = 'chacha20'

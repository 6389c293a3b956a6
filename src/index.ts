export { Database } from './database'
export type {
  Aes128CbcCipher,
  Aes256CbcCipher,
  AegisCipher,
  Ascon128Cipher,
  BatchResult,
  ChaCha20Cipher,
  Cipher,
  CipherName,
  OpenOptions,
  Params,
  QueryOptions,
  Rc4Cipher,
  RekeyOptions,
  Row,
  RunResult,
  SqlCipherCipher,
  Transaction,
  TransactionMode,
  TransactionOptions,
  Value,
} from './database'
export { ResqliteError } from './errors'

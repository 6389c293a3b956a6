// The core's error class and helpers for the ESM adapters (dist/esm/lib): the CommonJS
// build's, the one ResqliteError every entry of the package exposes.
import core from '../../cjs/errors.js'

export const { describe, ResqliteError, typeError } = core

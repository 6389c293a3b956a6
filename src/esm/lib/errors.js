// The core's error class for the ESM adapters (dist/esm/lib): the CommonJS build's, the one
// class every entry of the package exposes.
import core from '../../cjs/errors.js'

export const { ResqliteError } = core

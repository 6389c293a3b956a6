// The resolve hook hook.mjs registers: `kysely` and `kysely/…` become `<package>` and `<package>/…`.
let alias

export function initialize(data) {
  alias = data
}

export function resolve(specifier, context, next) {
  if (alias && (specifier === 'kysely' || specifier.startsWith('kysely/'))) {
    return next(alias + specifier.slice('kysely'.length), context)
  }
  return next(specifier, context)
}

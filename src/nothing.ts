// The function that does nothing: a settled promise's handler that drops its outcome
// (`p.then(NOTHING, NOTHING)`, `p.catch(NOTHING)`), or a callback with nothing to do. One
// function for every such use, made once.
export const NOTHING = (): void => {}

// The public types accept code as users write it: test/types/usage.ts, which holds the
// examples of docs/api.md "Transactions" and "Functions", type-checks under `strict` against
// the built declarations (dist/esm/*.d.mts).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

test('code as users write it type-checks under strict against the built declarations', () => {
  const file = fileURLToPath(new URL('./types/usage.ts', import.meta.url))
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ['node'],
    skipLibCheck: true,
  })
  const errors = ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) =>
        `${d.file ? `${d.file.fileName}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}: ` : ''}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
    )
  assert.deepEqual(errors, [])
})

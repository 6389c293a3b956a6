// The built type declarations carry the TSDoc of the public API: an editor shows it on hover.
// Every method and accessor of the public classes in dist/cjs/*.d.ts comes with its doc
// comment (one once sat above the wrong member, so `Database.open` shipped undocumented).
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'

const CLASSES = {
  'database.d.ts': 'Database',
  'transaction.d.ts': 'Transaction',
  'statement.d.ts': 'Statement',
}

for (const [file, name] of Object.entries(CLASSES)) {
  test(`every public member of ${name} in the built ${file} has its doc comment`, () => {
    const text = readFileSync(new URL(`../dist/cjs/${file}`, import.meta.url), 'utf8')
    const body = text.split(new RegExp(`^export declare class ${name}\\b.*$`, 'm'))[1]?.split(/^}/m)[0]
    assert.ok(body, `${file} declares the class ${name}`)
    const lines = body.split('\n')
    const undocumented = []
    let members = 0
    for (const [i, line] of lines.entries()) {
      const member = line.match(/^ {4}(?:static |get |set )*([A-Za-z]\w*)\s*[(<:]/)?.[1]
      if (member === undefined || line.includes('private')) continue
      members++
      let k = i - 1
      while (k >= 0 && lines[k].trim() === '') k--
      // overloads share the comment of the first
      while (k >= 0 && lines[k].match(new RegExp(`^ {4}(?:static |get |set )*${member}\\b`))) k--
      if (!lines[k]?.trim().endsWith('*/')) undocumented.push(member)
    }
    assert.ok(members >= 3, `${members} members found in ${name}`)
    assert.deepEqual(undocumented, [], `members of ${name} without a doc comment`)
  })
}

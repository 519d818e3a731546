// One home per rule: the record's field list, the unreadable-record marker, the record limits,
// the control tools' names and the model's files live in the Rust core, and the JavaScript reads
// them from the addon (`contract()`). This test fails when a copy reappears in the package's
// JavaScript (index.js, js/, openclaw/, bin/), where no duplicate finder would see it.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import test from 'node:test'
import { binding, root } from './helpers.mjs'

const contract = binding.contract()

/** The package's JavaScript, comments removed (a comment may name a rule; code may not restate it). */
function sources() {
  const files = ['index.js']
  for (const dir of ['js', 'openclaw', 'bin']) {
    for (const name of readdirSync(join(root, dir))) if (/\.(m?js)$/.test(name)) files.push(join(dir, name))
  }
  return files.map((file) => ({ file, code: stripComments(readFileSync(join(root, file), 'utf8')) }))
}

function stripComments(text) {
  // Line and block comments outside strings are enough for this code base's style.
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1')
}

/** The string literals of a piece of code. */
function literals(code) {
  return [...code.matchAll(/'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"/g)].map((m) => m[1] ?? m[2])
}

test('contract(): the rules the JavaScript reads, with their values', () => {
  assert.ok(contract.recordFields.includes('inputSchema') && contract.recordFields.includes('mcp'))
  assert.ok(contract.unreadableMarker.startsWith('\u0000'))
  assert.deepEqual(contract.controlTools.slice().sort(), ['tool_call', 'tool_describe', 'tool_search', 'tool_search_code'])
  assert.ok(contract.modelFiles.includes('model.safetensors'))
  assert.ok(Number.isInteger(contract.limits.maxNameChars) && contract.limits.maxNameChars > 0)
  // Log text: what would forge or hide a line is written as an escape, the rest as it is.
  assert.equal(binding.printable('mail\nsend\u200B\u202Eit \u00e9'), 'mail\\u{A}send\\u{200B}\\u{202E}it \u00e9')
})

test('no JavaScript file writes a rule of the contract again', () => {
  const problems = []
  for (const { file, code } of sources()) {
    const strings = literals(code)
    const fields = new Set(strings.filter((s) => contract.recordFields.includes(s)))
    // A list of record fields (the cache reads fields by the contract's list, never its own).
    if (fields.size >= 4) problems.push(`${file}: a list of record fields (${[...fields].join(', ')})`)
    const controls = new Set(strings.filter((s) => contract.controlTools.includes(s)))
    if (controls.size >= 2) problems.push(`${file}: the control tools' names (${[...controls].join(', ')})`)
    for (const s of strings) {
      if (contract.modelFiles.includes(s)) problems.push(`${file}: a model file name (${s})`)
      if (s.includes('openclaw-tool-search:unreadable')) problems.push(`${file}: the unreadable-record marker`)
    }
    // The record limits as numbers next to a name or owner (the JS once cut names at 200).
    for (const m of code.matchAll(/\b(name|owner|label|description)\w*[^\n]{0,80}?\b(\d{3,})\b/gi)) {
      const n = Number(m[2])
      if (Object.values(contract.limits).includes(n) || n === 200) problems.push(`${file}: a ${m[1]} limit (${n})`)
    }
    // The record id (`<source>:<owner>:<name>`): the catalog answers each record's (`recordIds`).
    if (/\$\{[^}]*\}:\$\{[^}]*\}:\$\{/.test(code) || /\bnativeId\s*\(/.test(code)) problems.push(`${file}: the record id rule (read \`recordIds\`)`)
    // Which characters a log line escapes (\p{Cf} and friends): the addon's `printable`.
    if (/\\p\{C[cf]\}/.test(code)) problems.push(`${file}: a class of invisible characters (call \`printable\`)`)
    // The repair rules the core now applies in its build.
    for (const name of ['REPAIR_ROUNDS', 'safeIdentifier', 'UNSAFE_IN_NAMES', 'repairRecord']) {
      if (new RegExp(`\\b${name}\\b`).test(code)) problems.push(`${file}: ${name} (the core repairs records: \`repair: true\`)`)
    }
  }
  assert.deepEqual(problems, [])
})

test('the guard sees a copy: a field list, control names, a model file, a name limit and the id rule are found', () => {
  const planted = stripComments(
    [
      "const FIELDS = ['source', 'owner', 'name', 'inputSchema']",
      "const CONTROL = new Set(['tool_search', 'tool_call'])",
      "const FILES = ['model.safetensors']",
      'const cut = name.slice(0, 256)',
      'const id = `${record.source}:${record.owner}:${record.name}`',
      '// a comment may say model.safetensors and tool_search, tool_call',
    ].join('\n'),
  )
  const strings = literals(planted)
  assert.equal(strings.filter((s) => contract.recordFields.includes(s)).length, 4)
  assert.equal(strings.filter((s) => contract.controlTools.includes(s)).length, 2)
  assert.equal(strings.filter((s) => contract.modelFiles.includes(s)).length, 1)
  assert.ok([...planted.matchAll(/\b(name|owner|label|description)\w*[^\n]{0,80}?\b(\d{3,})\b/gi)].some((m) => Number(m[2]) === 256))
  assert.ok(/\$\{[^}]*\}:\$\{[^}]*\}:\$\{/.test(planted))
})

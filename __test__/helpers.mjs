// Shared fixtures for the JS tests.
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'

const require = createRequire(import.meta.url)
export const root = join(dirname(fileURLToPath(import.meta.url)), '..')
export const binding = require('../index.js')

/** The code-mode probe's final report (runs once, off the event loop). */
export const capability = await binding.probeCodeMode()
/** Set by CI: every code-mode and sandbox test must run (and fail if it cannot). */
export const requireCodeMode = process.env.REQUIRE_CODE_MODE === '1'
/** node:test `skip` value for tests that need code mode: a reason where it is unavailable,
 * never under REQUIRE_CODE_MODE=1 (the test then runs and fails). */
export const needsCodeMode = capability.available || requireCodeMode ? false : `code mode unavailable on this host: ${capability.reason}`

/** The contract's fake plugin tool. */
export function fakeTool(n, extra = {}) {
  const name = `fake_plugin_tool_${String(n).padStart(2, '0')}`
  return {
    name,
    owner: 'fake-plugin',
    description: `Fake plugin tool number ${n}: returns FAKE_PLUGIN_OK with the marker it receives.`,
    parameters: { type: 'object', properties: { marker: { type: 'string', description: 'Echoed back' } }, required: ['marker'], additionalProperties: false },
    ...extra,
  }
}

export const fakeTools = (count = 36) => Array.from({ length: count }, (_, i) => fakeTool(i + 1))

/** A small slice of the dev catalog committed with the tests (see data/README.md). */
export function sampleCatalogText() {
  return readFileSync(join(root, '__test__', 'data', 'sample-catalog.jsonl'), 'utf8')
}

/** Assert that `fn` throws an error carrying `code`. */
export function throwsCode(assert, fn, code, message) {
  assert.throws(fn, (err) => {
    assert.equal(err.code, code, `expected ${code}, got ${err.code}: ${err.message}`)
    if (message) assert.match(err.message, message)
    return true
  })
}

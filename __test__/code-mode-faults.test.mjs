// What reaches the model when a code cell fails for a reason of the runner's (issue 36): memory,
// output, deadline and launcher faults give a stable code and one sentence that names no host
// path, pid or native stack; the config's fallback reason says when the probe is still pending.
// Runs cells through the built addon: runCodeCell and a session's tool_search_code.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { chmodSync, copyFileSync, cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { binding, fakeTools, needsCodeMode, root } from './helpers.mjs'

const { ToolCatalog, ToolSearchSession, resolveToolSearchConfig, runCodeCell } = binding
const LAUNCHER = 'openclaw-tool-search-launcher'
const ADDON = 'openclaw-tool-search.linux-x64-gnu.node'

/** A model-visible failure: its message is one sentence with nothing of the host in it. */
function assertClean(message, what) {
  assert.equal(typeof message, 'string', `${what}: no message`)
  assert.ok(!message.includes('/'), `${what}: a path in ${JSON.stringify(message)}`)
  assert.ok(!/pid/i.test(message), `${what}: a pid in ${JSON.stringify(message)}`)
  assert.ok(!message.includes('    at '), `${what}: a stack in ${JSON.stringify(message)}`)
  assert.ok(!message.includes('\n') && message.length < 200, `${what}: not one sentence: ${JSON.stringify(message)}`)
}

const noBridge = async () => null

function session(codeTimeoutMs = 10000) {
  return new ToolSearchSession(new ToolCatalog(fakeTools(4)), resolveToolSearchConfig({ mode: 'code', codeTimeoutMs }), {
    executor: async () => 'ok',
  })
}

const MEMORY_FLOOD = 'const a = []; while (true) a.push(new Array(1e6).fill(1))'

test('a memory flood is CODE_MEMORY_LIMIT with its limit, not a GC trace', { skip: needsCodeMode }, async () => {
  const cell = await runCodeCell(MEMORY_FLOOD, { bridge: noBridge, timeoutMs: 30000 })
  assert.equal(cell.ok, false)
  assert.equal(cell.error.code, 'CODE_MEMORY_LIMIT', JSON.stringify(cell.error))
  assert.equal(cell.error.kind, 'memory_limit')
  assert.match(cell.error.message, /^the cell ran out of memory \(limit \d+ MB\)$/)
  assertClean(cell.error.message, 'runCodeCell')

  const r = await session(30000).handle('tool_search_code', { code: MEMORY_FLOOD })
  assert.equal(r.ok, false)
  assert.equal(r.error.code, 'CODE_MEMORY_LIMIT', JSON.stringify(r.error))
  assert.equal(r.value.error.kind, 'memory_limit')
  assertClean(r.error.message, 'tool_search_code')
})

test('a 50 MB return value is CODE_OUTPUT_LIMIT with the cap and what to do instead', { skip: needsCodeMode }, async () => {
  const code = "return 'x'.repeat(50e6)"
  const cell = await runCodeCell(code, { bridge: noBridge })
  assert.equal(cell.error?.code, 'CODE_OUTPUT_LIMIT', JSON.stringify(cell.error))
  assert.match(cell.error.message, /^the returned value is at least \d+ bytes of JSON, over the cap of \d+; return a smaller value/)
  assertClean(cell.error.message, 'runCodeCell')

  const r = await session().handle('tool_search_code', { code })
  assert.equal(r.error?.code, 'CODE_OUTPUT_LIMIT', JSON.stringify(r.error))
  assertClean(r.error.message, 'tool_search_code')

  const noisy = await runCodeCell("for (;;) process.stderr.write('/srv/secret pid 4242\\n'.repeat(4096))", { bridge: noBridge })
  assert.equal(noisy.error?.code, 'CODE_OUTPUT_LIMIT', JSON.stringify(noisy.error))
  assertClean(noisy.error.message, 'stderr flood')
})

test('a looping cell is CODE_TIMEOUT with its deadline', { skip: needsCodeMode }, async () => {
  const cell = await runCodeCell('while (true) {}', { bridge: noBridge, timeoutMs: 1000 })
  assert.equal(cell.error?.code, 'CODE_TIMEOUT', JSON.stringify(cell.error))
  assert.equal(cell.error.message, 'the code did not finish within 1000 ms')
  assertClean(cell.error.message, 'runCodeCell')

  const r = await session(1000).handle('tool_search_code', { code: 'while (true) {}' })
  assert.equal(r.error?.code, 'CODE_TIMEOUT', JSON.stringify(r.error))
  assertClean(r.error.message, 'tool_search_code')
})

/** Runs `body` (an ES module with `b`, the package at `index`, in scope) in a fresh Node with
 *  `env` added, and returns what it printed as JSON. */
function inFreshProcess(body, { index = join(root, 'index.js'), env = {} } = {}) {
  const script = `import { createRequire } from 'node:module'\nconst b = createRequire(import.meta.url)(${JSON.stringify(index)})\n${body}`
  const childEnv = { ...process.env, ...env }
  for (const [key, value] of Object.entries(env)) if (value === undefined) delete childEnv[key]
  const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], { env: childEnv, encoding: 'utf8', timeout: 120000 })
  assert.equal(out.status, 0, `the child failed: ${out.stderr}`)
  return JSON.parse(out.stdout.trim().split('\n').at(-1))
}

test('while the probe runs, the fallback reason says it is pending', () => {
  // A fresh process: this one's probe has finished (helpers.mjs awaits it).
  const seen = inFreshProcess(`
const config = b.resolveToolSearchConfig({ mode: 'code' })
const capability = b.codeModeCapability()
console.log(JSON.stringify({ config, capability }))`)
  assert.equal(seen.capability.pending, true, 'probing Node takes far longer than a reader waits')
  assert.equal(seen.config.mode, 'tools')
  assert.equal(seen.config.requestedMode, 'code')
  assert.match(seen.config.fallbackReason, /probe is still running/)
  assert.doesNotMatch(seen.config.fallbackReason, /permission model/)
})

const REPORT = `
const capability = await b.probeCodeMode()
const config = b.resolveToolSearchConfig({ mode: 'code' })
const cell = await b.runCodeCell('return 1', { bridge: async () => null })
console.log(JSON.stringify({ capability: { available: capability.available, reason: capability.reason }, fallbackReason: config.fallbackReason, cell: cell.error }))`

/** The launcher fault as the operator and the model see it. */
function assertLauncherFault(seen, { sentence, path }) {
  assert.equal(seen.capability.available, false)
  assert.ok(seen.capability.reason.startsWith(sentence), seen.capability.reason)
  assert.ok(seen.capability.reason.includes(path), `the operator's reason names ${path}: ${seen.capability.reason}`)
  assert.doesNotMatch(seen.capability.reason, /permission model/)
  assert.equal(seen.fallbackReason, `code mode is unavailable on this host (${sentence}); using tools mode`)
  assert.equal(seen.cell.code, 'CODE_MODE_UNAVAILABLE')
  assert.equal(seen.cell.message, `code mode is unavailable: ${sentence}`)
  assertClean(seen.cell.message, 'runCodeCell')
  assertClean(seen.fallbackReason, 'fallbackReason')
}

test('a launcher missing at OPENCLAW_TOOL_SEARCH_LAUNCHER is named, its path only for the operator', { skip: needsCodeMode }, () => {
  const path = join(tmpdir(), 'no-such-dir', LAUNCHER)
  const seen = inFreshProcess(REPORT, { env: { OPENCLAW_TOOL_SEARCH_LAUNCHER: path } })
  assertLauncherFault(seen, {
    sentence: `the code-mode launcher ${LAUNCHER} is missing at the path OPENCLAW_TOOL_SEARCH_LAUNCHER names`,
    path,
  })
})

test('a package copy without its launcher, or with one that cannot run, says so', { skip: needsCodeMode }, (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ots-copy-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  for (const file of ['index.js', 'binding.js', 'package.json', ADDON]) copyFileSync(join(root, file), join(dir, file))
  cpSync(join(root, 'js'), join(dir, 'js'), { recursive: true })
  const index = join(dir, 'index.js')
  const env = { OPENCLAW_TOOL_SEARCH_LAUNCHER: undefined }

  const missing = inFreshProcess(REPORT, { index, env })
  assertLauncherFault(missing, { sentence: `the code-mode launcher ${LAUNCHER} is missing beside the addon`, path: join(dir, LAUNCHER) })

  copyFileSync(join(root, LAUNCHER), join(dir, LAUNCHER))
  chmodSync(join(dir, LAUNCHER), 0o644)
  const inert = inFreshProcess(REPORT, { index, env })
  assertLauncherFault(inert, { sentence: `the code-mode launcher ${LAUNCHER} beside the addon is not executable`, path: join(dir, LAUNCHER) })
})

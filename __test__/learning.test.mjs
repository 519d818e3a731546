// Learned ranking as a gateway meets it: outcomes recorded after searches move the tool the
// agents called up for requests like theirs, survive a new process (the prior's file), show in
// the CLI (`learning show`, `search --explain`), and are forgotten by `learning reset`; off is
// exactly the unlearned ranking; bad input fails with a stable code.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const require = createRequire(import.meta.url)
const { ToolCatalog, learningFiles, resetLearningFolder } = require('../index.js')
const addon = require.resolve('../index.js')
const cli = require.resolve('../bin/openclaw-tool-search.js')

const tools = [
  { name: 'send_message', owner: 'chat', description: 'Send a chat message to a channel.' },
  { name: 'post_update', owner: 'status', description: 'Post a status update to the team page.' },
  { name: 'create_issue', owner: 'tracker', description: 'Open an issue in the tracker.' },
  { name: 'notify', owner: 'alerts', description: 'Page the on-call person.' },
  { name: 'weather', owner: 'weather', description: 'Current weather for a city.' },
]
const request = 'let the team know the release is out'

test('a successful call after a search moves the tool up, and survives a new process', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'ots-learning-'))
  try {
    const options = { ranking: 'lexical', learning: { folder, scope: 'agent-a' } }
    const plain = ToolCatalog.fromJson(JSON.stringify(tools), { ranking: 'lexical' })
    const catalog = ToolCatalog.fromJson(JSON.stringify(tools), options)
    const before = catalog.search(request).map((h) => h.id)
    assert.deepEqual(before, plain.search(request).map((h) => h.id), 'nothing learned: the same ranking')
    assert.notEqual(before[0], 'openclaw:chat:send_message')
    assert.deepEqual(catalog.recordOutcome({ query: request, id: 'openclaw:chat:send_message', ok: true }), { learned: true })
    // A failed call, and a call with learning off, teach nothing (and say why).
    const failed = catalog.recordOutcome({ query: request, id: 'openclaw:alerts:notify', ok: false })
    assert.equal(failed.learned, false)
    assert.match(failed.reason, /did not succeed/)
    assert.equal(plain.recordOutcome({ query: request, id: 'send_message', ok: true }).learned, false)
    assert.equal(plain.learningStatus(), null)
    // It shares no word with the request, so it enters right after the unlearned top hit,
    // which a learned tool cannot pass from nothing (the bonus is below the top score).
    const after = catalog.search(request).map((h) => h.id)
    assert.ok(!before.includes('openclaw:chat:send_message'))
    assert.deepEqual(after.slice(0, 2), [before[0], 'openclaw:chat:send_message'])
    const [part] = catalog.learnedParts(request)
    assert.equal(part.id, 'openclaw:chat:send_message')
    assert.ok(part.bonus > 0 && part.bonus <= 1)
    const status = catalog.learningStatus()
    assert.equal(status.scope, 'agent-a')
    assert.equal(status.learned, 1)
    assert.equal(status.ignored, 1)
    await catalog.flushLearning()

    // A new process with the same folder and scope ranks with what was learned; another scope does not.
    const script = `
      const { ToolCatalog } = require(${JSON.stringify(addon)})
      const [tools, options, query] = JSON.parse(require('node:fs').readFileSync(0, 'utf8'))
      const catalog = ToolCatalog.fromJson(JSON.stringify(tools), options)
      process.stdout.write(JSON.stringify({ second: catalog.search(query)[1]?.id, learned: catalog.learningStatus().learned }))`
    const run = (opts) => JSON.parse(execFileSync(process.execPath, ['-e', script], { input: JSON.stringify([tools, opts, request]) }))
    assert.deepEqual(run(options), { second: 'openclaw:chat:send_message', learned: 1 })
    assert.deepEqual(run({ ranking: 'lexical', learning: { folder, scope: 'agent-b' } }).learned, 0)

    // The CLI shows it, explains the learned part of a score, and forgets it.
    const catalogFile = join(folder, 'tools.json')
    writeFileSync(catalogFile, JSON.stringify(tools))
    const shown = JSON.parse(execFileSync(process.execPath, [cli, 'learning', 'show', '--learning', folder, '--json'], { encoding: 'utf8' }))
    assert.deepEqual(shown.scopes.map((s) => [s.scope, s.learned]), [['agent-a', 1]])
    const explained = JSON.parse(
      execFileSync(process.execPath, [cli, 'search', catalogFile, request, '--ranking', 'lexical', '--learning', folder, '--scope', 'agent-a', '--explain', 'send_message', '--json'], {
        encoding: 'utf8',
      }),
    )
    assert.equal(explained.explain.rank, 2)
    assert.match(explained.explain.note, /learned: \+/)
    assert.equal(learningFiles(folder).length, 1)
    const reset = execFileSync(process.execPath, [cli, 'learning', 'reset', '--learning', folder], { encoding: 'utf8' })
    assert.match(reset, /1 file removed/)
    assert.deepEqual(readdirSync(folder).filter((n) => n.startsWith('learned-')), [])
    assert.equal(resetLearningFolder(folder), 0)
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
})

test('learning settings and outcomes are checked', () => {
  const build = (learning) => ToolCatalog.fromJson(JSON.stringify(tools), { ranking: 'lexical', learning })
  for (const bad of [{ weight: 2 }, { weight: -1 }, { scope: '' }, { scope: 'a\nb' }, { halfLifeDays: 0 }, { folder: 3 }, { unknown: 1 }, 'yes']) {
    assert.throws(() => build(bad), { code: 'INVALID_CATALOG' }, JSON.stringify(bad))
  }
  const catalog = build({ folder: false, scope: `checks-${process.pid}` })
  assert.equal(catalog.learningStatus().file, undefined)
  assert.throws(() => catalog.recordOutcome({ query: 'x', id: 'no_such_tool', ok: true }), { code: 'TOOL_NOT_FOUND' })
  assert.throws(() => catalog.recordOutcome({ query: 'x', id: 'weather' }), { code: 'INVALID_REQUEST' })
  assert.throws(() => catalog.recordOutcome({ query: 'x'.repeat(5000), id: 'weather', ok: true }), { code: 'INVALID_QUERY' })
  // A tool the policy hides teaches nothing.
  const denied = ToolCatalog.fromJson(JSON.stringify(tools), {
    ranking: 'lexical',
    learning: { folder: false, scope: `policy-${process.pid}` },
    policy: { agent: { deny: ['weather'] } },
  })
  assert.throws(() => denied.recordOutcome({ query: 'weather in lyon', id: 'weather', ok: true }), { code: 'TOOL_NOT_FOUND' })
  // An exact name match stays first however much another tool was taught for it.
  for (let i = 0; i < 50; i++) catalog.recordOutcome({ query: 'weather', id: 'send_message', ok: true })
  assert.equal(catalog.search('weather')[0].id, 'openclaw:weather:weather')
})

// Hybrid ranking: the lexical top re-ranked with tool vectors (optional model package),
// the lexical fallback without a model, the on-disk vector cache shared by processes.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { binding, root, sampleCatalogText, throwsCode } from './helpers.mjs'

const { ToolCatalog, rankingCapability } = binding
const modelDir = process.env.OPENCLAW_TOOL_SEARCH_MODEL_DIR
const hasModel = Boolean(modelDir) && existsSync(join(modelDir, 'model.safetensors'))
/** Set by CI: the model tests must run (and fail without the model). */
const requireModel = process.env.REQUIRE_MODEL === '1'
const needsModel = hasModel || requireModel ? false : 'no model: run `node scripts/model-package.mjs` (pnpm test points OPENCLAW_TOOL_SEARCH_MODEL_DIR at it)'

const tools = sampleCatalogText()
  .split('\n')
  .filter((line) => line.trim())
  .map((line) => JSON.parse(line))
const queries = [
  'analyze evidence from a crime scene',
  'book a flight to paris',
  'send a message to my team',
  'what is the weather tomorrow',
  'convert currency',
  'search the web for news',
  'create a calendar event',
  'translate text into spanish',
  'get stock price',
  'find a recipe with chicken',
]
const ids = (hits) => hits.map((h) => h.id)

/** Run `source` (an ES module body) in a fresh Node with `env` added; returns its JSON output. */
function inChild(source, env) {
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', source], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, ...env },
  })
  assert.equal(result.status, 0, result.stderr)
  return JSON.parse(result.stdout)
}

test('without a model: rankingCapability says why, hybrid falls back to lexical ranking', () => {
  const report = inChild(
    `import { createRequire } from 'node:module'
     const { rankingCapability, ToolCatalog } = createRequire(process.cwd() + '/')('./index.js')
     const catalog = new ToolCatalog([{ name: 'send_email', description: 'Send an email' }])
     console.log(JSON.stringify({ capability: rankingCapability(), status: catalog.rankingStatus() }))`,
    { OPENCLAW_TOOL_SEARCH_MODEL_DIR: '', OPENCLAW_TOOL_SEARCH_RANKING: '' },
  )
  assert.equal(report.capability.hybrid, false)
  assert.equal(report.capability.defaultRanking, 'lexical')
  assert.match(report.capability.reason, /openclaw-tool-search-model-minilm is not installed/)
  assert.equal(report.status.ranking, 'lexical')
  assert.equal(report.status.state, 'off')

  const lexical = new ToolCatalog(tools, { ranking: 'lexical' })
  const noModel = new ToolCatalog(tools, { ranking: 'hybrid', model: join(tmpdir(), 'ots-no-model-here'), vectorCache: false })
  return noModel.whenRankingReady().then((status) => {
    assert.equal(status.state, 'failed')
    assert.equal(status.active, 'lexical')
    assert.match(status.error, /could not be loaded/)
    for (const q of queries) assert.deepEqual(ids(noModel.search(q)), ids(lexical.search(q)), q)
  })
})

test('ranking options are checked', () => {
  throwsCode(assert, () => new ToolCatalog(tools, { ranking: 'semantic' }), 'INVALID_CATALOG')
  throwsCode(assert, () => new ToolCatalog(tools, { ranking: 'hybrid', vectorCache: 7 }), 'INVALID_CATALOG')
  const lexical = new ToolCatalog(tools, { ranking: 'lexical' })
  return lexical.whenRankingReady().then((status) => assert.equal(status.state, 'off'))
})

test('hybrid: vectors in the background with progress, then the lexical top re-ranked', { skip: needsModel }, async () => {
  const cache = mkdtempSync(join(tmpdir(), 'ots-vectors-'))
  try {
    const lexical = new ToolCatalog(tools, { ranking: 'lexical', maxSearchLimit: 50 })
    const hybrid = new ToolCatalog(tools, { ranking: 'hybrid', model: modelDir, vectorCache: cache, maxSearchLimit: 50 })
    // Lexical until the vectors are ready.
    assert.equal(hybrid.rankingStatus().active, 'lexical')
    const progress = []
    const final = await hybrid.whenRankingReady((status) => progress.push(status))
    assert.equal(final.state, 'ready')
    assert.equal(final.active, 'hybrid')
    assert.equal(final.done, tools.length)
    assert.equal(final.reused + final.embedded <= tools.length, true)
    assert.ok(final.embedded > 0, 'a fresh cache computes vectors')
    assert.ok(progress.some((s) => s.state === 'embedding'), 'progress events while embedding')
    assert.deepEqual(hybrid.rankingStatus().state, 'ready')

    let reordered = 0
    let complete = 0
    for (const q of queries) {
      const mixed = ids(hybrid.search(q, { limit: 10 }))
      // A query with fewer lexical matches than the page: hybrid returns the same tools, re-ordered.
      const pool = ids(lexical.search(q, { limit: 50 }))
      if (pool.length < 50) {
        complete++
        assert.deepEqual(ids(hybrid.search(q, { limit: 50 })).sort(), [...pool].sort(), `${q}: hybrid re-ranks the lexical matches`)
      }
      if (mixed.join() !== ids(lexical.search(q, { limit: 10 })).join()) reordered++
      assert.deepEqual(ids(await hybrid.searchAsync(q, { limit: 10 })), mixed, 'searchAsync ranks like search')
      // A short page is a prefix of a longer one.
      assert.deepEqual(ids(hybrid.search(q, { limit: 3 })), mixed.slice(0, 3))
    }
    assert.ok(reordered > 0, 'the vectors change some orders')
    assert.ok(complete > 0, 'some queries have fewer than 50 lexical matches')
    // An exact name stays first.
    const exact = tools[5].name
    assert.equal(hybrid.search(exact, { limit: 5 })[0].name, exact)

    // Another process with the same tools and cache: nothing recomputed, same ranking.
    const child = inChild(
      `import { createRequire } from 'node:module'
       import { readFileSync } from 'node:fs'
       const { ToolCatalog } = createRequire(process.cwd() + '/')('./index.js')
       const tools = readFileSync('__test__/data/sample-catalog.jsonl', 'utf8').split('\\n').filter((l) => l.trim()).map((l) => JSON.parse(l))
       const catalog = new ToolCatalog(tools, { ranking: 'hybrid', model: ${JSON.stringify(modelDir)}, vectorCache: ${JSON.stringify(cache)} })
       const status = await catalog.whenRankingReady()
       const orders = ${JSON.stringify(queries)}.map((q) => catalog.search(q, { limit: 10 }).map((h) => h.id))
       console.log(JSON.stringify({ status, orders }))`,
      {},
    )
    assert.equal(child.status.state, 'ready')
    assert.equal(child.status.embedded, 0, 'the second process reads every vector from the cache')
    assert.equal(child.status.reused, tools.length)
    assert.deepEqual(child.orders, queries.map((q) => ids(hybrid.search(q, { limit: 10 }))))

    // A server change embeds only its new tools (memory only: no cache to read).
    const inMemory = new ToolCatalog(tools, { ranking: 'hybrid', model: modelDir, vectorCache: false })
    await inMemory.whenRankingReady()
    const next = inMemory.withSource({ source: 'mcp', owner: 'weather-desk' }, [
      { name: 'forecast_for_city', description: 'Weather forecast for a city for the next days' },
      { name: 'storm_alerts', description: 'Active storm and severe weather alerts in a region' },
    ])
    const nextStatus = await next.whenRankingReady()
    assert.equal(nextStatus.state, 'ready')
    assert.equal(nextStatus.embedded, 2)
    assert.equal(nextStatus.reused, tools.length)
  } finally {
    rmSync(cache, { recursive: true, force: true })
  }
})

test('hybrid is the default when the model package is installed', { skip: needsModel }, () => {
  // A stand-in for the installed optional package, found through NODE_PATH.
  const modules = mkdtempSync(join(tmpdir(), 'ots-model-pkg-'))
  try {
    const pkg = join(modules, 'openclaw-tool-search-model-minilm')
    mkdirSync(pkg)
    writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'openclaw-tool-search-model-minilm', main: 'index.js' }))
    writeFileSync(join(pkg, 'index.js'), `module.exports = { modelDir: ${JSON.stringify(modelDir)} }`)
    const report = inChild(
      `import { createRequire } from 'node:module'
       const { rankingCapability, ToolCatalog } = createRequire(process.cwd() + '/')('./index.js')
       const catalog = new ToolCatalog([{ name: 'send_email', description: 'Send an email' }], { vectorCache: false })
       console.log(JSON.stringify({ capability: rankingCapability(), ranking: catalog.rankingStatus().ranking }))`,
      { NODE_PATH: modules, OPENCLAW_TOOL_SEARCH_MODEL_DIR: '', OPENCLAW_TOOL_SEARCH_RANKING: '' },
    )
    assert.equal(report.capability.hybrid, true)
    assert.equal(report.capability.defaultRanking, 'hybrid')
    assert.equal(report.capability.model, modelDir)
    assert.equal(report.ranking, 'hybrid')
  } finally {
    rmSync(modules, { recursive: true, force: true })
  }
})

test('hybrid: the model\'s searches embed off the event loop and rank as the synchronous API does', { skip: needsModel }, async () => {
  const { ToolSearchSession, resolveToolSearchConfig, queryEmbeddings } = binding
  const catalog = new ToolCatalog(tools, { ranking: 'hybrid', model: modelDir, vectorCache: false })
  assert.equal((await catalog.whenRankingReady()).active, 'hybrid')
  const session = new ToolSearchSession(catalog, resolveToolSearchConfig({ mode: 'tools' }), { executor: async () => 'unused' })
  const stamp = `${process.pid}-${Date.now()}`
  const fresh = queries.map((q, i) => `${q} (${stamp} ${i})`)
  const before = queryEmbeddings()
  const viaSession = []
  for (const q of fresh.slice(0, 3)) {
    const r = await session.handle('tool_search', { query: q, limit: 5 })
    assert.equal(r.ok, true, JSON.stringify(r))
    viaSession.push(ids(r.value))
  }
  const batchQueries = fresh.slice(3, 5).map((query) => ({ query, limit: 4 }))
  const batch = await session.handle('tool_search', { queries: batchQueries })
  assert.equal(batch.ok, true, JSON.stringify(batch))
  const asyncBatch = await catalog.searchBatchAsync({ queries: fresh.slice(5, 7).map((query) => ({ query, limit: 4 })) })
  const after = queryEmbeddings()
  assert.equal(after.onThisThread, before.onThisThread, 'no query was embedded on the event loop')
  assert.ok(after.embedded >= before.embedded + 7, `the new queries were embedded elsewhere (${JSON.stringify([before, after])})`)
  // The synchronous API ranks the same (the vectors are cached now, so it embeds nothing either).
  fresh.slice(0, 3).forEach((q, i) => assert.deepEqual(ids(catalog.search(q, { limit: 5 })), viaSession[i], q))
  assert.deepEqual(batch.value.results.map((g) => ids(g.candidates)), batchQueries.map((b) => ids(catalog.search(b.query, { limit: 4 }))))
  assert.deepEqual(asyncBatch, catalog.searchBatch({ queries: fresh.slice(5, 7).map((query) => ({ query, limit: 4 })) }))
  assert.equal(queryEmbeddings().onThisThread, before.onThisThread)
  // A query it has not seen: the synchronous API embeds it on its caller.
  catalog.search(`${stamp} a query nobody asked before`)
  assert.equal(queryEmbeddings().onThisThread, before.onThisThread + 1)
})

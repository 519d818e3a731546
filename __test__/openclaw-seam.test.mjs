// The seam (openclaw/seam.mjs, openclaw/hooks.mjs) over each tested OpenClaw release's real Tool
// Search module, a release from before the runtime split, and synthetic mutations of the newest
// module that must leave it alone with the right reason. The releases are the ones
// `pnpm qa:openclaw` installs into its cache; `pnpm test` (scripts/setup.mjs) installs them there
// first, once, and says in OPENCLAW_TOOL_SEARCH_OPENCLAW_SETUP which it could not (CI installs them
// all: REQUIRE_OPENCLAW=1). None of OpenClaw's code is kept in this repository.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import test from 'node:test'
import { transformLoaded } from '../openclaw/hooks.mjs'
import {
  findSeam,
  isPatched,
  MARKER,
  mightBeToolSearchModule,
  OLDEST_SUPPORTED_OPENCLAW,
  parseRelease,
  patchToolSearchModule,
  releaseSupport,
  TESTED_OPENCLAW_VERSIONS,
} from '../openclaw/seam.mjs'
import { OPENCLAW_VERSION, openclawDir, openclawInstalled, PRE_SPLIT_OPENCLAW } from '../qa/openclaw/setup.mjs'

// Not helpers.mjs: these tests read OpenClaw's files and this package's JS, never the addon.
const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/** What each tested release's module must show (seam.mjs RELEASE_CASES), read off its dist by hand. */
const EXPECTED_CASES = {
  '2026.8.1': { hitCompaction: 'module', exactMatch: 'id-or-name', cellJsonSafe: 'runCodeMode', callEntry: 'catalog-entry' },
  '2026.8.2': { hitCompaction: 'module', exactMatch: 'id-or-name', cellJsonSafe: 'runCodeMode', callEntry: 'catalog-entry' },
  '2026.9.1': { hitCompaction: 'module', exactMatch: 'id-or-name', cellJsonSafe: 'runCodeMode', callEntry: 'catalog-entry' },
  '2026.9.2': { hitCompaction: 'module', exactMatch: 'id-or-name', cellJsonSafe: 'runCodeMode', callEntry: 'catalog-entry' },
  '2026.9.3': { hitCompaction: 'module', exactMatch: 'id-or-name', cellJsonSafe: 'child', callEntry: 'entry' },
  '2026.9.4': { hitCompaction: 'module', exactMatch: 'id-or-name', cellJsonSafe: 'child', callEntry: 'entry' },
  '2026.9.5': { hitCompaction: 'module', exactMatch: 'id-first', cellJsonSafe: 'child', callEntry: 'entry' },
  '2026.9.6': { hitCompaction: 'closure', exactMatch: 'id-first', cellJsonSafe: 'child', callEntry: 'entry' },
}

/** What scripts/setup.mjs did about the releases (`{ cache, unavailable: { version: reason } }`), or undefined when it did not run. */
const setup = process.env.OPENCLAW_TOOL_SEARCH_OPENCLAW_SETUP ? JSON.parse(process.env.OPENCLAW_TOOL_SEARCH_OPENCLAW_SETUP) : undefined

/**
 * node:test `skip` for a test that reads a release: false when it is installed, or must be
 * (REQUIRE_OPENCLAW=1, or set-up provided it: the test then fails); else why it is not there.
 */
function skipUnlessInstalled(version) {
  if (openclawInstalled(version) || process.env.REQUIRE_OPENCLAW === '1') return false
  if (setup) return setup.unavailable?.[version] ?? false
  const why = process.env.OPENCLAW_TOOL_SEARCH_SKIP_OPENCLAW === '1' ? 'OPENCLAW_TOOL_SEARCH_SKIP_OPENCLAW=1' : '`pnpm test` installs it, as does `node qa/openclaw/setup.mjs --install`'
  return `openclaw@${version} is not installed at ${openclawDir(version)} (${why})`
}

/** A release a test reads must be there once it runs: named plainly when it is not. */
function assertInstalled(version) {
  const why = process.env.REQUIRE_OPENCLAW === '1' ? 'REQUIRE_OPENCLAW=1' : `set-up provided it in ${setup?.cache}`
  assert.ok(openclawInstalled(version), `openclaw@${version} is not installed at ${openclawDir(version)}, though ${why}`)
}

/** The module of a release's dist/ that declares its Tool Search runtime (parsed, not matched as text). */
function toolSearchModule(version) {
  assertInstalled(version)
  const dist = join(openclawDir(version), 'dist')
  const found = []
  for (const file of readdirSync(dist)) {
    if (!/\.m?js$/.test(file)) continue
    const bytes = readFileSync(join(dist, file))
    if (!mightBeToolSearchModule(bytes)) continue
    const text = bytes.toString('utf8')
    if (findSeam(text).toolSearch) found.push({ file: join(dist, file), text })
  }
  assert.equal(found.length, 1, `one Tool Search module in openclaw@${version}'s dist/: ${found.map((f) => f.file).join(', ')}`)
  return found[0]
}

/** Node's own parser accepts the patched module (written as .mjs, checked with --check). */
function assertParses(source, label) {
  const dir = mkdtempSync(join(tmpdir(), 'ots-seam-'))
  try {
    writeFileSync(join(dir, 'patched.mjs'), source)
    execFileSync(process.execPath, ['--check', join(dir, 'patched.mjs')], { stdio: ['ignore', 'ignore', 'pipe'] })
  } catch (error) {
    assert.fail(`${label}: the patched module does not parse: ${error.stderr ?? error.message}`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

test('the tested range is every release from the oldest supported one, oldest first, with its cases known', () => {
  assert.equal(TESTED_OPENCLAW_VERSIONS[0], OLDEST_SUPPORTED_OPENCLAW)
  assert.equal(TESTED_OPENCLAW_VERSIONS.at(-1), OPENCLAW_VERSION)
  assert.deepEqual(Object.keys(EXPECTED_CASES), [...TESTED_OPENCLAW_VERSIONS])
})

for (const version of TESTED_OPENCLAW_VERSIONS) {
  test(`seam on openclaw@${version}: every point found by structure, the release's cases named, the output parses`, { skip: skipUnlessInstalled(version) }, () => {
    const { file, text } = toolSearchModule(version)
    const url = pathToFileURL(file).href
    const patched = patchToolSearchModule(text, { version, url })
    assert.equal(patched.ok, true, patched.reason)
    assert.equal(patched.support, 'tested')
    assert.deepEqual(patched.cases, EXPECTED_CASES[version])
    assert.ok(isPatched(patched.source))
    for (const hook of ['?.rank?.(', '?.runCodeModeChild?.(', '?.catalogRegistered?.(', '?.runEnded?.(', '?.seamLoaded?.(', '?.toolCalled?.(']) {
      assert.equal(patched.source.split(hook).length, 2, `${hook} inserted once`)
    }
    for (const name of ['runCodeModeChild', 'registerToolSearchCatalog', 'clearToolSearchCatalog']) {
      assert.ok(patched.source.includes(`function __otsBuiltin_${name}(`), `${name} wrapped, OpenClaw's own kept`)
    }
    assert.ok(patched.source.length - text.length < 3000, `a small patch (${patched.source.length - text.length} characters)`)
    assertParses(patched.source, version)
    assert.equal(patchToolSearchModule(patched.source, { version }).source, patched.source, 'a patched module is never patched twice')
    // Through the load hook: the version comes from the package the file belongs to.
    const state = { modules: [], listeners: new Set() }
    const loaded = transformLoaded(url, { format: 'module', source: Buffer.from(text) }, state)
    assert.equal(loaded.source, patched.source)
    assert.deepEqual(state.modules, [{ url, version, patched: true, support: 'tested', note: undefined, cases: EXPECTED_CASES[version] }])
  })
}

test(`seam on openclaw@${PRE_SPLIT_OPENCLAW} (before the runtime split): left alone, the reason names ${OLDEST_SUPPORTED_OPENCLAW}`, { skip: skipUnlessInstalled(PRE_SPLIT_OPENCLAW) }, () => {
  assertInstalled(PRE_SPLIT_OPENCLAW)
  const dist = join(openclawDir(PRE_SPLIT_OPENCLAW), 'dist')
  const candidates = readdirSync(dist).filter((f) => /\.m?js$/.test(f) && mightBeToolSearchModule(readFileSync(join(dist, f))))
  const state = { modules: [], listeners: new Set() }
  for (const file of candidates) {
    const url = pathToFileURL(join(dist, file)).href
    const result = { format: 'module', source: readFileSync(join(dist, file)) }
    assert.equal(transformLoaded(url, result, state), result, `${file} unchanged`)
  }
  assert.ok(state.modules.length >= 1, 'its Tool Search module was seen')
  for (const module of state.modules) {
    assert.equal(module.patched, false)
    assert.equal(module.reason, `OpenClaw ${PRE_SPLIT_OPENCLAW} predates ${OLDEST_SUPPORTED_OPENCLAW}, the oldest release this package serves`)
  }
})

test('releases: tested, untested (newer, betas, hot fixes) and unsupported (before the split, unreadable)', () => {
  assert.deepEqual(releaseSupport('2026.9.6'), { support: 'tested' })
  assert.deepEqual(releaseSupport('2026.8.1'), { support: 'tested' })
  assert.match(releaseSupport('2026.9.99').reason, /^OpenClaw 2026\.9\.99 is newer than the newest tested release \(tested: 2026\.8\.1 to 2026\.9\.6\)$/)
  assert.equal(releaseSupport('2026.10.1').support, 'untested')
  assert.match(releaseSupport('2026.9.7-beta.2').reason, /is a beta/)
  assert.match(releaseSupport('2026.8.1-beta.1').reason, /is a beta/, 'betas of the oldest release have the split')
  assert.match(releaseSupport('2026.9.6-1').reason, /is a hot fix/)
  assert.equal(releaseSupport('2026.9.6-1').support, 'untested')
  assert.match(releaseSupport('2026.7.35').reason, /predates 2026\.8\.1/)
  assert.match(releaseSupport('2026.7.1-1').reason, /predates 2026\.8\.1/, 'a hot fix of an old release')
  assert.match(releaseSupport('2026.7.2-beta.7').reason, /predates 2026\.8\.1/)
  assert.equal(releaseSupport('2025.12.40').support, 'unsupported')
  assert.match(releaseSupport('next').reason, /not a release version/)
  assert.match(releaseSupport(undefined).reason, /unknown/)
  assert.deepEqual(parseRelease('2026.9.1-beta.3'), { base: [2026, 9, 1], kind: 'beta', number: 3 })
})

// ------------------------------------------------------------------ mutations of the newest module

const mutationSkip = skipUnlessInstalled(OPENCLAW_VERSION)

test('seam: an untested newer release is patched (the engine decides whether to serve it), an old or unknown one is not', { skip: mutationSkip }, () => {
  const { text } = toolSearchModule(OPENCLAW_VERSION)
  const newer = patchToolSearchModule(text, { version: '2026.9.99' })
  assert.equal(newer.ok, true)
  assert.equal(newer.support, 'untested')
  assert.match(newer.note, /newer than the newest tested release/)
  assert.ok(newer.source.includes('"support":"untested"'), 'the module tells the engine')
  for (const [version, reason] of [
    ['2026.7.35', /predates 2026\.8\.1/],
    [undefined, /the OpenClaw version is unknown/],
  ]) {
    const refused = patchToolSearchModule(text, { version })
    assert.equal(refused.ok, false)
    assert.match(refused.reason, reason)
  }
})

test('seam: each point missing, ambiguous inside its function, or of another shape leaves the module alone with the reason', { skip: mutationSkip }, () => {
  const { text } = toolSearchModule(OPENCLAW_VERSION)
  const cases = [
    ['the bridge renamed', (t) => t.replaceAll('runCodeModeBridgeRequest', 'runBridgeRequest'), /no module-scope declaration of runCodeModeBridgeRequest/],
    ['the child takes no parameter', (t) => t.replace('function runCodeModeChild(params) {', 'function runCodeModeChild() {\n\tconst params = arguments[0];'), /runCodeModeChild does not take 1 named parameter/],
    ['the child a function expression', (t) => t.replace('function runCodeModeChild(params) {', 'const runCodeModeChild = function (params) {'), /runCodeModeChild is not a function declaration/],
    ['search assigned twice', (t) => t.replace('this.search = async (query, options) => {', 'this.search = undefined;\n\t\tthis.search = async (query, options) => {'), /assigns this\.search 2 times/],
    ['search no longer async', (t) => t.replace('this.search = async (query, options) => {', 'this.search = (query, options) => {').replaceAll('await ', ''), /not an async function/],
    ['the limit local renamed', (t) => t.replace('const limit = readToolSearchLimit(', 'const maxHits = readToolSearchLimit('), /declares limit 0 times/],
    ['the entries local declared twice at the top of search', (t) => t.replace('this.config);\n\t\t\tconst entries = visibleCatalogEntries(catalog, options);', 'this.config);\n\t\t\tvar entries = visibleCatalogEntries(catalog, options);\n\t\t\tvar entries = entries.slice();'), /declares entries 2 times/],
    ['the search counted after the entries', (t) => t.replace('\t\t\tcatalog.searchCount += 1;\n\t\t\tconst limit', '\t\t\tconst limit').replace('\t\t\tconst spelling = query.trim();', '\t\t\tcatalog.searchCount += 1;\n\t\t\tconst spelling = query.trim();'), /counts the search after its entries/],
    ['search ends another way', (t) => t.replace('return [...exactEntries, ...ranked].slice(0, limit).map(compactEntry);', 'const out = [...exactEntries, ...ranked].slice(0, limit).map(compactEntry);\n\t\t\treturn out;'), /does not end with `return <hits>\.map\(<compact>\)`/],
    ['the catalog assignment moved into a nested function', (t) => t.replace('\tparams.catalogRef.current = next;\n', '\t(() => {\n\t\tparams.catalogRef.current = next;\n\t})();\n'), /registerToolSearchCatalog assigns its catalogRef\.current 0 times/],
    ['the catalog assigned twice', (t) => t.replace('\tparams.catalogRef.current = next;\n', '\tparams.catalogRef.current = next;\n\tparams.catalogRef.current = next;\n'), /assigns its catalogRef\.current 2 times/],
    ['clear renamed', (t) => t.replaceAll('clearToolSearchCatalog', 'disposeToolSearchCatalog'), /no module-scope declaration of clearToolSearchCatalog/],
    ['bridge values made JSON-safe two ways', (t) => t.replace('value: toToolSearchJsonSafe(value)\n', 'value: toToolSearchJsonSafe(value),\n\t\t\t\t\t...{ type: "bridge-result", value: structuredClone(value) }\n'), /through 2 functions/],
    ['callEntry assigned twice', (t) => t.replace('this.callEntry = (entry, input, options) =>', 'this.callEntry = undefined;\n\t\tthis.callEntry = (entry, input, options) =>'), /assigns this\.callEntry 2 times/],
    ['callEntry without an entry parameter', (t) => t.replace('this.callEntry = (entry, input, options) =>', 'this.callEntry = (target, input, options) =>'), /this\.callEntry takes no named entry parameter/],
    ['a name the patch declares is taken', (t) => `${t}\nconst __otsRanked = 1;\n`, /already uses the name __otsRanked/],
    ['the module does not parse', (t) => `${t}\nfunction (\n`, /does not parse/],
  ]
  for (const [what, edit, reason] of cases) {
    const mutated = edit(text)
    assert.notEqual(mutated, text, `${what}: the mutation applies`)
    const result = patchToolSearchModule(mutated, { version: OPENCLAW_VERSION })
    assert.equal(result.ok, false, what)
    assert.match(result.reason, reason, what)
  }
  // Names that only occur elsewhere in the file (a duplicate statement outside the function) do not matter.
  const elsewhere = patchToolSearchModule(`${text}\nconst spelling = 'x'.trim();\nconst limit = 1;\n`, { version: OPENCLAW_VERSION })
  assert.equal(elsewhere.ok, true, elsewhere.reason)
})

test('seam: reformatted code (the same structure, other whitespace and statement order outside the points) is still found', { skip: mutationSkip }, () => {
  const { text } = toolSearchModule(OPENCLAW_VERSION)
  const reformatted = text.replaceAll('\t', '  ').replace('const exact = spelling.toLowerCase();', 'const exact = spelling.toLowerCase(); /* moved */')
  const patched = patchToolSearchModule(reformatted, { version: OPENCLAW_VERSION })
  assert.equal(patched.ok, true, patched.reason)
  assertParses(patched.source, 'reformatted')
})

test("seam: the package's own files never look like OpenClaw's module to the load hook", () => {
  const state = { modules: [], listeners: new Set() }
  for (const file of ['seam.mjs', 'hooks.mjs', 'engine.mjs', 'plugin.mjs', 'register.mjs']) {
    const path = join(root, 'openclaw', file)
    const result = { format: 'module', source: readFileSync(path) }
    assert.equal(transformLoaded(pathToFileURL(path).href, result, state), result, file)
  }
  assert.deepEqual(state.modules, [])
})

test('seam: a module that only mentions the names, or is too large to parse, is reported or skipped as it should be', () => {
  const state = { modules: [], listeners: new Set() }
  const mention = { format: 'module', source: 'export const names = ["ToolSearchRuntime", "runCodeModeChild", "registerToolSearchCatalog"]\n' }
  assert.equal(transformLoaded('file:///x/mention.mjs', mention, state), mention)
  assert.deepEqual(state.modules, [], 'not a Tool Search module: nothing to report')
  const huge = `var ToolSearchRuntime = class {}; function runCodeModeChild(params) {} function registerToolSearchCatalog(params) {}\n${'// filler\n'.repeat(500_000)}`
  const result = patchToolSearchModule(huge, { version: OPENCLAW_VERSION, url: 'file:///x/worker.mjs' })
  assert.equal(result.ok, false)
  assert.equal(result.toolSearch, false, "OpenClaw's worker bundles only carry a copy: not a refusal to report")
  assert.match(result.reason, /file:\/\/\/x\/worker\.mjs is 5 MB, over the 4 MB the seam parses/)
  const loaded = { format: 'module', source: huge }
  assert.equal(transformLoaded('file:///x/worker.mjs', loaded, state), loaded)
  assert.deepEqual(state.modules, [])
})

test('seam: two copies of the package installing the hook patch a module once', { skip: mutationSkip || (typeof (await import('node:module')).registerHooks !== 'function' ? `Node ${process.version} has no module.registerHooks` : false) }, async () => {
  const first = await import('../openclaw/hooks.mjs')
  const second = await import(`../openclaw/hooks.mjs?copy=${Date.now()}`)
  assert.notEqual(first.installSeamHooks, second.installSeamHooks, 'two module instances')
  const state = first.installSeamHooks()
  assert.equal(second.installSeamHooks(), state, 'one process-wide state')
  assert.equal(state.installed, true)
  // A copy of OpenClaw's Tool Search module in a folder that says it is openclaw@<tested>: the
  // hook patches it as it loads (its imports of OpenClaw's other chunks then fail: not needed here).
  const dir = mkdtempSync(join(tmpdir(), 'ots-double-'))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'openclaw', version: OPENCLAW_VERSION }))
  const { text } = toolSearchModule(OPENCLAW_VERSION)
  writeFileSync(join(dir, 'tool-search.mjs'), text)
  const before = state.modules.length
  await import(pathToFileURL(join(dir, 'tool-search.mjs')).href).catch(() => {})
  rmSync(dir, { recursive: true, force: true })
  const seen = state.modules.slice(before)
  assert.equal(seen.length, 1, JSON.stringify(seen))
  assert.equal(seen[0].patched, true, seen[0].reason)
})

test('the marker names the seam version', () => {
  assert.match(MARKER, /seam v\d+/)
})

// The OpenClaw plugin's parts that run without OpenClaw: runCodeCell (a cell whose bridge is the
// gateway's), the engine's ranking of OpenClaw-shaped entries, derived versions, fallbacks, the
// run summary line, the release rules and the plugin's registration. The seam over each OpenClaw
// release's own module is in openclaw-seam.test.mjs; `pnpm qa:openclaw` runs the whole plugin
// inside the real gateway, release by release.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import test from 'node:test'
import { binding, needsCodeMode, root, throwsCode } from './helpers.mjs'
import { engine, modelProblem, resolveSettings } from '../openclaw/engine.mjs'
import plugin from '../openclaw/plugin.mjs'

const { ToolCatalog, runCodeCell } = binding

// ------------------------------------------------------------------ runCodeCell

test('runCodeCell: every openclaw.tools request reaches the bridge with its positional arguments', { skip: needsCodeMode }, async () => {
  const seen = []
  const result = await runCodeCell(
    `const hits = await openclaw.tools.search('send an email', { limit: 3 });
     const tool = await openclaw.tools.describe(hits[0].id);
     const out = await openclaw.tools.call(tool.id, { to: 'a@b.c' });
     const bare = await openclaw.tools.call('x');
     return { hits, tool, out, bare };`,
    {
      bridge: async (op, args) => {
        seen.push([op, args])
        if (op === 'search') return [{ id: 'openclaw:mail:send_email', name: 'send_email' }]
        if (op === 'describe') return { id: args[0], parameters: {} }
        return { tool: { id: args[0] }, result: { details: args[1] } }
      },
    },
  )
  assert.equal(result.ok, true, JSON.stringify(result.error))
  assert.deepEqual(seen, [
    ['search', ['send an email', { limit: 3 }]],
    ['describe', ['openclaw:mail:send_email']],
    ['call', ['openclaw:mail:send_email', { to: 'a@b.c' }]],
    ['call', ['x', {}]],
  ])
  assert.deepEqual(result.value.out, { tool: { id: 'openclaw:mail:send_email' }, result: { details: { to: 'a@b.c' } } })
  assert.deepEqual(result.telemetry.bridgeCalls, { search: 1, describe: 1, call: 2 })
})

test('runCodeCell: a bridge error rejects in the cell with its message and code, and the cell goes on', { skip: needsCodeMode }, async () => {
  const longId = `openclaw:${'o'.repeat(256)}:${'n'.repeat(256)}`
  const result = await runCodeCell(
    `const out = [];
     try { await openclaw.tools.describe(${JSON.stringify(longId)}) } catch (e) { out.push([e.message, e.code]) }
     try { await openclaw.tools.search('q'.repeat(5000)) } catch (e) { out.push([e.message, e.code]) }
     try { await openclaw.tools.call('boom') } catch (e) { out.push([e.message, e.code]) }
     return out;`,
    {
      bridge: async (op, args) => {
        if (op === 'describe') throw new Error(`Unknown tool id: ${args[0].length} chars`)
        if (op === 'search') return { length: args[0].length }
        throw Object.assign(new Error('policy said no'), { code: 'TOOL_BLOCKED' })
      },
    },
  )
  assert.equal(result.ok, true, JSON.stringify(result.error))
  // A 522-character id and a 5,000-character query are the host's to judge, not a bridge violation.
  assert.deepEqual(result.value, [
    [`Unknown tool id: ${longId.length} chars`, 'bridge_error'],
    ['policy said no', 'TOOL_BLOCKED'],
  ])
})

test("runCodeCell: logStyle 'json' writes console lines as OpenClaw's child does", { skip: needsCodeMode }, async () => {
  const code = `console.log('text', { a: 1 }, [1, 2], undefined, 3n); console.warn('careful'); console.error(new Error('bad')); return null`
  const json = await runCodeCell(code, { bridge: () => null, logStyle: 'json' })
  assert.deepEqual(json.logs, ['text {"a":1} [1,2] null 3', 'careful', '{}'])
  const node = await runCodeCell(code, { bridge: () => null })
  assert.equal(node.logs[0], 'text { a: 1 } [ 1, 2 ] undefined 3n')
  assert.equal(node.logs[1], '[warn] careful')
})

test('runCodeCell: the deadline ends the cell and aborts the request in flight', { skip: needsCodeMode }, async () => {
  let aborted
  const result = await runCodeCell(`await openclaw.tools.call('slow'); return 1`, {
    timeoutMs: 1000,
    bridge: (op, args, signal) =>
      new Promise((_, reject) =>
        signal.addEventListener('abort', () => {
          aborted = signal.reason?.message
          reject(new Error('aborted'))
        }),
      ),
  })
  assert.equal(result.ok, false)
  assert.equal(result.error.code, 'CODE_TIMEOUT')
  await new Promise((resolve) => setTimeout(resolve, 50))
  assert.match(aborted ?? '', /ended before this request finished/)
})

test("runCodeCell: the caller's AbortSignal ends the cell", { skip: needsCodeMode }, async () => {
  const controller = new AbortController()
  setTimeout(() => controller.abort(), 200)
  const result = await runCodeCell('await new Promise(() => {})', { bridge: () => null, signal: controller.signal })
  assert.equal(result.ok, false)
  assert.equal(result.error.code, 'CODE_ABORTED')
})

test('runCodeCell: bad options are coded errors', () => {
  throwsCode(assert, () => runCodeCell(1, { bridge: () => null }), 'INVALID_REQUEST')
  throwsCode(assert, () => runCodeCell('return 1', {}), 'INVALID_REQUEST', /bridge must be a function/)
  throwsCode(assert, () => runCodeCell('return 1', null), 'INVALID_REQUEST')
  throwsCode(assert, () => runCodeCell('return 1', { bridge: () => null, logStyle: 'xml' }), 'INVALID_REQUEST', /logStyle/)
  throwsCode(assert, () => runCodeCell('return 1', { bridge: () => null, timeoutMs: -5 }), 'INVALID_REQUEST', /timeoutMs/)
  // NaN and Infinity are refused, not read as absent (JSON would write them as null).
  for (const timeoutMs of [NaN, Infinity]) throwsCode(assert, () => runCodeCell('return 1', { bridge: () => null, timeoutMs }), 'INVALID_REQUEST', /timeoutMs must be a positive number/)
})

// ------------------------------------------------------------------ the engine

/** OpenClaw's catalog entries (toCatalogEntry's shape), new objects as OpenClaw makes every run. */
function entriesOf(tools) {
  return tools
    .map((t) => ({
      id: `${t.source ?? 'openclaw'}:${t.owner}:${t.name}`,
      source: t.source ?? 'openclaw',
      sourceName: t.owner,
      ...(t.mcp ? { mcp: t.mcp } : {}),
      name: t.name,
      label: t.label,
      description: t.description,
      parameters: t.parameters,
      tool: { name: t.name, execute() {} },
    }))
    .sort((a, b) => a.id.localeCompare(b.id))
}

const schema = (props) => ({ type: 'object', properties: Object.fromEntries(props.map((p) => [p, { type: 'string' }])), required: props.slice(0, 1) })
const BASE_TOOLS = [
  { owner: 'mail', name: 'send_email', description: 'Send an email message to a recipient.', parameters: schema(['to', 'subject', 'body']) },
  { owner: 'mail', name: 'list_inbox', description: 'List the messages in the inbox.', parameters: schema(['folder']) },
  { owner: 'calendar', name: 'create_event', description: 'Create a calendar event with attendees.', parameters: schema(['title', 'start']) },
  { owner: 'calendar', name: 'cancel_event', description: 'Cancel a calendar event.', parameters: schema(['event_id']) },
  { owner: 'core', name: 'read', description: 'Read a file from the workspace.', parameters: schema(['path']) },
  {
    source: 'mcp', owner: 'github', name: 'github__create_issue', description: 'Create an issue in a GitHub repository.',
    parameters: schema(['repo', 'title']), mcp: { serverName: 'github', safeServerName: 'github', toolName: 'create_issue', operation: 'tool' },
  },
]
const quiet = () => {
  const lines = []
  return { lines, info: (m) => lines.push(['info', m]), warn: (m) => lines.push(['warn', m]) }
}
const tool = engine()
const logger = quiet()
tool.configure(resolveSettings({ ranking: 'lexical' }), logger)
tool.packageRoot = root

test('engine: ranks OpenClaw entries as the native catalog ranks the same tools, returning OpenClaw\'s own entry objects', async () => {
  const entries = entriesOf(BASE_TOOLS)
  const catalog = { entries }
  const runtime = { ctx: { runId: 'run-rank' } }
  const ranked = await tool.rank({ runtime, catalog, entries, query: 'send an email', limit: 3 })
  const native = new ToolCatalog(BASE_TOOLS.map((t) => ({ ...t, inputSchema: t.parameters, parameters: undefined })), { ranking: 'lexical', maxSearchLimit: 50 })
  assert.deepEqual(ranked.map((e) => e.id), native.search('send an email', { limit: 3 }).map((h) => h.id))
  assert.ok(ranked.every((e) => entries.includes(e)), 'the entries OpenClaw passed in, not copies')
  // Another run: new entry objects with the same content reuse the records (and the built catalog).
  const again = entriesOf(BASE_TOOLS)
  const records = tool.records.size
  const ranked2 = await tool.rank({ runtime, catalog: { entries: again }, entries: again, query: 'send an email', limit: 3 })
  assert.deepEqual(ranked2.map((e) => e.id), ranked.map((e) => e.id))
  assert.ok(ranked2.every((e) => again.includes(e)))
  assert.equal(tool.records.size, records, 'equal content maps to the records already made')
  const line = tool.runEnded({ runId: 'run-rank', catalogRef: { current: catalog } })
  assert.match(line, /^openclaw-tool-search \d+\.\d+\.\d+: run run-rank served searches=2 cells=0 ranking=lexical index=off fallbacks=0 learned=0$/)
  assert.deepEqual(logger.lines.at(-1), ['info', line])
})

test("engine: the live audit covers the latest run's whole catalog, named by OpenClaw's ids; before any run it says so", async () => {
  // The process's one engine: as in a gateway before its first run, no catalog yet.
  const fresh = engine()
  const before = fresh.lastView
  fresh.lastView = undefined
  await assert.rejects(fresh.auditLive({}), (error) => error.code === 'UNAVAILABLE' && /no run has registered/.test(error.message))
  fresh.lastView = before
  const entries = entriesOf(BASE_TOOLS)
  await fresh.rank({ runtime: { ctx: { runId: 'run-audit' } }, catalog: { entries }, entries, query: 'send an email', limit: 3 })
  const audit = await fresh.auditLive({})
  assert.equal(audit.totals.tools, BASE_TOOLS.length)
  assert.equal(audit.tools.length, BASE_TOOLS.length)
  assert.deepEqual(audit.tools.map((t) => t.openclawId).sort(), entries.map((e) => e.id).sort())
  assert.deepEqual(audit.gateway, { openclaw: null, plugin: fresh.version })
  const quick = await fresh.auditLive({ findability: false })
  assert.equal(quick.findability, false)
  await assert.rejects(fresh.auditLive({ findability: 'yes' }), (error) => error.code === 'INVALID_REQUEST')
})

// The plugin registers the method once its seam is installed, which needs module.registerHooks.
const noHooks = typeof (await import('node:module')).registerHooks !== 'function' ? `Node ${process.version} has no module.registerHooks: the plugin installs no seam, so no gateway method` : false

test('plugin: registers the live audit as a gateway method that answers, or fails with a code', { skip: noHooks }, async () => {
  const methods = new Map()
  const api = { rootDir: root, logger: quiet(), on() {}, runtime: { version: '2026.9.6' }, pluginConfig: { ranking: 'lexical' }, registerGatewayMethod: (name, handler, opts) => methods.set(name, { handler, opts }) }
  plugin.register(api)
  const method = methods.get('openclaw-tool-search.audit')
  assert.ok(method, [...methods.keys()].join(', '))
  assert.equal(method.opts.scope, 'operator.read')
  const answer = await new Promise((resolve) => method.handler({ params: { findability: 7 }, respond: (ok, payload, error) => resolve({ ok, payload, error }) }))
  assert.equal(answer.ok, false)
  assert.equal(answer.error.code, 'INVALID_REQUEST')
  tool.configure(resolveSettings({ ranking: 'lexical' }), logger)
})

/**
 * Removes a learning folder. The run's end flushes what it learned on a background thread, which
 * may write into the folder while it is removed: `rmSync`'s own retries only retry the final
 * `rmdir` (a file written meanwhile stays, ENOTEMPTY each time), so the whole removal is retried.
 */
async function removeFolder(folder) {
  for (let attempt = 1; ; attempt++) {
    try {
      rmSync(folder, { recursive: true, force: true })
      return
    } catch (error) {
      if (error?.code !== 'ENOTEMPTY' || attempt >= 50) throw error
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
}

test('engine: a successful call after a search teaches the catalog (learned=N on the run line); a refused, failed or unsearched call does not', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'ots-engine-learning-'))
  const learner = engine()
  const saved = learner.settings
  try {
    learner.configure(resolveSettings({ ranking: 'lexical', vectorCache: folder }), logger)
    const entries = entriesOf(BASE_TOOLS)
    const catalog = { entries }
    const runtime = { ctx: { runId: 'run-learn' } }
    const query = 'put a team meeting in the calendar'
    const shown = await learner.rank({ runtime, catalog, entries, query, limit: 5 })
    assert.ok(shown.length >= 2, JSON.stringify(shown.map((e) => e.id)))
    const target = shown[shown.length - 1]
    const called = (result) => learner.toolCalled({ runtime, entry: target, result })
    // OpenClaw's callEntry result: `{ tool, result }`; blocked and error results teach nothing.
    called(Promise.resolve({ tool: {}, result: { content: [], details: { status: 'blocked', reason: 'no' } } }))
    const failed = Promise.reject(new Error('tool failed'))
    failed.catch(() => {}) // OpenClaw awaits the call's own promise; the hook must not be the only handler
    called(failed)
    called(Promise.resolve({ tool: {}, result: { content: [{ type: 'text', text: 'ok' }], details: {} } }))
    // A tool no search of the run showed: nothing to attribute it to.
    const unseen = entries.find((e) => !shown.includes(e))
    if (unseen) learner.toolCalled({ runtime, entry: unseen, result: Promise.resolve({ result: {} }) })
    await new Promise((resolve) => setTimeout(resolve, 10))
    const line = learner.runEnded({ runId: 'run-learn', catalogRef: { current: catalog } })
    assert.match(line, / learned=1$/)
    const view = await learner.viewFor(catalog, entries)
    const status = view.catalog.learningStatus()
    assert.equal(status.learned, 1)
    assert.equal(status.ignored, 2)
    assert.equal(status.file.startsWith(folder), true, 'kept in the vector cache folder')
    // The next run of the same request ranks the called tool at least as high.
    const again = await learner.rank({ runtime: { ctx: { runId: 'run-learn-2' } }, catalog, entries, query, limit: 5 })
    assert.ok(again.indexOf(target) <= shown.indexOf(target) && again.indexOf(target) >= 0, `${again.indexOf(target)} vs ${shown.indexOf(target)}`)
    learner.runEnded({ runId: 'run-learn-2', catalogRef: { current: catalog } })
    // Off: no learning option, nothing recorded.
    learner.configure(resolveSettings({ ranking: 'lexical', vectorCache: folder, learning: false }), logger)
    assert.equal(learner.catalogOptions().learning, undefined)
    assert.throws(() => resolveSettings({ learning: 'yes' }), /^Error: plugins\.entries\.openclaw-tool-search\.config\.learning: invalid config: must be boolean or object$/)
    assert.throws(() => resolveSettings({ learning: { scope: 'team' } }), /config\.learning\.scope: invalid config: must be equal to one of the allowed values \(allowed: "agent", "gateway"\)$/)
    assert.throws(() => resolveSettings({ learning: { scopes: 'agent' } }), /config\.learning: invalid config: must not have additional properties: "scopes"$/)
    assert.equal(resolveSettings({ learning: { enabled: false } }).learning, false)
    assert.equal(resolveSettings({ learning: { scope: 'gateway' } }).learningScope, 'gateway')
  } finally {
    learner.configure(saved, logger)
    await removeFolder(folder)
  }
})

test('engine: each OpenClaw agent learns alone by default (learning.scope "gateway" shares one prior); the live audit names the scopes', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'ots-engine-agents-'))
  const learner = engine()
  const saved = learner.settings
  const query = 'put a team meeting in the calendar'
  // One gateway's runs: the same catalog for two agents; `accounting` calls the lowest hit it
  // was shown, again and again; then each agent searches the same request.
  async function teachAndAsk(settings, tag) {
    learner.configure(resolveSettings({ ranking: 'lexical', vectorCache: folder, ...settings }), logger)
    const entries = entriesOf(BASE_TOOLS)
    const catalog = { entries }
    const run = (agentId, n) => ({ ctx: { runId: `run-${tag}-${agentId}-${n}`, agentId, sessionKey: `agent:${agentId}:main` } })
    const first = await learner.rank({ runtime: run('deploy', 0), catalog, entries, query, limit: 5 })
    learner.runEnded({ runId: `run-${tag}-deploy-0` })
    const target = first[first.length - 1]
    for (let n = 1; n <= 6; n++) {
      const runtime = run('accounting', n)
      await learner.rank({ runtime, catalog, entries, query, limit: 5 })
      learner.toolCalled({ runtime, entry: target, result: Promise.resolve({ result: { content: [], details: {} } }) })
      await new Promise((resolve) => setTimeout(resolve, 5))
      learner.runEnded({ runId: runtime.ctx.runId, catalogRef: { current: catalog } })
    }
    const ask = async (agentId) => {
      const ranked = await learner.rank({ runtime: run(agentId, 99), catalog, entries, query, limit: 5 })
      learner.runEnded({ runId: `run-${tag}-${agentId}-99` })
      return ranked.map((e) => e.id)
    }
    return { first: first.map((e) => e.id), target: target.id, accounting: await ask('accounting'), deploy: await ask('deploy'), catalog }
  }
  try {
    const agents = await teachAndAsk({}, 'agents')
    assert.equal(agents.accounting[0], agents.target, 'the agent that called it ranks it first')
    assert.deepEqual(agents.deploy, agents.first, "another agent's ranking did not move")
    const audit = await learner.auditLive({ findability: false })
    assert.equal(audit.learning.scope, 'agent')
    const scopes = audit.learning.scopes.map((s) => s.scope).sort()
    assert.ok(scopes.includes('agent:accounting'), JSON.stringify(audit.learning))
    assert.equal(audit.learning.scopes.find((s) => s.scope === 'agent:accounting').learned, 6)
    assert.ok(!audit.learning.scopes.some((s) => s.scope === 'agent:deploy' && s.learned > 0), JSON.stringify(audit.learning))
    // One prior for the gateway: what accounting taught moves deploy's ranking too.
    const shared = await teachAndAsk({ learning: { scope: 'gateway' } }, 'shared')
    assert.equal(shared.deploy[0], shared.target, 'the shared prior moved the other agent')
    const sharedAudit = await learner.auditLive({ findability: false })
    assert.equal(sharedAudit.learning.scope, 'gateway')
    assert.equal(sharedAudit.learning.scopes.find((s) => s.scope === 'gateway').learned, 6)
  } finally {
    learner.configure(saved, logger)
    await removeFolder(folder)
  }
})

test("engine: a catalog OpenClaw registers is indexed before its first search", async () => {
  const entries = entriesOf(BASE_TOOLS)
  const catalog = { entries }
  tool.catalogRegistered(catalog)
  const building = tool.views.get(entries)
  assert.ok(building, 'the build started when the catalog was registered')
  const ranked = await tool.rank({ runtime: { ctx: {} }, catalog, entries, query: 'create a calendar event', limit: 2 })
  assert.equal(tool.views.get(entries), building, 'the search used the view built at registration')
  assert.equal(ranked[0].name, 'create_event')
})

test('engine: a filtered view (allowedIds) ranks only the visible entries', async () => {
  const entries = entriesOf(BASE_TOOLS)
  const catalog = { entries }
  const visible = entries.filter((e) => e.sourceName !== 'mail')
  const ranked = await tool.rank({ runtime: { ctx: { runId: 'run-filter' } }, catalog, entries: visible, query: 'create an event or an issue', limit: 5 })
  assert.ok(ranked.length > 0)
  assert.ok(ranked.every((e) => visible.includes(e)))
})

test('engine: one changed owner derives the catalog (withSource) and ranks as a full build', async () => {
  await tool.rank({ runtime: { ctx: {} }, catalog: { entries: entriesOf(BASE_TOOLS) }, entries: entriesOf(BASE_TOOLS), query: 'x', limit: 1 })
  const changed = [
    ...BASE_TOOLS.filter((t) => t.owner !== 'calendar'),
    { owner: 'calendar', name: 'reschedule_event', description: 'Move a calendar event to a new time.', parameters: schema(['event_id', 'start']) },
  ]
  const entries = entriesOf(changed)
  const before = tool.lastView.catalog
  const ranked = await tool.rank({ runtime: { ctx: {} }, catalog: { entries }, entries, query: 'move my calendar event', limit: 4 })
  assert.notEqual(tool.lastView.catalog, before)
  const full = new ToolCatalog(changed.map((t) => ({ ...t, inputSchema: t.parameters, parameters: undefined })), { ranking: 'lexical', maxSearchLimit: 50 })
  assert.equal(tool.lastView.catalog.fingerprint, full.fingerprint)
  assert.deepEqual(ranked.map((e) => e.id), full.search('move my calendar event', { limit: 4 }).map((h) => h.id))
})

test('engine: a change the derived version refuses is built in full instead', async () => {
  await tool.rank({ runtime: { ctx: {} }, catalog: { entries: entriesOf(BASE_TOOLS) }, entries: entriesOf(BASE_TOOLS), query: 'x', limit: 1 })
  // withSource binds an MCP tool's server to its owner; OpenClaw's owner for MCP tools is the
  // server's safe name, so a tool whose server is another one cannot be derived.
  const changed = BASE_TOOLS.map((t) => (t.owner === 'github' ? { ...t, description: 'Open an issue on a repository.', mcp: { ...t.mcp, serverName: 'gitlab' } } : t))
  const entries = entriesOf(changed)
  const ranked = await tool.rank({ runtime: { ctx: {} }, catalog: { entries }, entries, query: 'open an issue on a repository', limit: 2 })
  assert.ok(ranked, 'ranked natively')
  assert.equal(ranked[0].name, 'github__create_issue')
})

test('engine: a tool the native catalog refuses is indexed in a repaired form, alone, and named in one warning per run', async () => {
  const nest = (levels) => {
    let schema = { type: 'string' }
    for (let i = 0; i < levels; i++) schema = { type: 'object', properties: { x: schema } }
    return schema
  }
  const tools = [
    ...BASE_TOOLS,
    { owner: 'odd', name: 'has:colon', description: 'Reconcile the ledger accounts for a month.' },
    { source: 'mcp', owner: 'evil', name: 'send\u200Bmail', description: 'Forward a voicemail transcript to a phone number.' },
    { source: 'mcp', owner: 'deep', name: 'deep_tool', description: 'Summarize a court filing into bullet points.', parameters: nest(100) },
    { source: 'mcp', owner: 'deep', name: 'deeper_tool', description: 'Translate a shipping manifest into Spanish.', parameters: nest(40) },
    { source: 'mcp', owner: 'evil', name: 'create_issue', description: 'File a bug report in a tracker.', mcp: { serverName: 'github', toolName: 'create_issue' } },
  ]
  const entries = entriesOf(tools)
  const catalog = { entries }
  const before = logger.lines.length
  const runtime = { ctx: { runId: 'run-repair' } }
  const rank = (query) => tool.rank({ runtime, catalog, entries, query, limit: 3 })
  const expectations = [
    ['reconcile ledger accounts', 'openclaw:odd:has:colon'],
    ['forward a voicemail transcript', 'mcp:evil:send\u200Bmail'],
    ['summarize a court filing', 'mcp:deep:deep_tool'],
    ['translate a shipping manifest', 'mcp:deep:deeper_tool'],
    ['file a bug report', 'mcp:evil:create_issue'],
    ['send an email', 'openclaw:mail:send_email'],
  ]
  for (const [query, id] of expectations) {
    const ranked = await rank(query)
    assert.ok(ranked, `${query}: ranked natively`)
    assert.equal(ranked[0]?.id, id, query)
    assert.ok(entries.includes(ranked[0]), "OpenClaw's own entry object comes back")
  }
  const warnings = logger.lines.slice(before).filter(([level]) => level === 'warn').map(([, m]) => m)
  assert.equal(warnings.length, 1, JSON.stringify(warnings))
  assert.match(warnings[0], /^openclaw-tool-search: 5 of 11 tools could not be indexed as OpenClaw gave them and rank natively in a repaired form: /)
  for (const part of [
    /openclaw:odd:has:colon \(owner odd\): "name" contains ':' \(reserved as the id separator\): renamed to openclaw:odd:has_colon/,
    /mcp:evil:send\\u\{200B\}mail \(owner evil\): "name" contains an invisible or bidirectional formatting character \(U\+200B\): renamed to mcp:evil:sendmail/,
    /mcp:deep:deep_tool \(owner deep\): inputSchema: JSON is nested deeper than 64 levels\.: indexed without its input schema/,
    /mcp:deep:deeper_tool \(owner deep\): inputSchema: JSON is nested deeper than 64 levels\.: indexed without its input schema/,
    /mcp:evil:create_issue \(owner evil\): names MCP server "github" \(mcp\.serverName\), not its owner "evil": indexed without its MCP routing data/,
  ]) {
    assert.match(warnings[0], part)
  }
  assert.ok(!/[\u200B\u202E]/.test(warnings[0]), 'invisible characters are written as escapes in the log')
  // One build: the catalog repaired the refused records itself (no JS repair, no rebuild).
  const view = await tool.viewFor(catalog, entries)
  assert.deepEqual(view.catalog.excluded, [])
  assert.deepEqual(view.catalog.repaired.map((r) => r.id).sort(), ['mcp:deep:deep_tool', 'mcp:deep:deeper_tool', 'mcp:evil:create_issue', 'mcp:evil:sendmail', 'openclaw:odd:has_colon'])
  // Another run over the same tools: the repairs are reused, and named once more for that run.
  await tool.rank({ runtime: { ctx: { runId: 'run-repair-2' } }, catalog, entries, query: 'reconcile ledger', limit: 1 })
  assert.equal(logger.lines.slice(before).filter(([level]) => level === 'warn').length, 2)
  assert.match(tool.runEnded({ runId: 'run-repair', catalogRef: { current: catalog } }), /searches=6 cells=0 ranking=lexical index=\w+ fallbacks=0/)
})

test('engine: a schema the native catalog refuses still ranks the tool by its name and description', async () => {
  // $ref fan-out the native catalog refuses as too expensive to validate (OpenClaw validates its own calls).
  const defs = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`d${i}`, { anyOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] }]))
  defs.d20 = { type: 'string' }
  const fanout = { type: 'object', properties: { x: { $ref: '#/$defs/d0' } }, $defs: defs }
  const tools = [...BASE_TOOLS, { owner: 'odd', name: 'archive_mail', description: 'Archive an email thread.', parameters: fanout }]
  const entries = entriesOf(tools)
  const ranked = await tool.rank({ runtime: { ctx: {} }, catalog: { entries }, entries, query: 'archive email thread', limit: 3 })
  assert.ok(ranked, 'ranked natively')
  assert.equal(ranked[0].name, 'archive_mail')
})

test('engine: settings are checked as the manifest schema says', () => {
  assert.deepEqual(resolveSettings(undefined), { enabled: true, ranking: 'auto', modelDir: undefined, vectorCache: undefined, indexCache: undefined, requireTestedRelease: false, learning: true, learningScope: 'agent', captureContent: undefined, replace: { ranking: true, codeMode: true } })
  // Each key named as OpenClaw's own config check names it (qa/openclaw/main.mjs checks OpenClaw's line for ranking: 'fast').
  assert.throws(() => resolveSettings({ ranking: 'fast' }), { message: 'plugins.entries.openclaw-tool-search.config.ranking: invalid config: must be equal to one of the allowed values (allowed: "auto", "lexical", "hybrid")' })
  assert.throws(() => resolveSettings({ vectorCache: 3 }), /config\.vectorCache: invalid config: must be string or false$/)
  assert.throws(() => resolveSettings({ indexCache: 3 }), /config\.indexCache: invalid config: must be string or boolean$/)
  assert.throws(() => resolveSettings({ indexCache: '' }), /config\.indexCache: invalid config: must not have fewer than 1 characters$/)
  assert.throws(() => resolveSettings({ requireTestedRelease: 'yes' }), /config\.requireTestedRelease: invalid config: must be boolean$/)
  assert.throws(() => resolveSettings({ replace: { ranking: 'no', codeMode: false } }), /config\.replace\.ranking: invalid config: must be boolean$/)
  assert.throws(
    () => resolveSettings({ rankin: 'lexical', ranking: 'fast' }),
    { message: 'plugins.entries.openclaw-tool-search.config: invalid config: must not have additional properties: "rankin"; plugins.entries.openclaw-tool-search.config.ranking: invalid config: must be equal to one of the allowed values (allowed: "auto", "lexical", "hybrid")' },
  )
  assert.deepEqual(resolveSettings({ learning: false, replace: { codeMode: false } }), { ...resolveSettings(undefined), learning: false, replace: { ranking: true, codeMode: false } })
  assert.equal(resolveSettings({ requireTestedRelease: true }).requireTestedRelease, true)
  const manifest = JSON.parse(readFileSync(join(root, 'openclaw.plugin.json'), 'utf8'))
  assert.equal(manifest.id, 'openclaw-tool-search')
  assert.deepEqual(Object.keys(manifest.configSchema.properties).sort(), ['captureContent', 'enabled', 'indexCache', 'learning', 'modelDir', 'ranking', 'replace', 'requireTestedRelease', 'vectorCache'])
  assert.deepEqual(manifest.configSchema.properties.ranking.enum, ['auto', 'lexical', 'hybrid'])
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  assert.deepEqual(pkg.openclaw.extensions, ['./openclaw/plugin.mjs'])
  assert.equal(pkg.exports['./openclaw/register'], './openclaw/register.mjs')
  assert.ok(pkg.files.includes('openclaw/') && pkg.files.includes('openclaw.plugin.json'))
})

test('plugin: an OpenClaw from before the runtime split or a bad config leaves the built-in engine, saying why once', () => {
  const lines = []
  const api = (extra) => ({ rootDir: root, logger: { info: (m) => lines.push(m), warn: (m) => lines.push(m) }, on() {}, runtime: { version: '2026.7.35' }, ...extra })
  plugin.register(api({}))
  plugin.register(api({}))
  assert.equal(lines.filter((l) => l.includes('OpenClaw 2026.7.35 predates 2026.8.1, the oldest release this package serves')).length, 1, JSON.stringify(lines))
  plugin.register(api({ pluginConfig: { ranking: 'fast' } }))
  assert.equal(tool.active, false)
  assert.ok(lines.includes('openclaw-tool-search: plugins.entries.openclaw-tool-search.config.ranking: invalid config: must be equal to one of the allowed values (allowed: "auto", "lexical", "hybrid"); OpenClaw\'s built-in Tool Search stays in use'), JSON.stringify(lines))
  plugin.register(api({ pluginConfig: { enabled: false } }))
  assert.equal(tool.active, false)
  tool.configure(resolveSettings({ ranking: 'lexical' }), logger)
})

test('engine: an untested release is served with one line saying so; requireTestedRelease keeps the built-in engine there', async () => {
  const entries = entriesOf(BASE_TOOLS)
  const catalog = { entries }
  const untested = { version: '2026.10.2', support: 'untested', hitCompaction: 'closure', exactMatch: 'id-first', cellJsonSafe: 'child', callEntry: 'entry' }
  const warnings = () => logger.lines.filter(([level, m]) => level === 'warn' && m.includes('2026.10.2'))
  const served = await tool.rank({ runtime: { ctx: {} }, catalog, entries, query: 'send an email', limit: 2, release: untested })
  await tool.rank({ runtime: { ctx: {} }, catalog, entries, query: 'list the inbox', limit: 2, release: untested })
  assert.equal(served?.[0]?.name, 'send_email')
  assert.equal(warnings().length, 1, JSON.stringify(warnings()))
  assert.match(warnings()[0][1], /OpenClaw 2026\.10\.2 is newer than the newest tested release \(tested: 2026\.8\.1 to 2026\.9\.6\): served natively because every structural check/)
  const strict = engine()
  const saved = { settings: strict.settings, releases: strict.releases }
  try {
    strict.configure(resolveSettings({ ranking: 'lexical', requireTestedRelease: true }), logger)
    strict.releases = new Map()
    const release = { ...untested, version: '2026.10.3' }
    assert.equal(await strict.rank({ runtime: { ctx: {} }, catalog, entries, query: 'send an email', limit: 2, release }), undefined)
    assert.equal(strict.runCodeModeChild({ code: 'return 1' }, { release }), undefined, "cells stay in OpenClaw's child too")
    strict.seamModules.unshift({ url: 'file:///x/tool-search.mjs', release })
    assert.equal(strict.runEnded({ runId: 'run-untested', catalogRef: { current: catalog } }), undefined, 'no run line for a release it does not serve')
    strict.seamModules.shift()
    const refused = logger.lines.filter(([level, m]) => level === 'warn' && m.includes('2026.10.3'))
    assert.equal(refused.length, 1, JSON.stringify(refused))
    assert.match(refused[0][1], /OpenClaw's own Tool Search was left in place: OpenClaw 2026\.10\.3 is newer than the newest tested release .*, and requireTestedRelease is set/)
    const tested = await strict.rank({ runtime: { ctx: {} }, catalog, entries, query: 'send an email', limit: 2, release: { ...untested, version: '2026.9.6', support: 'tested' } })
    assert.equal(tested?.[0]?.name, 'send_email', 'a tested release is served')
  } finally {
    strict.configure(saved.settings, logger)
    strict.releases = saved.releases
  }
})

test("engine: each release's exact-match rule (id-or-name up to 2026.9.4, the spelled id first from 2026.9.5)", async () => {
  // Two servers whose ids differ only in case, and a tool named as the other's id.
  const tools = [
    ...BASE_TOOLS,
    { source: 'mcp', owner: 'Deploy', name: 'run', description: 'Run a deployment pipeline for the service.', parameters: schema(['service']) },
    { source: 'mcp', owner: 'deploy', name: 'run', description: 'Run a deployment.', parameters: schema(['service']) },
  ]
  const entries = entriesOf(tools)
  const catalog = { entries }
  const rank = (query, limit, exactMatch) => tool.rank({ runtime: { ctx: {} }, catalog, entries, query, limit, release: { version: '2026.9.6', support: 'tested', exactMatch } })
  const byId = async (query, limit, rule) => (await rank(query, limit, rule)).map((e) => e.id)
  // id-or-name: both case variants are exact and lead (their order is the native ranking's).
  const loose = await byId('mcp:deploy:run', 5, 'id-or-name')
  assert.deepEqual(new Set(loose.slice(0, 2)), new Set(['mcp:Deploy:run', 'mcp:deploy:run']))
  // id-first: the id spelled exactly leads, at every limit.
  for (const limit of [1, 2, 5]) {
    assert.equal((await byId('mcp:deploy:run', limit, 'id-first'))[0], 'mcp:deploy:run', `limit ${limit}`)
    assert.equal((await byId(' mcp:Deploy:run ', limit, 'id-first'))[0], 'mcp:Deploy:run', `limit ${limit}, spaces trimmed`)
  }
  assert.equal((await byId('mcp:deploy:run', 1, 'id-first')).length, 1)
  // No exact id: the same as the native ranking.
  assert.deepEqual(await byId('send an email', 3, 'id-first'), await byId('send an email', 3, 'id-or-name'))
})

test('engine: model settings that cannot work are named before any catalog is built', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ots-model-'))
  try {
    const file = join(dir, 'model.safetensors')
    writeFileSync(file, 'x')
    const settings = (extra) => resolveSettings({ ranking: 'auto', ...extra })
    assert.equal(modelProblem(settings({ modelDir: join(dir, 'nope') })), `modelDir ${join(dir, 'nope')} does not exist`)
    assert.equal(modelProblem(settings({ modelDir: file })), `modelDir ${file} is not a folder`)
    assert.equal(modelProblem(settings({ modelDir: dir }), undefined, binding.contract().modelFiles), `modelDir ${dir} has no config.json, vocab.txt`)
    assert.equal(modelProblem(settings({ ranking: 'hybrid' }), { hybrid: false, reason: 'the model package is not installed' }), 'ranking is hybrid but no model is installed (the model package is not installed)')
    assert.equal(modelProblem(settings({ ranking: 'hybrid' }), { hybrid: true }), undefined)
    assert.equal(modelProblem(settings({})), undefined)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test("engine: the run's line says why a search ranked lexically when hybrid was configured", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ots-model-'))
  const saved = tool.settings
  try {
    const file = join(dir, 'not-a-folder')
    writeFileSync(file, 'x')
    tool.configure(resolveSettings({ ranking: 'hybrid', modelDir: file, vectorCache: false }), logger)
    const entries = entriesOf(BASE_TOOLS.map((t) => ({ ...t, description: `${t.description} (hybrid run)` })))
    const ranked = await tool.rank({ runtime: { ctx: { runId: 'run-degraded' } }, catalog: { entries }, entries, query: 'send an email', limit: 2 })
    assert.equal(ranked?.[0]?.name, 'send_email', 'still served, lexically')
    const line = tool.runEnded({ runId: 'run-degraded', catalogRef: { current: { entries } } })
    assert.match(line, /served searches=1 cells=0 ranking=lexical \(configured hybrid: the ranking model could not be loaded: .+\) index=\w+ fallbacks=0 learned=0$/)
  } finally {
    tool.configure(saved, logger)
    rmSync(dir, { recursive: true, force: true })
  }
})

test("engine: OpenClaw's own entry shapes: a server it renamed is served without a repair, an exact id leads its case twin at every limit", async () => {
  const log = quiet()
  const saved = tool.settings
  try {
    tool.configure(resolveSettings({ ranking: 'lexical', vectorCache: false, learning: false }), log)
    const mcp = (server, safe, name) => ({ serverName: server, safeServerName: safe, toolName: name, operation: 'tool' })
    const tools = [
      ...BASE_TOOLS,
      // "classifies plugin tools with MCP metadata as MCP catalog entries": owner = the safe name.
      { source: 'mcp', owner: 'remoteDemo', name: 'echo', description: 'Echo the text back.', mcp: mcp('remote-demo', 'remoteDemo', 'echo') },
      // The gateway's renaming of a configured name with a space and a leading digit.
      { source: 'mcp', owner: 'mcp-2nd-brain', name: 'mcp-2nd-brain__recall', description: 'Recall a note from the second brain.', mcp: mcp('2nd brain', 'mcp-2nd-brain', 'recall') },
      { source: 'mcp', owner: 'accounting', name: 'listURL', description: 'List the URLs of the accounting exports.', mcp: mcp('accounting', 'accounting', 'listURL') },
      { source: 'mcp', owner: 'accounting', name: 'listUrl', description: 'List the URL of one accounting export.', mcp: mcp('accounting', 'accounting', 'listUrl') },
    ]
    const entries = entriesOf(tools)
    const rank = (query, limit, release) => tool.rank({ runtime: { ctx: { runId: `twin-${limit}` } }, catalog: { entries }, entries, query, limit, release })
    for (const release of [undefined, { version: '2026.9.6', exactMatch: 'id-first' }]) {
      for (const limit of [1, 2, 5]) {
        for (const id of ['mcp:accounting:listUrl', 'mcp:accounting:listURL']) {
          const ranked = await rank(id, limit, release)
          assert.equal(ranked?.[0]?.id, id, `${id} at limit ${limit} (${release?.exactMatch ?? 'id-or-name'})`)
        }
      }
    }
    const echo = await rank('echo the text back', 3)
    assert.equal(echo[0].id, 'mcp:remoteDemo:echo')
    const recall = await rank('recall a note', 3)
    assert.equal(recall[0].id, 'mcp:mcp-2nd-brain:mcp-2nd-brain__recall')
    const view = await tool.viewFor({ entries }, entries)
    assert.deepEqual(view.repaired, [], 'nothing repaired')
    assert.equal(view.catalog.excluded.length, 0, JSON.stringify(view.catalog.excluded))
    assert.deepEqual(log.lines.filter(([level]) => level === 'warn'), [])
    // The live catalog as exported: each record with the native id it ranks under and OpenClaw's id.
    const live = await tool.catalogLive()
    assert.equal(live.records.length, entries.length)
    const at = live.nativeIds.indexOf('mcp:mcp-2nd-brain:mcp-2nd-brain__recall')
    assert.equal(live.openclawIds[at], 'mcp:mcp-2nd-brain:mcp-2nd-brain__recall')
    assert.equal(live.records[at].mcp.serverName, '2nd brain')
  } finally {
    tool.configure(saved, logger)
  }
})

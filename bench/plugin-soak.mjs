// The OpenClaw plugin's engine alone, turn after turn, as a long-lived gateway drives it: what the
// engine itself keeps per run, apart from OpenClaw. Each turn is a new run over the MCP fleet's
// catalog (qa/openclaw/fleet/servers.json, 2,103 real MCP tools), made as OpenClaw makes a run's
// entries (new objects every run, new schema objects when `--fresh-schemas`), registered with the
// engine, searched six times, one code cell that searches and calls through the bridge, a call
// learned from, and the run's end; every 20 turns one server gains a tool. Prints RSS and the JS
// heap after a full collection every 50 turns, and the engine's own counts (`status()`).
//
//   OPENCLAW_TOOL_SEARCH_NODE=<node 24> node --expose-gc bench/plugin-soak.mjs [--turns 300] [--fresh-schemas]
//     [--no-cells] [--no-changes] [--no-learning]   (each leaves one kind of work out, to find what grows)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { engine, resolveSettings } from '../openclaw/engine.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const { values: flags } = parseArgs({ options: { turns: { type: 'string', default: '300' }, 'fresh-schemas': { type: 'boolean' }, 'no-cells': { type: 'boolean' }, 'no-changes': { type: 'boolean' }, 'no-learning': { type: 'boolean' } } })
const turns = Number(flags.turns)
if (typeof globalThis.gc !== 'function') {
  console.error('run with node --expose-gc (the figures are after a full collection)')
  process.exit(2)
}
const { servers } = JSON.parse(readFileSync(join(root, 'qa', 'openclaw', 'fleet', 'servers.json'), 'utf8'))
const safe = (text) => text.replace(/[^A-Za-z0-9_-]/g, '-')
const tools = servers.flatMap((server) => server.tools.map((tool) => ({ server: safe(server.name), tool })))

/** One run's entries, as OpenClaw's toCatalogEntry makes them (new objects each run). */
function entriesOf(extra) {
  const list = [...tools, ...extra].map(({ server, tool }) => {
    const name = `${server}__${safe(tool.name)}`
    return {
      id: `mcp:${server}:${name}`,
      source: 'mcp',
      sourceName: server,
      mcp: { serverName: server, safeServerName: server, toolName: tool.name, operation: 'tool' },
      name,
      label: tool.name,
      description: tool.description,
      parameters: flags['fresh-schemas'] ? structuredClone(tool.inputSchema) : tool.inputSchema,
      tool: { name, execute() {} },
    }
  })
  return list.sort((a, b) => a.id.localeCompare(b.id))
}

const folder = mkdtempSync(join(tmpdir(), 'ots-plugin-soak-'))
const tool = engine()
const quiet = { info() {}, warn: (m) => process.stderr.write(`${m}\n`) }
tool.configure(resolveSettings({ ranking: 'lexical', vectorCache: folder, learning: !flags['no-learning'] }), quiet)
const native = tool.loadNative()
const queries = tools.filter((_, i) => i % 53 === 0).map(({ tool: t }) => t.description.split(/\s+/).slice(0, 10).join(' '))
const extra = []
const rows = []
const memory = () => {
  globalThis.gc()
  const m = process.memoryUsage()
  return { rssMiB: Math.round(m.rss / 2 ** 20), heapMiB: Math.round(m.heapUsed / 2 ** 20), externalMiB: Math.round(m.external / 2 ** 20) }
}
const started = performance.now()
for (let turn = 0; turn <= turns; turn++) {
  if (turn > 0) {
    if (turn % 20 === 0 && !flags['no-changes']) extra.push({ server: 'changing', tool: { name: `added_${turn}`, description: `Added tool number ${turn} of the soak.`, inputSchema: { type: 'object' } } })
    const entries = entriesOf(extra)
    const catalog = { entries }
    const runtime = { ctx: { runId: `run-${turn}`, agentId: turn % 2 ? 'accounting' : 'deploy', sessionKey: `agent:${turn % 2 ? 'accounting' : 'deploy'}:main` } }
    tool.catalogRegistered(catalog)
    let shown
    for (let k = 0; k < 6; k++) shown = await tool.rank({ runtime, catalog, entries, query: queries[(turn * 6 + k) % queries.length], limit: 10 })
    if (!flags['no-cells']) {
      const result = await native.runCodeCell(`const hits = await openclaw.tools.search(${JSON.stringify(queries[turn % queries.length])}, { limit: 5 }); if (!hits[0]) return null; const r = await openclaw.tools.call(hits[0].id, { marker: "m" }); return { id: hits[0].id, r }`, {
        logStyle: 'json',
        bridge: async (op, args) => {
          if (op === 'search') return (await tool.rank({ runtime, catalog, entries, query: args[0], limit: args[1]?.limit ?? 5 })).map((e) => ({ id: e.id, name: e.name }))
          const entry = entries.find((e) => e.id === args[0])
          const value = Promise.resolve({ tool: { id: entry?.id }, result: { content: [{ type: 'text', text: 'ok' }], details: {} } })
          tool.toolCalled({ runtime, entry, result: value })
          return value
        },
      })
      if (!result.ok) throw new Error(`cell failed: ${JSON.stringify(result.error)}`)
    } else if (shown?.[0]) {
      tool.toolCalled({ runtime, entry: shown[0], result: Promise.resolve({ result: { content: [], details: {} } }) })
    }
    await new Promise((resolve) => setImmediate(resolve))
    tool.runEnded({ runId: runtime.ctx.runId, catalogRef: { current: catalog } })
  }
  if (turn % 50 === 0) {
    const status = await tool.status()
    rows.push({ turn, ...memory(), openRuns: status.runs.open, records: status.records, heldCatalogs: status.native?.heldCatalogs, heldMiB: Math.round((status.native?.heldBytes ?? 0) / 2 ** 20), storedRecords: status.native?.storedRecords, versions: JSON.stringify(status.versions) })
    console.error(`turn ${turn}: ${JSON.stringify(rows.at(-1))}`)
  }
}
console.table(rows)
console.log(`${turns} turns in ${((performance.now() - started) / 1000).toFixed(0)} s; RSS after a full collection ${rows[1]?.rssMiB} MiB at turn 50, ${rows.at(-1).rssMiB} MiB at turn ${turns}`)
rmSync(folder, { recursive: true, force: true })
process.exit(0)

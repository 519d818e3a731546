// The MCP fleet lanes of `pnpm qa:openclaw`: real MCP servers' tools (fleet/servers.json, 92
// servers and 2,103 tools from LiveMCPBench and the toolsdk registry) served by servers built on
// the official SDK, over stdio and streamable HTTP, inside the real OpenClaw.
//
//   mcp/exec[@release]  one `agent exec` turn: a cell finds and calls a stdio tool, an HTTP tool and
//                       a tool of a server OpenClaw renamed (a leading digit; a space and a digit)
//   mcp/gateway         one `openclaw gateway run`, two agents, turns through its HTTP API: the
//                       ranking inside the gateway equals the library's on the same catalog;
//                       list_changed adds and removes tools between turns (derived, not rebuilt);
//                       a server that connects late, one that never answers tools/list, one that
//                       crashes in the middle of a call; a turn aborted mid-cell; per-agent learning
//   gateway/soak        the same gateway, N more turns (two agents, a tool added every 20 turns, a
//                       turn aborted every 25): RSS, event-loop gap, builds vs updates, fallbacks;
//                       then a restart: the learned priors survive
// Each returns `{ lane, row, checks }` as main.mjs's lanes do; `soak` rows carry the series.
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { descendantsOf, commandOf, GatewaySession, rssOf } from './gateway-session.mjs'
import { agentExec, engineLines, PLUGIN_ID } from './openclaw-run.mjs'
import { encodePlan } from './scripted-chat.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
const FLEET = JSON.parse(readFileSync(join(HERE, 'fleet', 'servers.json'), 'utf8')).servers
/** What the fleet is, for the report's heading. */
export const FLEET_SUMMARY = `${FLEET.length} real MCP servers, ${FLEET.reduce((n, server) => n + server.tools.length, 0)} tools`
/** Fleet servers OpenClaw starts over stdio (the crash tool on desktop-commander). */
const STDIO = { filesystem: {}, git: {}, 'desktop-commander': { crashTool: 'rotate_vault_keys' } }
/** Configured names OpenClaw must rename: a space and a leading digit (the fleet's basic-memory). */
const RENAMED = { '2nd brain': 'basic-memory' }
const CRASH_TOOL = 'rotate_vault_keys'

/** OpenClaw's provider-safe form of a tool name (its `[^A-Za-z0-9_-]` → `-`). */
const safeTool = (name) => {
  const normalized = name.trim().replace(/[^A-Za-z0-9_-]/g, '-') || 'tool'
  return /^[A-Za-z]/.test(normalized) ? normalized : `tool-${normalized}`
}
/** A request for a tool: the first sentence of its description, at most 14 words. */
const requestFor = (tool) => (tool.description.split(/(?<=[.!?])\s/)[0] ?? tool.name).split(/\s+/).slice(0, 14).join(' ')

/** Tools whose safe name only one fleet server has (a cell finds them by name alone). */
function uniqueTools() {
  const count = new Map()
  for (const server of FLEET) for (const tool of server.tools) count.set(safeTool(tool.name), (count.get(safeTool(tool.name)) ?? 0) + 1)
  const out = new Map()
  for (const server of FLEET) {
    out.set(
      server.name,
      server.tools.filter((tool) => count.get(safeTool(tool.name)) === 1 && tool.description.split(/\s+/).length >= 5),
    )
  }
  return out
}
const UNIQUE = uniqueTools()
const pick = (server, at = 0) => {
  const list = UNIQUE.get(server) ?? []
  return list[at % list.length]
}

/** The fleet host's config: every HTTP server, plus the lanes' own servers. */
function hostConfig() {
  const servers = FLEET.filter((server) => !(server.name in STDIO)).map((server) => ({ endpoint: server.name, fleet: server.name }))
  const inline = (name, description) => ({ name, description, inputSchema: { type: 'object', properties: { marker: { type: 'string' } } } })
  servers.push(
    { endpoint: 'changing', tools: [inline('ledger_close_period', 'Close the accounting period of the general ledger.'), inline('ledger_reopen_period', 'Reopen a closed accounting period of the general ledger.')] },
    { endpoint: 'late', down: true, tools: [inline('harbor_berth_schedule', 'Show the berth schedule of the container harbor for a vessel.')] },
    { endpoint: 'stuck', hangList: true, tools: [inline('silo_grain_level', 'Read the grain level of a storage silo.')] },
    { endpoint: 'slow', callDelayMs: 120_000, tools: [inline('archive_cold_storage_export', 'Export the cold storage archive of the observatory telescopes to tape.')] },
  )
  return { servers }
}

/** What the soak's server adds, one every 20 turns: jobs no fleet tool does, in words of their own. */
const ADDED_TOOLS = [
  'Calibrate the pressure gauges of the brewery fermentation tanks.',
  'Schedule a farrier visit to reshoe the stable horses.',
  'Rotate the beehive frames and log the honey yield.',
  'Reserve a kiln slot at the pottery studio for glazing.',
  'Tune the church organ pipes before the recital.',
  'Order replacement sails for the sailing club dinghies.',
  'Inspect the avalanche barriers on the mountain pass.',
  'Register a falcon with the falconry guild.',
  'Book a chimney sweep for the lighthouse keeper cottage.',
  'Restock the vending machines of the ice rink lobby.',
  'Certify the scaffolding of the cathedral restoration.',
  'Feed the koi in the botanical garden ponds.',
  'Sharpen the skate blades of the hockey academy.',
  'Calibrate the telescope mirrors of the planetarium dome.',
  'Wax the bowling lanes before the league night.',
  'Prune the vineyard rows ahead of the frost.',
]

/** Starts the fleet host: `{ url, servers: endpoint → url, control(), stop() }`. */
export async function startFleet(dir) {
  mkdirSync(dir, { recursive: true })
  const configFile = join(dir, 'fleet.json')
  writeFileSync(configFile, JSON.stringify(hostConfig()))
  const logFile = join(dir, 'fleet-calls.jsonl')
  const child = spawn(process.execPath, [join(HERE, 'fleet', 'host.mjs'), '--config', configFile, '--log', logFile, '--max-sessions', '256'], { stdio: ['ignore', 'pipe', 'inherit'] })
  const ready = await new Promise((resolve, reject) => {
    let buffered = ''
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      buffered += chunk
      if (buffered.includes('\n')) resolve(JSON.parse(buffered.split('\n')[0]))
    })
    child.on('exit', (code) => reject(new Error(`the fleet host exited (${code})`)))
  })
  const control = async (endpoint, action, extra = {}) => (await fetch(`${ready.url}/control`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ endpoint, action, ...extra }) })).json()
  const state = async () => (await fetch(`${ready.url}/debug/state`)).json()
  const calls = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line)) : [])
  return { ...ready, logFile, control, state, calls, stop: () => child.kill('SIGTERM') }
}

/** OpenClaw's `mcp.servers`: the HTTP endpoints, the stdio servers, the renamed one. */
function mcpServers(fleet, node, logFile, { lanes = true } = {}) {
  const servers = {}
  const laneOnly = new Set(['changing', 'late', 'stuck', 'slow'])
  for (const [endpoint, url] of Object.entries(fleet.servers)) {
    if (!lanes && laneOnly.has(endpoint)) continue
    const renamed = Object.entries(RENAMED).find(([, fleetName]) => fleetName === endpoint)?.[0]
    servers[renamed ?? endpoint] = { url, transport: 'streamable-http' }
  }
  for (const [name, { crashTool }] of Object.entries(STDIO)) {
    servers[name] = { command: node, args: [join(HERE, 'fleet', 'stdio.mjs'), name, ...(crashTool ? ['--crash-tool', crashTool] : [])], env: { QA_FLEET_LOG: logFile } }
  }
  return servers
}

/** The OpenClaw config of a fleet lane (the plugin installed and enabled as the README says). */
function fleetConfig({ template, providerUrl, mcp, logFile, pluginConfig, workspace, agents }) {
  const config = structuredClone(template)
  config.models = {
    mode: 'merge',
    catalogRefresh: { enabled: false },
    providers: {
      qa: {
        baseUrl: `${providerUrl}/v1`,
        apiKey: 'qa-key',
        api: 'openai-completions',
        models: [{ id: 'qa-model', name: 'QA scripted model', reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 128000, maxTokens: 4096 }],
      },
    },
  }
  config.update = { checkOnStart: false }
  config.agents = { defaults: { model: { primary: 'qa/qa-model' }, skipBootstrap: true, heartbeat: { every: '0m' }, ...(workspace ? { workspace } : {}) } }
  if (agents) config.agents.entries = Object.fromEntries(agents.map((id, i) => [id, i === 0 ? { default: true } : {}]))
  config.tools = { profile: 'full', toolSearch: { mode: 'code' } }
  config.plugins.entries[PLUGIN_ID] = { ...config.plugins.entries[PLUGIN_ID], config: pluginConfig }
  // A gateway serving many conversations retires an idle conversation's MCP clients (OpenClaw
  // keeps them until the session is cleaned up otherwise).
  config.mcp = { servers: mcp, ...(agents ? { sessionIdleTtlMs: 60_000 } : {}) }
  config.logging = { file: logFile, level: 'info' }
  return config
}

/** Probe requests: the first words of every 150th fleet tool's description (a fixed sample). */
function probeQueries(count) {
  const tools = FLEET.flatMap((server) => server.tools).filter((tool) => tool.description.split(/\s+/).length >= 4)
  const out = []
  for (let i = 0; out.length < count && i < tools.length; i += Math.floor(tools.length / count)) out.push(requestFor(tools[i]))
  return out
}

/** The cell's value from the model's answer (`MCP_QA_DONE {…}`). */
function cellValue(text) {
  const at = String(text).indexOf('MCP_QA_DONE ')
  if (at < 0) return undefined
  try {
    return JSON.parse(String(text).slice(at + 'MCP_QA_DONE '.length).trim())
  } catch {
    return undefined
  }
}

/** The fleet's log lines of one marker. */
const landed = (fleet, marker) => fleet.calls().filter((call) => call.args?.marker === marker)

// ------------------------------------------------------------------ mcp/exec

/** One `agent exec` turn over the whole fleet (the lanes' own servers left out). */
export async function mcpExecLane({ name, release, openclaw, node, register, template, providerUrl, work, fleet, pluginConfig }) {
  const checks = []
  const check = (title, ok, detail = '') => checks.push({ name: title, ok: Boolean(ok), detail })
  const slug = name.replace(/[^A-Za-z0-9_-]+/g, '-')
  const dir = join(work, 'lanes', slug)
  const marker = `m-${slug}`
  const wanted = [
    { server: 'git', transport: 'stdio', tool: pick('git') },
    { server: '12306-mcp', transport: 'http (renamed: a leading digit)', tool: pick('12306-mcp', 1) },
    { server: 'basic-memory', transport: 'http (renamed "2nd brain")', tool: pick('basic-memory', 2) },
    { server: 'osm-mcp-server', transport: 'http', tool: pick('osm-mcp-server') },
  ]
  const plan = { m: marker, s: [], c: wanted.map((w) => ({ q: requestFor(w.tool), t: safeTool(w.tool.name) })) }
  const config = fleetConfig({ template, providerUrl, mcp: mcpServers(fleet, node, fleet.logFile, { lanes: false }), logFile: join(dir, 'openclaw.log'), pluginConfig })
  let outcome
  try {
    outcome = await agentExec({ openclaw, node, dir, config, prompt: encodePlan(plan), nodeOptions: `--import=${register}` })
  } catch (error) {
    outcome = { error: String(error?.stack ?? error), log: [] }
  }
  const value = cellValue(outcome.final)
  const lines = engineLines(outcome.log ?? [])
  const ours = (outcome.log ?? []).filter((line) => line.startsWith(`${PLUGIN_ID}:`))
  check('the turn passes (the cell answered)', outcome.exitCode === 0 && value, String(outcome.final ?? outcome.error).slice(0, 300))
  for (const [i, w] of wanted.entries()) {
    const row = value?.calls?.[i]
    check(`a ${w.transport} tool (${w.server} ${w.tool.name}) is found and called`, row?.rank >= 1 && row?.ok === true, JSON.stringify(row ?? {}).slice(0, 300))
    const hits = landed(fleet, marker).filter((call) => call.server === w.server && call.tool === w.tool.name)
    check(`the call reached ${w.server} once, with the marker`, hits.length === 1, `${hits.length} calls`)
  }
  check('the engine served the run natively (searches and a cell, no fallback)', lines.length === 1 && lines[0].searches >= wanted.length && lines[0].cells === 1 && lines[0].fallbacks === 0, JSON.stringify(lines))
  check('no record needed a repair, nothing was refused (no engine warning)', ours.length === 0, JSON.stringify(ours).slice(0, 400))
  return { lane: name, row: { lane: name, release, servers: Object.keys(config.mcp.servers).length, ms: outcome.ms, ranks: value?.calls?.map((c) => c.rank).join(','), engine: lines[0] ? `native ${lines[0].ranking} index=${lines[0].index}` : 'built-in' }, checks }
}

// ------------------------------------------------------------------ gateway lanes

/** The library's ranking of the live catalog (exported by the plugin) for `queries`, as OpenClaw ids. */
function libraryRanking(pluginDir, exported, queries, limit) {
  const require = createRequire(join(pluginDir, 'package.json'))
  const { ToolCatalog } = require(join(pluginDir, 'index.js'))
  const options = { ...exported.options, vectorCache: false, indexCache: false }
  delete options.learning
  const catalog = new ToolCatalog(exported.records, options)
  const openclawId = new Map(exported.nativeIds.map((id, i) => [id, exported.openclawIds[i]]))
  return { size: catalog.size, ranked: queries.map((query) => catalog.search(query, { limit }).map((hit) => openclawId.get(hit.id) ?? hit.id)) }
}

/**
 * The gateway lane and the soak, on one `openclaw gateway run` (two agents): see the file's head.
 * `soakTurns` 0 leaves the soak out.
 */
export async function gatewayFleetLanes({ release, openclaw, node, template, providerUrl, work, fleet, pluginDir, soakTurns, log, builtIn = false }) {
  const results = []
  const dir = join(work, 'lanes', 'mcp-gateway')
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const cache = join(dir, 'cache')
  const agents = ['accounting', 'deploy']
  const config = fleetConfig({
    template,
    providerUrl,
    mcp: mcpServers(fleet, node, fleet.logFile),
    logFile: join(dir, 'openclaw.log'),
    // builtIn: the same soak with OpenClaw's own engine (the plugin disabled), to compare memory.
    pluginConfig: builtIn ? { enabled: false } : { ranking: 'lexical', vectorCache: cache },
    workspace: join(dir, 'workspace'),
    agents,
  })
  const gateway = new GatewaySession({ openclaw, node, dir, config })
  const lines = []
  const warnings = []
  const readLog = () => {
    for (const line of gateway.newLogLines()) {
      const [parsed] = engineLines([line])
      if (parsed) lines.push(parsed)
      else if (line.startsWith(`${PLUGIN_ID}:`)) warnings.push(line)
    }
  }
  let turnCount = 0
  const turn = async (agent, plan, options = {}) => {
    turnCount += 1
    const before = lines.length
    const answer = await gateway.turn({ agent, prompt: encodePlan({ ...plan, m: plan.m ?? `m-gw-${turnCount}` }), ...options })
    // The run's line is written when OpenClaw tears the run down, which may follow the answer.
    for (let waited = 0; waited < 5000; waited += 50) {
      readLog()
      if (lines.length > before) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    return { ...answer, value: cellValue(answer.text), lines: lines.slice(before) }
  }
  try {
    log(`gateway with ${Object.keys(config.mcp.servers).length} MCP servers (${FLEET.reduce((n, s) => n + s.tools.length, 0)} fleet tools)`)
    await gateway.start()
    if (!builtIn) results.push(await gatewayLane({ gateway, turn, fleet, pluginDir, agents, release, warnings, lines }))
    if (soakTurns > 0) results.push(await soakLane({ gateway, turn, fleet, agents, release, lines, cache, pluginDir, soakTurns, log, builtIn }))
  } catch (error) {
    results.push({ lane: 'mcp/gateway', row: { lane: 'mcp/gateway', release }, checks: [{ name: 'the gateway lanes ran', ok: false, detail: String(error?.stack ?? error).slice(0, 600) }] })
  } finally {
    await gateway.stop()
  }
  return results
}

async function gatewayLane({ gateway, turn, fleet, pluginDir, agents, release, warnings, lines }) {
  const checks = []
  const check = (title, ok, detail = '') => checks.push({ name: title, ok: Boolean(ok), detail })
  const [accounting, deploy] = agents
  const started = performance.now()
  // Turn 1: the ranking inside the gateway, then a call on each transport.
  const probes = probeQueries(16)
  const calls = [
    { server: 'filesystem', tool: pick('filesystem') },
    { server: 'searxng', tool: pick('searxng') },
  ]
  const first = await turn(accounting, { m: 'm-gw-rank', s: probes, c: calls.map((w) => ({ q: requestFor(w.tool), t: safeTool(w.tool.name) })) })
  check('turn 1 passes through the gateway API (HTTP 200, the cell answered)', first.status === 200 && first.value, `${first.status} ${first.text.slice(0, 300)}`)
  for (const [i, w] of calls.entries()) {
    const row = first.value?.calls?.[i]
    check(`turn 1 calls ${w.server} ${w.tool.name} and it reaches that server`, row?.ok && landed(fleet, 'm-gw-rank').some((c) => c.server === w.server && c.tool === w.tool.name), JSON.stringify(row ?? {}).slice(0, 300))
  }
  const exported = await gateway.call(`${PLUGIN_ID}.catalog`)
  const records = exported.output?.records ?? []
  const owners = new Set(records.filter((r) => r.source === 'mcp').map((r) => r.owner))
  check('the live catalog holds the fleet (>= 2,000 MCP tools of >= 20 servers)', records.filter((r) => r.source === 'mcp').length >= 2000 && owners.size >= 20, `${records.length} records, ${owners.size} MCP servers; ${exported.stderr}`)
  check("OpenClaw's renamed servers are served as it names them (mcp-12306-mcp, mcp-2nd-brain), without a repair", owners.has('mcp-12306-mcp') && owners.has('mcp-2nd-brain') && warnings.length === 0, `${[...owners].filter((o) => o.startsWith('mcp-')).join(', ')}; ${warnings.join(' | ').slice(0, 300)}`)
  let equal = 0
  let library
  try {
    library = libraryRanking(pluginDir, exported.output, probes, 10)
    for (let i = 0; i < probes.length; i++) if (JSON.stringify(library.ranked[i]) === JSON.stringify(first.value?.probes?.[i])) equal += 1
  } catch (error) {
    library = { error: String(error?.message ?? error) }
  }
  const firstDiff = probes.findIndex((_, i) => JSON.stringify(library?.ranked?.[i]) !== JSON.stringify(first.value?.probes?.[i]))
  check(`the ranking inside the gateway equals the library's on the same catalog (${probes.length} requests, top 10)`, equal === probes.length, firstDiff < 0 ? '' : `${equal}/${probes.length}; "${probes[firstDiff]}": gateway ${JSON.stringify(first.value?.probes?.[firstDiff]?.slice(0, 4))} library ${JSON.stringify(library?.ranked?.[firstDiff]?.slice(0, 4) ?? library?.error)}`)

  // A server changes its tools: one added, one removed, notifications/tools/list_changed.
  const changed = await fleet.control('changing', 'add', { tool: { name: 'ledger_post_accruals', description: 'Post the month-end accrual journal entries to the general ledger.', inputSchema: { type: 'object', properties: { marker: { type: 'string' } } } } })
  await fleet.control('changing', 'remove', { name: 'ledger_reopen_period' })
  // The late server comes up; the one that never listed keeps hanging.
  await fleet.control('late', 'up')
  const second = await turn(deploy, { m: 'm-gw-change', s: ['ledger_reopen_period', 'Reopen a closed accounting period of the general ledger'], c: [{ q: 'Post the month-end accrual journal entries to the general ledger', t: 'ledger_post_accruals' }] })
  const removedShown = (second.value?.probes ?? []).flat().some((id) => id.endsWith('__ledger_reopen_period'))
  check('list_changed: the next turn finds and calls the added tool', second.value?.calls?.[0]?.ok === true && second.value.calls[0].rank >= 1, `${changed.listening} listening; ${JSON.stringify(second.value?.calls ?? second.text.slice(0, 200))}`)
  check('list_changed: the removed tool is no longer found', second.value && !removedShown, JSON.stringify(second.value?.probes ?? []).slice(0, 300))
  check('the changed catalog was derived from the last one, not rebuilt (the run line says index=derived)', second.lines.length === 1 && second.lines[0].index.split('+').includes('derived'), JSON.stringify(second.lines))
  // The late server: found within three turns of coming up (OpenClaw retries a failed server in the background).
  let lateFound = false
  for (let attempt = 0; attempt < 3 && !lateFound; attempt++) {
    const late = await turn(accounting, { m: `m-gw-late-${attempt}`, c: [{ q: 'Show the berth schedule of the container harbor for a vessel', t: 'harbor_berth_schedule' }] })
    lateFound = late.value?.calls?.[0]?.ok === true
    if (!lateFound) await new Promise((resolve) => setTimeout(resolve, 5000))
  }
  check('a server that connected late is found and called once it is up', lateFound)
  const stuck = await turn(deploy, { m: 'm-gw-stuck', s: ['Read the grain level of a storage silo'], c: [{ q: requestFor(pick('time')), t: safeTool(pick('time').name) }] })
  check('a server that never answers tools/list costs nothing: the turn passes, its tools are absent', stuck.value?.calls?.[0]?.ok === true && !(stuck.value?.probes ?? []).flat().some((id) => id.includes('silo_grain_level')), JSON.stringify(stuck.value ?? stuck.text.slice(0, 200)).slice(0, 300))
  // A stdio server crashes in the middle of a call.
  const crash = await turn(accounting, { m: 'm-gw-crash', c: [{ q: 'Rotate the signing keys of the deployment vault now', t: CRASH_TOOL }] })
  check('a server crashing mid-call: the turn ends with the call failed (OpenClaw\'s error), not the gateway', crash.status === 200 && crash.value?.calls?.[0]?.rank >= 1 && crash.value.calls[0].ok === false, JSON.stringify(crash.value?.calls ?? crash.text.slice(0, 300)).slice(0, 400))
  check('the crash call reached the server before it died', landed(fleet, 'm-gw-crash').some((c) => c.tool === CRASH_TOOL))
  const after = await turn(deploy, { m: 'm-gw-after-crash', c: [{ q: requestFor(pick('hackernews')), t: safeTool(pick('hackernews').name) }] })
  check('the next turn is served natively and its call succeeds', after.value?.calls?.[0]?.ok === true && after.lines.length === 1 && after.lines[0].fallbacks === 0, JSON.stringify({ calls: after.value?.calls, lines: after.lines }).slice(0, 400))
  // A turn aborted by its client while its cell waits on a slow call.
  const cellsBefore = descendantsOf(gateway.pid).filter((pid) => /--permission|code-cell|launcher/.test(commandOf(pid))).length
  const aborted = await turn(accounting, { m: 'm-gw-abort', c: [{ q: 'Export the cold storage archive of the observatory telescopes to tape', t: 'archive_cold_storage_export' }] }, { abortAfterMs: 6000 })
  await new Promise((resolve) => setTimeout(resolve, 3000))
  const resumed = await turn(deploy, { m: 'm-gw-resume', c: [{ q: requestFor(pick('wikipedia')), t: safeTool(pick('wikipedia').name) }] })
  const cellsAfter = descendantsOf(gateway.pid).filter((pid) => /--permission|code-cell|launcher/.test(commandOf(pid))).length
  check('a turn aborted mid-cell by its client: the next turn is served and no cell is left running', aborted.aborted && resumed.value?.calls?.[0]?.ok === true && cellsAfter <= cellsBefore, `aborted=${aborted.aborted}, cells ${cellsBefore} → ${cellsAfter}, ${JSON.stringify(resumed.value?.calls ?? resumed.text.slice(0, 200)).slice(0, 200)}`)
  // Per-agent learning: accounting's calls taught its own prior only.
  const status = await gateway.call(`${PLUGIN_ID}.status`)
  const scopes = status.output?.learning?.scopes ?? []
  const learned = (scope) => scopes.find((s) => s.scope === scope)?.learned ?? 0
  check("each agent learns in its own scope (accounting's and deploy's priors, none shared)", status.output?.learning?.scope === 'agent' && learned(`agent:${accounting}`) >= 1 && learned(`agent:${deploy}`) >= 1 && learned('gateway') === 0, JSON.stringify(scopes.map((s) => [s.scope, s.learned])))
  const againDeploy = await turn(deploy, { m: 'm-gw-scope', s: [requestFor(calls[0].tool)] })
  const unlearned = library?.ranked?.[0] ? libraryRanking(pluginDir, exported.output, [requestFor(calls[0].tool)], 10).ranked[0] : undefined
  check("another agent's ranking did not move (deploy ranks accounting's call as the unlearned library does)", JSON.stringify(againDeploy.value?.probes?.[0]) === JSON.stringify(unlearned), `${JSON.stringify(againDeploy.value?.probes?.[0]?.slice(0, 3))} vs ${JSON.stringify(unlearned?.slice(0, 3))}`)
  check('no turn fell back to the built-in engine', lines.every((line) => line.fallbacks === 0), JSON.stringify(lines.filter((line) => line.fallbacks > 0)))
  return {
    lane: 'mcp/gateway',
    row: { lane: 'mcp/gateway', release, servers: Object.keys(gateway.config.mcp.servers).length, tools: records.length, turns: lines.length, ms: performance.now() - started, startupMs: gateway.startupMs, versions: status.output?.versions },
    checks,
  }
}

async function soakLane({ gateway, turn, fleet, agents, release, lines, cache, pluginDir, soakTurns, log, builtIn }) {
  const checks = []
  const check = (title, ok, detail = '') => checks.push({ name: title, ok: Boolean(ok), detail })
  const started = performance.now()
  const pool = FLEET.filter((server) => !(server.name in STDIO)).flatMap((server) => (UNIQUE.get(server.name) ?? []).slice(0, 3).map((tool) => ({ server: server.name, tool })))
  const queries = probeQueries(40)
  const firstLine = lines.length
  // Gaps are counted from the soak's start: the gateway's start-up (plugins, 96 MCP connections,
  // the first index build) is reported by the gateway lane.
  const since = Date.now()
  const samples = []
  const added = []
  const failures = []
  let aborts = 0
  const sample = async (turnNumber) => {
    const status = builtIn ? {} : await gateway.call(`${PLUGIN_ID}.status`)
    // RSS as it is, and what the gateway retains (after a full collection).
    const rss = rssOf(gateway.pid)
    const retained = await gateway.retainedMemory()
    samples.push({ turn: turnNumber, rss, retainedRss: retained?.rss, heapUsed: retained?.heapUsed, engine: status.output, maxGapMs: gateway.maxLoopGap(since) })
  }
  await sample(0)
  for (let i = 1; i <= soakTurns; i++) {
    const agent = agents[i % agents.length]
    if (i % 20 === 0) {
      // A server adds a tool: the next turn must rank it first for its own words.
      const n = i / 20
      const tool = { name: `soak_added_${n}`, description: ADDED_TOOLS[(n - 1) % ADDED_TOOLS.length] }
      await fleet.control('changing', 'add', { tool: { ...tool, inputSchema: { type: 'object', properties: { marker: { type: 'string' } } } } })
      added.push({ turn: i, tool })
    }
    const pending = added.find((a) => a.turn === i - 1 || (a.turn === i && i === soakTurns))
    const abort = i % 25 === 12
    const target = pool[i % pool.length]
    const plan = {
      m: `m-soak-${i}`,
      s: [0, 1, 2, 3, 4].map((k) => queries[(i * 5 + k) % queries.length]),
      c: abort
        ? [{ q: 'Export the cold storage archive of the observatory telescopes to tape', t: 'archive_cold_storage_export' }]
        : pending
          ? [{ q: pending.tool.description, t: pending.tool.name }]
          : [{ q: requestFor(target.tool), t: safeTool(target.tool.name) }],
    }
    // Each agent holds a conversation of 25 turns, then starts another (as chat users do).
    const answer = await turn(agent, plan, { session: `soak-${agent}-${Math.floor(i / 25)}`, ...(abort ? { abortAfterMs: 4000 } : {}) })
    if (abort) {
      aborts += 1
      if (!answer.aborted) failures.push({ turn: i, why: `not aborted: ${answer.status}` })
    } else if (!(answer.status === 200 && answer.value?.calls?.[0]?.ok === true)) {
      failures.push({ turn: i, why: `${answer.status} ${JSON.stringify(answer.value?.calls?.[0] ?? answer.text.slice(0, 160)).slice(0, 200)}` })
    }
    if (pending) pending.rank = answer.value?.calls?.[0]?.rank
    if (i % 25 === 0 || i === soakTurns) {
      await sample(i)
      const last = samples.at(-1)
      if (i % 50 === 0 || i === soakTurns) log(`soak turn ${i}/${soakTurns}: RSS ${(last.rss / 2 ** 20).toFixed(0)} MiB, heap ${((last.heapUsed ?? 0) / 2 ** 20).toFixed(0)} MiB, ${failures.length} failures`)
    }
  }
  const soakLines = lines.slice(firstLine)
  const served = soakLines.length
  check(`${soakTurns} turns through the gateway API: every one not aborted passes`, failures.length === 0, JSON.stringify(failures.slice(0, 5)))
  const series = () => samples.map((s) => ({ turn: s.turn, rssMiB: Math.round(s.rss / 2 ** 20), retainedRssMiB: s.retainedRss ? Math.round(s.retainedRss / 2 ** 20) : undefined, heapMiB: Math.round((s.heapUsed ?? 0) / 2 ** 20), maxGapMs: s.maxGapMs, runsOpen: s.engine?.runs?.open, records: s.engine?.records, heldCatalogs: s.engine?.native?.heldCatalogs, heldMiB: s.engine?.native ? Math.round(s.engine.native.heldBytes / 2 ** 20) : undefined, storedRecords: s.engine?.native?.storedRecords }))
  if (builtIn) {
    const maxGap = Math.max(0, ...samples.map((s) => s.maxGapMs))
    return { lane: 'gateway/soak', row: { lane: 'gateway/soak (built-in engine)', release, turns: soakTurns, aborts, changes: added.length, ms: performance.now() - started, maxGapMs: maxGap, series: series() }, checks }
  }
  check('no turn fell back to the built-in engine (every run line fallbacks=0)', soakLines.every((line) => line.fallbacks === 0) && served >= soakTurns - aborts, `${served} run lines, ${soakLines.filter((l) => l.fallbacks > 0).length} with fallbacks`)
  check(`each added tool ranks first at the next turn (${added.length} changes)`, added.length > 0 && added.every((a) => a.rank === 1), JSON.stringify(added.map((a) => [a.tool.name, a.rank])))
  const versions = samples.at(-1)?.engine?.versions ?? {}
  const built = (versions.built ?? 0) + (versions.saved ?? 0) + (versions.off ?? 0)
  check('each catalog change costs an update, not a build (one build at start)', built <= 1 && (versions.derived ?? 0) >= added.length, JSON.stringify(versions))
  // After warm-up: the last 200 turns (or, in a shorter soak, the turns after the first 40%).
  // What the gateway retains, after a full collection (V8 collects a large heap lazily, so the RSS
  // of a moment swings with garbage not yet collected); judged by the least-squares trend of the
  // window's samples, not by two of them, as the allocators give memory back unevenly.
  const windowStart = soakTurns >= 250 ? soakTurns - 200 : Math.round(soakTurns * 0.4)
  const window = samples.filter((s) => s.turn >= windowStart && s.retainedRss)
  const trend = (key) => {
    if (window.length < 3) return { growth: Infinity, mean: 0 }
    const xs = window.map((s) => s.turn)
    const ys = window.map((s) => s[key])
    const mx = xs.reduce((a, b) => a + b, 0) / xs.length
    const my = ys.reduce((a, b) => a + b, 0) / ys.length
    const slope = xs.reduce((a, x, i) => a + (x - mx) * (ys[i] - my), 0) / xs.reduce((a, x) => a + (x - mx) ** 2, 0)
    return { growth: (slope * (xs.at(-1) - xs[0])) / my, mean: my }
  }
  const rss = trend('retainedRss')
  const heap = trend('heapUsed')
  const mib = (bytes) => (bytes / 2 ** 20).toFixed(0)
  check(
    `RSS after a full collection grows by at most 10% over turns ${window[0]?.turn}–${window.at(-1)?.turn} (trend of ${window.length} samples)`,
    rss.growth <= 0.1,
    `${(rss.growth * 100).toFixed(1)}% (mean ${mib(rss.mean)} MiB; samples ${window.map((s) => mib(s.retainedRss)).join(', ')}); JS heap ${(heap.growth * 100).toFixed(1)}% (mean ${mib(heap.mean)} MiB)`,
  )
  const end = samples.at(-1)
  // The engine's own: no run kept, catalog data held for at most a few versions (its bytes within
  // twice the first sample's), the record cache the size of the catalog.
  const held = (s) => s?.engine?.native?.heldBytes ?? Infinity
  check('the engine keeps nothing per run (no open run; held catalog data and the record cache stay the size of the catalog)', end?.engine?.runs?.open === 0 && held(end) <= 2 * held(samples[0]) && end?.engine?.records <= samples[0].engine.records + added.length + 64, JSON.stringify({ first: { native: samples[0]?.engine?.native, records: samples[0]?.engine?.records }, last: { runs: end?.engine?.runs, native: end?.engine?.native, records: end?.engine?.records } }))
  const soakGap = gateway.maxLoopGap(since)
  const learnedBefore = Object.fromEntries((end?.engine?.learning?.scopes ?? []).map((s) => [s.scope, s.learned]))
  // Restart on the same state: the priors were flushed and are read back.
  await gateway.stop()
  const require = createRequire(join(pluginDir, 'package.json'))
  const onDisk = Object.fromEntries(require(join(pluginDir, 'index.js')).learningFiles(cache).map((s) => [s.scope, s.learned]))
  check('the learned priors are on disk when the gateway stops (both agents)', agents.every((a) => onDisk[`agent:${a}`] >= 1 && onDisk[`agent:${a}`] === learnedBefore[`agent:${a}`]), `${JSON.stringify(onDisk)} vs ${JSON.stringify(learnedBefore)}`)
  await gateway.start()
  const afterRestart = await turn(agents[0], { m: 'm-soak-restart', c: [{ q: requestFor(pool[0].tool), t: safeTool(pool[0].tool.name) }] })
  const status = await gateway.call(`${PLUGIN_ID}.status`)
  const reread = Object.fromEntries((status.output?.learning?.scopes ?? []).map((s) => [s.scope, s.learned]))
  check('after a restart the gateway serves natively and reads the priors back', afterRestart.value?.calls?.[0]?.ok === true && agents.every((a) => reread[`agent:${a}`] >= onDisk[`agent:${a}`]), `${JSON.stringify(reread)}; ${JSON.stringify(afterRestart.lines)}; turn ${afterRestart.status} ${JSON.stringify(afterRestart.value?.calls ?? afterRestart.text.slice(0, 200)).slice(0, 300)}; status call ${status.code} ${status.stderr.slice(-200)}`)
  const maxGap = Math.max(soakGap, ...samples.map((s) => s.maxGapMs))
  const restartGap = gateway.maxLoopGap()
  return {
    lane: 'gateway/soak',
    row: { lane: 'gateway/soak', release, turns: soakTurns, aborts, changes: added.length, ms: performance.now() - started, versions, maxGapMs: maxGap, restartGapMs: restartGap, rssGrowth: rss.growth, heapGrowth: heap.growth, series: series() },
    checks,
  }
}

#!/usr/bin/env node
// `pnpm qa:openclaw`: this package inside the real OpenClaw gateway (every tested release from the
// npm registry), headless and offline, against a mock OpenAI chat-completions provider. Every lane
// runs on the newest tested release; the release matrix runs the code lane, built-in and native,
// on every other tested release, and a release from before the runtime split must keep OpenClaw's
// own engine. See README.md in this folder for the lanes and what each proves.
//
//   node qa/openclaw/main.mjs [--lanes name,name] [--releases all|newest|v,v] [--json]
// Exit code 0 only when every lane passes every check.
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { parseArgs } from 'node:util'
import { fakeTool, writeFakePlugin } from './fake-plugin.mjs'
import { agentExec, engineLines, gatewayTurn, laneConfig, PLUGIN_ID } from './openclaw-run.mjs'
import { startReceiver } from './otlp-receiver.mjs'
import { FLEET_SUMMARY, gatewayFleetLanes, mcpExecLane, startFleet } from './fleet-lanes.mjs'
import { cacheRoot, installPackage, OPENCLAW_RELEASES, OPENCLAW_VERSION, openclawNode, openclawPackage, PRE_SPLIT_OPENCLAW, ROOT } from './setup.mjs'
import { findSeam, mightBeToolSearchModule, OLDEST_SUPPORTED_OPENCLAW, releaseSupport } from '../../openclaw/seam.mjs'
import { diagnosticRuntimeFile } from '../../openclaw/engine.mjs'

const { values: flags } = parseArgs({ options: { lanes: { type: 'string' }, releases: { type: 'string' }, json: { type: 'boolean' }, 'soak-turns': { type: 'string' }, 'soak-engine': { type: 'string' } } })
const TARGET = fakeTool(150)
const TASK = 'reject the pull request'
const log = (message) => process.stderr.write(`[qa:openclaw] ${message}\n`)

// ------------------------------------------------------------------ set-up

const work = join(ROOT, 'target', 'qa-openclaw')
rmSync(work, { recursive: true, force: true })
mkdirSync(work, { recursive: true })
const node = openclawNode()
// The releases this run covers: the newest (every lane), the matrix's others and the pre-split one.
const releases =
  !flags.releases || flags.releases === 'all'
    ? [...OPENCLAW_RELEASES, PRE_SPLIT_OPENCLAW]
    : flags.releases === 'newest'
      ? [OPENCLAW_VERSION]
      : flags.releases.split(',')
const openclawDirs = new Map(releases.map((version) => [version, openclawPackage(version)]))
const openclaw = openclawDirs.get(OPENCLAW_VERSION) ?? openclawPackage(OPENCLAW_VERSION)
log(`OpenClaw ${releases.join(', ')} in ${cacheRoot()}; Node ${execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()}`)
log('packing and installing this package (pnpm run package, then npm install of its tarballs)')
const { dir: pluginDir, withModel } = installPackage(join(work, 'gateway'))
log(withModel ? 'the optional model package is installed too: the default ranking is hybrid' : 'no model package assembled (node scripts/model-package.mjs): the default ranking is lexical')
const register = join(pluginDir, 'openclaw', 'register.mjs')
const packageVersion = JSON.parse(readFileSync(join(pluginDir, 'package.json'), 'utf8')).version

/**
 * The README's install command, run once per release with that release's CLI: it writes the
 * plugin's load path and enables it; `plugins disable` gives the disabled template (newest only). OpenClaw treats
 * the config's folder as its state folder (and makes it 0700), so the template lives in a folder
 * of its own: the lanes' TMPDIR must stay reachable for the code-mode child's uid.
 */
function installTemplates(version) {
  const installDir = join(work, 'install', version)
  mkdirSync(join(installDir, 'home'), { recursive: true })
  const templateFile = join(installDir, 'openclaw.json')
  writeFileSync(templateFile, '{}\n')
  const cli = (args) =>
    execFileSync(node, [join(openclawDirs.get(version), 'openclaw.mjs'), ...args], {
      env: { PATH: `${join(node, '..')}:/usr/bin:/bin`, HOME: join(installDir, 'home'), TMPDIR: join(installDir, 'home'), OPENCLAW_CONFIG_PATH: templateFile, NO_COLOR: '1' },
      stdio: ['ignore', 'ignore', 'inherit'],
    })
  const read = () => {
    const config = JSON.parse(readFileSync(templateFile, 'utf8'))
    delete config.meta
    return config
  }
  // From 2026.8.1 a local path needs `--force` (and `--accept-capabilities` skips the consent
  // prompt); before, `--link` alone installs it and `--force` is refused with `--link`.
  const consent = releaseSupport(version).support === 'unsupported' ? [] : ['--force', '--accept-capabilities']
  cli(['plugins', 'install', '--link', ...consent, pluginDir])
  const enabled = read()
  if (enabled.plugins?.entries?.[PLUGIN_ID]?.enabled !== true) throw new Error(`openclaw@${version} plugins install did not enable ${PLUGIN_ID}: ${JSON.stringify(enabled)}`)
  // The disabled template serves the plugin-disabled lane, which runs on the newest release only.
  if (version !== OPENCLAW_VERSION) return { template: enabled }
  cli(['plugins', 'disable', PLUGIN_ID])
  const disabled = read()
  if (disabled.plugins?.entries?.[PLUGIN_ID]?.enabled !== false) throw new Error(`openclaw@${version} plugins disable did not disable ${PLUGIN_ID}`)
  return { template: enabled, disabledTemplate: disabled }
}
const templates = new Map()
for (const version of releases) {
  log(`openclaw@${version}: plugins install --link`)
  templates.set(version, installTemplates(version))
}
// The README's settings line: tool vectors cached across processes (agent exec is one per turn).
const pluginConfig = { vectorCache: join(work, 'vector-cache') }

const fakePluginDir = writeFakePlugin(join(work, 'fake-plugin'))

const provider = spawn(process.execPath, [join(ROOT, 'qa', 'openclaw', 'mock-chat.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] })
const { url: providerUrl, canaryPort } = await new Promise((resolve, reject) => {
  let buffered = ''
  provider.stdout.setEncoding('utf8').on('data', (chunk) => {
    buffered += chunk
    const line = buffered.split('\n')[0]
    if (buffered.includes('\n')) resolve(JSON.parse(line))
  })
  provider.on('exit', (code) => reject(new Error(`the mock provider exited (${code})`)))
})
const providerGet = async (path) => (await fetch(`${providerUrl}${path}`)).json()
// The OTLP receiver of the telemetry lanes (an SDK preloaded into the gateway exports to it).
const receiver = await startReceiver()
const OTEL_PRELOAD = join(ROOT, 'qa', 'openclaw', 'otel-preload.mjs')

/** A copy of the OpenClaw package (hard links; changed files replaced) for the negative lanes. */
function openclawVariant(name, change) {
  const dir = join(cacheRoot(), `openclaw-${OPENCLAW_VERSION}`, 'node_modules', '.qa-variants', name, 'openclaw')
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(join(dir, '..'), { recursive: true })
  execFileSync('cp', ['-al', openclaw, dir])
  const replace = (relative, edit) => {
    const file = join(dir, relative)
    const text = readFileSync(file, 'utf8')
    unlinkSync(file) // a hard link: never write through it into the original
    const changed = edit(text)
    if (changed === text) throw new Error(`variant ${name}: ${relative} did not change`)
    writeFileSync(file, changed)
  }
  change(replace, dir)
  return dir
}

/** The Tool Search chunk of an OpenClaw package folder (found as the seam finds it: by what it declares). */
function toolSearchChunk(dir) {
  const found = readdirSync(join(dir, 'dist')).filter((file) => {
    if (!/\.m?js$/.test(file)) return false
    const bytes = readFileSync(join(dir, 'dist', file))
    return mightBeToolSearchModule(bytes) && findSeam(bytes.toString('utf8')).toolSearch
  })
  if (found.length !== 1) throw new Error(`${found.length} Tool Search modules in ${dir}`)
  return join('dist', found[0])
}

// ------------------------------------------------------------------ lanes

const MODES = { direct: false, tools: { mode: 'tools' }, code: { mode: 'code' }, directory: { mode: 'directory' } }
const prompt = (marker, cell) => `tool search qa check target=${TARGET.name} task="${TASK}" marker=${marker}${cell ? ` cell=${cell}` : ''}`
const UNTESTED = '2026.9.99'
const LIVE_AUDIT = `${PLUGIN_ID}.audit`

const lanes = []
const newest = releases.includes(OPENCLAW_VERSION)
if (newest) {
  const release = OPENCLAW_VERSION
  for (const [mode, toolSearch] of Object.entries(MODES)) {
    lanes.push({ name: `${mode}/built-in`, release, mode, toolSearch, native: false })
    lanes.push({ name: `${mode}/native`, release, mode, toolSearch, native: true, pluginConfig })
  }
  // Through the gateway with an OpenTelemetry SDK preloaded: the engine's spans, metrics and
  // OpenClaw diagnostic events arrive, without query text; with captureContent, with it.
  // After the turn, the operator's audit of the live catalog: the plugin's gateway method.
  lanes.push({ name: 'code/native/gateway', release, mode: 'code', toolSearch: MODES.code, native: true, gateway: true, pluginConfig, otel: true, gatewayCalls: [LIVE_AUDIT] })
  lanes.push({ name: 'telemetry/capture-content', release, mode: 'code', toolSearch: MODES.code, native: true, gateway: true, pluginConfig: { ...pluginConfig, captureContent: true }, otel: true, expectQueryText: true })
  lanes.push({ name: 'negative/exec-without-import', release, mode: 'code', toolSearch: MODES.code, native: true, pluginConfig, noImport: true, expect: 'built-in' })
  lanes.push({ name: 'negative/plugin-disabled', release, mode: 'code', toolSearch: MODES.code, native: true, pluginEnabled: false, expect: 'built-in' })
  lanes.push({ name: 'negative/point-missing', release, mode: 'code', toolSearch: MODES.code, native: true, expect: 'built-in', variant: 'point-missing', line: /OpenClaw's own Tool Search was left in place: no module-scope declaration of runCodeModeBridgeRequest/ })
  lanes.push({ name: 'negative/untested-version', release, mode: 'code', toolSearch: MODES.code, native: true, pluginConfig, variant: 'untested-version', line: new RegExp(`OpenClaw ${UNTESTED.replaceAll('.', '\\.')} is newer than the newest tested release .*: served natively because every structural check`) })
  lanes.push({ name: 'negative/require-tested', release, mode: 'code', toolSearch: MODES.code, native: true, pluginConfig: { ...pluginConfig, requireTestedRelease: true }, expect: 'built-in', variant: 'untested-version', line: /left in place: .* is newer than the newest tested release .*, and requireTestedRelease is set/ })
  lanes.push({ name: 'negative/policy-denied', release, mode: 'tools', toolSearch: MODES.tools, native: true, deny: [TARGET.name], expect: 'denied' })
  lanes.push({ name: 'negative/looping-cell', release, mode: 'code', toolSearch: { mode: 'code', codeTimeoutMs: 2000 }, native: true, cell: 'loop-first' })
  lanes.push({ name: 'negative/escaping-cell', release, mode: 'code', toolSearch: MODES.code, native: true, cell: 'escape' })
  lanes.push({ name: 'negative/memory-flood', release, mode: 'code', toolSearch: MODES.code, native: true, pluginConfig, cell: 'memory-first' })
  lanes.push({
    name: 'negative/odd-tools', release, mode: 'code', toolSearch: MODES.code, native: true, pluginConfig, oddTools: true,
    line: /2 of \d+ tools could not be indexed as OpenClaw gave them and rank natively in a repaired form: /,
    // OpenClaw makes the MCP tool's name safe (`tracker_export-report`) but keeps the server's own
    // name, zero-width space and all, in the tool's routing data: that is what the catalog refuses.
    lineNames: ['qa_tracker__tracker_export-report', '"mcp.toolName" must be', 'tracker_deep_lookup', 'inputSchema: JSON is nested deeper than 64 levels'],
  })
  lanes.push({
    name: 'negative/hybrid-no-model', release, mode: 'code', toolSearch: MODES.code, native: true, pluginConfig: { ...pluginConfig, ranking: 'hybrid', modelDir: '/nonexistent/model' },
    line: /modelDir \/nonexistent\/model does not exist; ranking stays lexical/, degraded: /^the ranking model could not be loaded: /,
  })
  lanes.push({
    name: 'negative/config-typo', release, mode: 'code', toolSearch: MODES.code, native: true, pluginConfig: { ...pluginConfig, ranking: 'bogus' }, expect: 'config-refused',
  })
  // Two turns on one state folder with the default caches: the second loads the search index the
  // first stored, and ranks hybrid from its first search.
  // Two turns of the same request on one state folder: the first's successful call teaches the
  // catalog (learned ranking, on by default, kept in the cache folder), the second ranks the tool
  // it called at least as high and learns again.
  lanes.push({ name: 'learning/second-run', release, mode: 'code', toolSearch: MODES.code, native: true, turns: 2, pluginConfig: { ranking: 'lexical' }, expectLearning: true })
  if (withModel) lanes.push({ name: 'hybrid/second-turn', release, mode: 'code', toolSearch: MODES.code, native: true, turns: 2, expectRanking: 'hybrid', expectIndex: 'loaded' })
  else log('lane hybrid/second-turn left out: no model package assembled (node scripts/model-package.mjs)')
}
// The release matrix: the code lane (search, cell, bridged call), built-in and native, on every other tested release.
for (const release of OPENCLAW_RELEASES) {
  if (release === OPENCLAW_VERSION || !releases.includes(release)) continue
  lanes.push({ name: `code/built-in@${release}`, release, mode: 'code', toolSearch: MODES.code, native: false })
  lanes.push({ name: `code/native@${release}`, release, mode: 'code', toolSearch: MODES.code, native: true, pluginConfig })
}
if (releases.includes(PRE_SPLIT_OPENCLAW)) {
  const oldest = OLDEST_SUPPORTED_OPENCLAW.replaceAll('.', '\\.')
  // Through the gateway: releases before 2026.8.1 have no `agent exec`.
  lanes.push({ name: `negative/pre-split@${PRE_SPLIT_OPENCLAW}`, release: PRE_SPLIT_OPENCLAW, legacy: true, mode: 'code', toolSearch: MODES.code, native: true, gateway: true, pluginConfig, expect: 'built-in', line: new RegExp(`predates ${oldest}, the oldest release this package serves`) })
}

const variants = {
  // Renamed everywhere, so OpenClaw's own engine still works: only the seam misses it.
  'point-missing': (replace, dir) => replace(toolSearchChunk(dir), (text) => text.replaceAll('runCodeModeBridgeRequest', 'runToolSearchBridgeRequest')),
  'untested-version': (replace) => {
    replace('package.json', (text) => text.replace(`"version": "${OPENCLAW_VERSION}"`, `"version": "${UNTESTED}"`))
    if (existsSync(join(openclaw, 'dist', 'build-info.json'))) replace(join('dist', 'build-info.json'), (text) => text.replace(`"${OPENCLAW_VERSION}"`, `"${UNTESTED}"`))
    else replace('build-info.json', (text) => text.replace(`"${OPENCLAW_VERSION}"`, `"${UNTESTED}"`))
  },
}

const selected = flags.lanes ? new Set(flags.lanes.split(',')) : undefined
const results = []
for (const lane of lanes) {
  if (selected && !selected.has(lane.name)) continue
  const slug = lane.name.replace(/[^A-Za-z0-9_-]+/g, '-')
  const dir = join(work, 'lanes', slug)
  const marker = `m-${slug}`
  const files = { fakeLog: join(work, 'lanes', `${slug}.executions.jsonl`), mcpLog: join(work, 'lanes', `${slug}.mcp.log`), logFile: join(dir, 'openclaw.log') }
  mkdirSync(join(work, 'lanes'), { recursive: true })
  const { template, disabledTemplate } = templates.get(lane.release)
  const env = { providerUrl, fakePluginDir, node, template: lane.pluginEnabled === false ? disabledTemplate : template, ...files }
  const laneOpenclaw = lane.variant ? openclawVariant(lane.variant, variants[lane.variant]) : openclawDirs.get(lane.release)
  const nodeOptions = lane.native && !lane.noImport ? `--import=${register}` : undefined
  const otel = lane.otel ? { nodeOptions: `--import=${OTEL_PRELOAD}`, env: { QA_OTLP_URL: receiver.url(slug), QA_OPENCLAW_DIAGNOSTICS: diagnosticRuntimeFile(laneOpenclaw) } } : undefined
  log(`lane ${lane.name}`)
  let outcome
  /** The first of several turns: its marker and outcome (learned ranking compares the turns). */
  let earlier
  try {
    if (lane.gateway) {
      outcome = await gatewayTurn({ openclaw: laneOpenclaw, node, dir, prompt: prompt(marker, lane.cell), configFor: (gatewayPort, workspace) => laneConfig({ ...lane, gatewayPort }, { ...env, workspace }), nodeOptions: otel?.nodeOptions, extraEnv: otel?.env, gatewayCalls: lane.gatewayCalls })
    } else {
      // A lane of several turns is judged by its last (the earlier ones prepare its state folder).
      const turns = lane.turns ?? 1
      for (let turn = 0; turn < turns; turn++) {
        const turnMarker = turn === turns - 1 ? marker : `${marker}-t${turn + 1}`
        outcome = await agentExec({ openclaw: laneOpenclaw, node, dir, config: laneConfig(lane, env), prompt: prompt(turnMarker, lane.cell), nodeOptions, again: turn > 0 })
        if (turn === 0 && turns > 1) earlier = { marker: turnMarker, outcome }
      }
    }
  } catch (error) {
    outcome = { error: String(error?.stack ?? error), log: [], session: { events: [] } }
  }
  const requests = await providerGet(`/debug/requests?marker=${encodeURIComponent(marker)}`)
  const executions = existsSync(files.fakeLog) ? readFileSync(files.fakeLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []
  if (earlier) earlier.requests = await providerGet(`/debug/requests?marker=${encodeURIComponent(earlier.marker)}`)
  if (lane.otel) outcome.telemetry = receiver.received(slug)
  results.push(judge(lane, outcome, requests, executions, marker, earlier))
}
// The MCP fleet lanes (fleet-lanes.mjs): real MCP servers' tools on SDK servers, stdio and HTTP.
const SOAK_TURNS = Number(flags['soak-turns'] ?? process.env.OPENCLAW_QA_SOAK_TURNS ?? 300)
const fleetLanes = []
if (newest) fleetLanes.push({ name: 'mcp/exec', release: OPENCLAW_VERSION })
if (releases.includes(OLDEST_SUPPORTED_OPENCLAW) && OLDEST_SUPPORTED_OPENCLAW !== OPENCLAW_VERSION) fleetLanes.push({ name: `mcp/exec@${OLDEST_SUPPORTED_OPENCLAW}`, release: OLDEST_SUPPORTED_OPENCLAW })
const fleetWanted = (name) => !selected || selected.has(name)
const gatewayWanted = newest && (fleetWanted('mcp/gateway') || fleetWanted('gateway/soak'))
if (fleetLanes.some((lane) => fleetWanted(lane.name)) || gatewayWanted) {
  log('starting the MCP fleet (fleet/host.mjs: every HTTP server of fleet/servers.json)')
  const fleet = await startFleet(join(work, 'fleet'))
  try {
    for (const lane of fleetLanes) {
      if (!fleetWanted(lane.name)) continue
      log(`lane ${lane.name}`)
      results.push(await mcpExecLane({ ...lane, openclaw: openclawDirs.get(lane.release), node, register, template: templates.get(lane.release).template, providerUrl, work, fleet, pluginConfig }))
    }
    if (gatewayWanted) {
      log(`lanes mcp/gateway and gateway/soak (${fleetWanted('gateway/soak') ? SOAK_TURNS : 0} soak turns)`)
      const soakTurns = fleetWanted('gateway/soak') ? SOAK_TURNS : 0
      // `--soak-engine built-in`: the soak alone with OpenClaw's own engine, for its memory series.
      const builtIn = flags['soak-engine'] === 'built-in'
      for (const result of await gatewayFleetLanes({ release: OPENCLAW_VERSION, openclaw, node, template: templates.get(OPENCLAW_VERSION).template, providerUrl, work, fleet, pluginDir, soakTurns, log, builtIn })) {
        if (fleetWanted(result.lane)) results.push(result)
      }
    }
  } finally {
    fleet.stop()
  }
}

const canary = await providerGet('/debug/canary')
provider.kill('SIGTERM')
await receiver.close()

// ------------------------------------------------------------------ checks

function engineLinesOf(outcome) {
  return engineLines(outcome.log ?? [], packageVersion)
}

function firstRank(requests) {
  for (const request of requests) if (request.note?.rank !== undefined) return request.note.rank
  return undefined
}

/** The transcript's tool activity: direct tool results and nested (bridged) calls. */
function transcript(outcome) {
  const calls = []
  let telemetry
  for (const { event } of outcome.session?.events ?? []) {
    const message = event?.message
    if (!message) continue
    if (message.role === 'custom' && message.customType === 'openclaw.nested-tool.v1') calls.push({ nested: true, tool: message.details?.toolName, input: message.details?.input, parent: message.details?.parentToolCallId })
    if (message.role === 'toolResult') {
      calls.push({ nested: false, tool: message.toolName })
      if (message.toolName === 'tool_search_code') telemetry = message.details?.telemetry ?? telemetry
    }
  }
  return { calls, telemetry }
}

function judge(lane, outcome, requests, executions, marker, earlier) {
  const checks = []
  const check = (name, ok, detail = '') => checks.push({ name, ok: Boolean(ok), detail })
  const lines = engineLinesOf(outcome)
  const okLine = `FAKE_PLUGIN_OK ${TARGET.name}`
  const targetRuns = executions.filter((e) => e.tool === TARGET.name && e.args?.marker === marker)
  const first = requests[0]
  const fakeInFirst = (first?.toolNames ?? []).filter((n) => n.startsWith('fake_plugin_tool_')).length
  const log = outcome.log ?? []
  const ours = log.filter((line) => line.startsWith(`${PLUGIN_ID}:`))
  const { calls, telemetry } = transcript(outcome)
  const row = {
    lane: lane.name,
    release: lane.release,
    firstRequestBytes: first?.bytes,
    toolsSent: first?.tools,
    modelRequests: requests.length,
    searches: outcome.bridgeCalls?.search,
    describes: outcome.bridgeCalls?.describe,
    calls: outcome.bridgeCalls?.call,
    wallMs: outcome.ms,
    rank: firstRank(requests),
    engine: lines[0] ? `native ${lines[0].ranking}` : 'built-in',
  }
  if (outcome.error) check('the turn ran', false, outcome.error.slice(0, 400))
  row.lines = lines
  if (lane.expect === 'config-refused') {
    // The manifest's schema is strict: OpenClaw refuses the whole config and names the key.
    const error = outcome.output?.error?.message ?? ''
    check('OpenClaw refuses the config (no turn)', outcome.exitCode !== 0 && requests.length === 0, `exit ${outcome.exitCode}, ${requests.length} model requests`)
    check('its error names the plugin key and the allowed values', /plugins\.entries\.openclaw-tool-search\.config\.ranking: invalid config: must be equal to one of the allowed values \(allowed: "auto", "lexical", "hybrid"\)/.test(error), error.slice(0, 300))
    return { lane: lane.name, row, checks }
  }
  if (lane.expect === 'denied') {
    check('the denied tool is never listed by search', firstRank(requests) === 0, `rank ${firstRank(requests)}`)
    check('the denied tool never runs', executions.every((e) => e.tool !== TARGET.name), `${executions.length} executions`)
    check('the turn ends without the OK line', !String(outcome.final).includes(okLine), String(outcome.final).slice(0, 120))
    check('the engine served the run', lines.length === 1 && lines[0].searches >= 1, JSON.stringify(lines))
    return { lane: lane.name, row, checks }
  }
  check('the turn passes (OK line in the final answer)', outcome.exitCode === 0 && String(outcome.final).includes(okLine), String(outcome.final).slice(0, 160))
  check('the target ran once, with its marker', targetRuns.length === 1, `${targetRuns.length} runs`)
  if (lane.mode === 'direct') {
    check('direct mode sends every fake schema up front', fakeInFirst === 300, `${fakeInFirst} fake tools in the first request`)
    check('the session log has the direct call', calls.some((c) => !c.nested && c.tool === TARGET.name))
  } else {
    check('Tool Search sends no fake schema up front', fakeInFirst === 0, `${fakeInFirst} fake tools; ${first?.tools} tools`)
    // Releases before 2026.8.1 keep sessions in JSONL files without nested-call entries and report
    // no bridge counters: their lane checks the turn, the target's run and the engine's line.
    if (!lane.legacy) {
      check('the session log has the bridged call of the target', calls.some((c) => c.nested && c.tool === TARGET.name && c.input?.marker === marker))
      check("OpenClaw's counters counted the search and the call", outcome.bridgeCalls?.search >= 1 && outcome.bridgeCalls?.call >= 1, JSON.stringify(outcome.bridgeCalls))
    }
  }
  if (lane.mode === 'code' && !lane.cell && !lane.legacy) {
    check('the code cell reported its telemetry in the session log', telemetry?.searchCount >= 1 && telemetry?.callCount === 1, JSON.stringify(telemetry))
  }
  const native = lane.native && lane.expect !== 'built-in'
  if (native && lane.mode !== 'direct') {
    check('OpenClaw\'s log has the engine\'s line with searches >= 1', lines.length >= 1 && lines[0].searches >= 1, JSON.stringify(lines))
    if (lane.mode === 'code') check('the engine ran the cells', lines[0]?.cells >= 1, JSON.stringify(lines))
    check('the engine never fell back', lines.every((l) => l.fallbacks === 0), JSON.stringify(lines))
    // The call followed the search in the same run: learned ranking (on by default) learned from it,
    // which proves the seam's call hook on this release.
    if (!lane.cell && !lane.legacy && lane.pluginConfig?.learning !== false) check('the engine learned from the call that followed its search (learned=1)', lines[0]?.learned === 1, JSON.stringify(lines))
  } else if (lane.mode !== 'direct') {
    check("OpenClaw's own engine served the run (no engine line)", lines.length === 0, JSON.stringify(lines))
  }
  if (lane.line) {
    check(`one line from the engine says why (${lane.line.source.slice(0, 60)}...)`, ours.length === 1 && lane.line.test(ours[0]), JSON.stringify(ours))
    for (const name of lane.lineNames ?? []) check(`the line names ${name}`, ours.length === 1 && ours[0].includes(name), JSON.stringify(ours))
  }
  if (lane.noImport) {
    check('one line says the engine is not installed in this process', ours.length === 1 && /not installed in this process/.test(ours[0]), JSON.stringify(ours))
  }
  if (lane.pluginEnabled === false) {
    check('nothing from the engine in OpenClaw\'s log', ours.length === 0 && lines.length === 0, JSON.stringify(ours))
  }
  if (lane.cell === 'loop-first') {
    const timedOut = requests.some((r) => r.note?.step === 'cell') // the second cell was sent after the first failed
    check('the looping cell was ended and the run went on', timedOut, requests.map((r) => r.note?.step).join(','))
  }
  if (lane.cell === 'memory-first') {
    const first = requests.find((r) => r.note?.step === 'cell')?.note?.previous ?? ''
    check('the memory-flood cell failed with a stable code', /CODE_MEMORY_LIMIT/.test(first), first.slice(0, 300))
    check('the model read no host path, pid or stack from it', first !== '' && !/\/(opt|work|tmp|root|home|usr)\/|\bpid\b|\n\s+at /i.test(first), first.slice(0, 300))
  }
  if (lane.degraded) {
    check("the run's line says why hybrid was not served", lines.length === 1 && lane.degraded.test(lines[0].degraded ?? ''), JSON.stringify(lines))
  }
  if (lane.expectRanking) {
    check(`the last turn ranked ${lane.expectRanking} from its first search`, lines.length === 1 && lines[0].ranking === lane.expectRanking, JSON.stringify(lines))
  }
  if (lane.expectIndex) {
    check(`the last turn's search index was ${lane.expectIndex} (the run's line says so)`, lines.length === 1 && lines[0].index === lane.expectIndex, JSON.stringify(lines))
  }
  if (lane.expectLearning) {
    const before = earlier ? engineLinesOf(earlier.outcome) : []
    check("the first run learned from its call (its line says learned=1)", before.length === 1 && before[0].learned === 1, JSON.stringify(before))
    const [rankBefore, rankAfter] = [firstRank(earlier?.requests ?? []), firstRank(requests)]
    row.rank = `${rankBefore} → ${rankAfter}`
    check('the second run ranks the tool the first called at least as high', rankBefore > 0 && rankAfter > 0 && rankAfter <= rankBefore, `${rankBefore} → ${rankAfter}`)
    check('the second run learned from its call too', lines.length === 1 && lines[0].learned === 1, JSON.stringify(lines))
  }
  if (lane.otel) judgeTelemetry(lane, outcome.telemetry, check)
  if (lane.gatewayCalls?.includes(LIVE_AUDIT)) judgeLiveAudit(lane, outcome.gatewayCalls?.[LIVE_AUDIT], check)
  if (lane.cell === 'escape') {
    const leaked = log.join('\n').includes('root:x:0:0') || String(outcome.final).includes('root:x:0:0')
    check('no file content left the cell', !leaked)
  }
  return { lane: lane.name, row, checks }
}

/**
 * What the gateway's preloaded SDK exported to the receiver: the engine's spans (a search that
 * found the target, the code cell with its bridged calls, the catalog build), its metrics,
 * OpenClaw diagnostic events, and the request's text nowhere unless content capture is on.
 */
function judgeTelemetry(lane, received, check) {
  const spans = (received?.spans ?? []).filter((span) => span.scope === PLUGIN_ID)
  const named = (name) => spans.filter((span) => span.name === `openclaw.tool_search.${name}`)
  const searches = named('search')
  const search = searches.find((span) => span.attributes['openclaw.tool_search.hits'] >= 1)
  check('the engine\'s search spans reached the OTLP receiver (hits, ranking, query length)', search && typeof search.attributes['openclaw.tool_search.ranking'] === 'string' && search.attributes['openclaw.tool_search.query.length'] === TASK.length, JSON.stringify(searches.map((span) => span.attributes)).slice(0, 400))
  const cell = named('code_cell').find((span) => span.attributes['openclaw.tool_search.outcome'] === 'ok')
  check('a code cell span with its bridged calls and containment', cell && cell.attributes['openclaw.tool_search.cell.bridge_calls.call'] >= 1 && typeof cell.attributes['openclaw.tool_search.cell.containment.seccomp'] === 'boolean', JSON.stringify(named('code_cell').map((span) => span.attributes)).slice(0, 400))
  const build = named('catalog.build').find((span) => span.attributes['openclaw.tool_search.catalog.tools'] >= 300)
  check('a catalog build span for the run\'s catalog', build, JSON.stringify(named('catalog.build').map((span) => span.attributes)).slice(0, 300))
  check('the engine\'s metrics reached the receiver', received?.metrics.has('openclaw.tool_search.searches') && received?.metrics.has('openclaw.tool_search.code_cells'), JSON.stringify([...(received?.metrics ?? [])]))
  const types = new Set((received?.events ?? []).map((event) => event.type))
  check("OpenClaw's diagnostic events carried the engine's search and cell", types.has('tool_search.search') && types.has('tool_search.code_cell'), JSON.stringify([...types]))
  const texts = received?.bodies ?? []
  const carrying = texts.filter((text) => text.includes(TASK)).length
  if (lane.expectQueryText) {
    check('with captureContent the search span carries the query text', search?.attributes['openclaw.tool_search.query'] === TASK, JSON.stringify(search?.attributes ?? {}).slice(0, 300))
  } else {
    check('no query text in anything exported (spans, metrics, events)', texts.length > 0 && carrying === 0, `${carrying} of ${texts.length} bodies carry "${TASK}"`)
  }
}

/**
 * `openclaw gateway call openclaw-tool-search.audit --json` after the turn: the plugin audits the
 * catalog of the gateway's latest run, names each tool by OpenClaw's id, finds the target by its
 * own words; the package's CLI renders that saved answer as a table and a page.
 */
function judgeLiveAudit(lane, call, check) {
  const audit = call?.output
  check("openclaw gateway call openclaw-tool-search.audit answers the live catalog's audit", call?.exitCode === 0 && Array.isArray(audit?.tools) && audit.totals?.tools >= 300 && audit.tools.length === audit.totals.tools, `exit ${call?.exitCode}: ${JSON.stringify(call?.output ?? call?.stderr).slice(0, 300)}`)
  const target = audit?.tools?.find((tool) => typeof tool.openclawId === 'string' && tool.openclawId.endsWith(TARGET.name))
  check("the audit names tools by OpenClaw's id and finds the target by its own words (top 10)", target && target.bestRank !== null && target.bestRank <= 10 && !target.problems.includes('unfindable'), JSON.stringify(target ?? audit?.tools?.slice(0, 2)).slice(0, 300))
  check('the audit says which OpenClaw release and plugin version served it', audit?.gateway?.openclaw === lane.release && audit?.gateway?.plugin === packageVersion, JSON.stringify(audit?.gateway))
  let text = ''
  const page = call?.file ? join(dirname(call.file), 'live-audit.html') : undefined
  try {
    if (call?.file) text = execFileSync(node, [join(pluginDir, 'bin', 'openclaw-tool-search.js'), 'audit', '--report', call.file, '--html', page, '--limit', '5'], { encoding: 'utf8' })
  } catch (error) {
    text = String(error?.stderr ?? error)
  }
  check('openclaw-tool-search audit --report renders the saved answer (table and page)', /^\d+ tools on \d+ servers/.test(text) && page && existsSync(page) && readFileSync(page, 'utf8').includes(TARGET.name), text.slice(0, 300))
}

// ------------------------------------------------------------------ report

const escapeLanes = results.filter((r) => r.lane === 'negative/escaping-cell')
for (const r of escapeLanes) r.checks.push({ name: 'no connection reached the canary port', ok: canary.connections === 0, detail: `${canary.connections} connections` })

const direct = results.find((r) => r.lane === 'direct/built-in')
for (const r of results) {
  // The fleet's lanes have no direct counterpart (another catalog, another task).
  if (!direct || r.lane.startsWith('direct') || r.lane.startsWith('negative') || r.lane.startsWith('mcp/') || r.lane === 'gateway/soak') continue
  r.checks.push({ name: "Tool Search's first request is smaller than direct's", ok: r.row.firstRequestBytes < direct.row.firstRequestBytes, detail: `${r.row.firstRequestBytes} vs ${direct.row.firstRequestBytes}` })
}

/** The release matrix: per release, the code lane with each engine (its pass, first request, target rank). */
function matrix() {
  const byName = new Map(results.map((r) => [r.lane, r]))
  const lane = (name, release) => byName.get(release === OPENCLAW_VERSION ? name : `${name}@${release}`)
  const summary = (result) => {
    if (!result) return undefined
    const line = result.row.lines?.[0]
    return {
      pass: result.checks.every((c) => c.ok),
      firstRequestBytes: result.row.firstRequestBytes,
      rank: result.row.rank,
      engine: line ? `native ${line.ranking} (searches=${line.searches} cells=${line.cells} index=${line.index} fallbacks=${line.fallbacks} learned=${line.learned})` : 'built-in',
    }
  }
  const rows = []
  for (const release of [...OPENCLAW_RELEASES].reverse()) {
    const builtIn = summary(lane('code/built-in', release))
    const native = summary(lane('code/native', release))
    if (builtIn || native) rows.push({ release, builtIn, native })
  }
  const preSplit = summary(byName.get(`negative/pre-split@${PRE_SPLIT_OPENCLAW}`))
  if (preSplit) rows.push({ release: PRE_SPLIT_OPENCLAW, builtIn: undefined, native: { ...preSplit, engine: `${preSplit.engine} (refused: predates ${OLDEST_SUPPORTED_OPENCLAW})` } })
  return rows
}

function table(head, rows) {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n')
}

if (flags.json) {
  process.stdout.write(`${JSON.stringify({ openclaw: OPENCLAW_VERSION, releases, package: packageVersion, matrix: matrix(), results }, null, 2)}\n`)
} else {
  const cell = (v) => (v === undefined || v === null ? '-' : typeof v === 'number' && !Number.isInteger(v) ? `${(v / 1000).toFixed(1)} s` : String(v))
  const main = results.filter(({ lane, row }) => row.release === OPENCLAW_VERSION && !lane.startsWith('mcp/') && lane !== 'gateway/soak')
  if (main.length > 0) {
    const head = ['lane', 'engine', 'first request bytes', 'tools sent', 'model requests', 'searches', 'describes', 'calls', 'wall', 'target rank']
    const rows = main.map(({ row }) => [row.lane, row.engine, row.firstRequestBytes, row.toolsSent, row.modelRequests, row.searches, row.describes, row.calls, row.wallMs, row.rank].map(cell))
    console.log(`\nOpenClaw ${OPENCLAW_VERSION} with openclaw-tool-search ${packageVersion} (target ${TARGET.name}: "${TARGET.capability}", task "${TASK}")\n`)
    console.log(table(head, rows))
  }
  const releaseRows = matrix()
  if (releaseRows.length > 0) {
    const pass = (s) => (s ? (s.pass ? 'pass' : 'FAIL') : '-')
    const head = ['OpenClaw', 'built-in', 'first request bytes', 'target rank', 'native', 'first request bytes', 'target rank', 'engine']
    const rows = releaseRows.map(({ release, builtIn, native }) => [release, pass(builtIn), builtIn?.firstRequestBytes, builtIn?.rank, pass(native), native?.firstRequestBytes, native?.rank, native?.engine].map(cell))
    console.log(`\nRelease matrix: the code lane (a cell that searches, describes and calls the target) with OpenClaw's engine and with this package's\n`)
    console.log(table(head, rows))
  }
  const fleetRows = results.filter(({ lane }) => lane.startsWith('mcp/'))
  if (fleetRows.length > 0) {
    const head = ['lane', 'OpenClaw', 'MCP servers', 'catalog tools', 'turns', 'engine', 'wall', 'catalog versions']
    const rows = fleetRows.map(({ row }) => [row.lane, row.release, row.servers, row.tools, row.turns ?? 1, row.engine ?? 'native', row.ms, row.versions ? Object.entries(row.versions).map(([k, v]) => `${k} ${v}`).join(', ') : undefined].map(cell))
    console.log(`\nMCP fleet: ${FLEET_SUMMARY} on servers built on @modelcontextprotocol/sdk (stdio and streamable HTTP)\n`)
    console.log(table(head, rows))
  }
  const soak = results.find(({ lane }) => lane === 'gateway/soak')?.row
  if (soak?.series) {
    console.log(`\n${soak.lane === 'gateway/soak' ? 'Soak' : 'Soak with OpenClaw\'s own engine'}: ${soak.turns} turns in ${Math.round(soak.ms / 1000)} s on one openclaw gateway run (2 agents, ${soak.changes} catalog changes, ${soak.aborts} aborted cells), longest event-loop gap ${soak.maxGapMs} ms${soak.restartGapMs !== undefined ? ` (the restarted gateway's start-up: ${soak.restartGapMs} ms)` : ''}, catalog versions ${JSON.stringify(soak.versions)}${soak.rssGrowth !== undefined ? `; trend over the window after warm-up: RSS after a full collection ${(soak.rssGrowth * 100).toFixed(1)}%, JS heap ${(soak.heapGrowth * 100).toFixed(1)}%` : ''}\n`)
    const head = ['turn', 'gateway RSS MiB', 'after full GC: RSS MiB', 'JS heap MiB', 'max loop gap ms', 'open runs', 'record cache', 'held catalogs', 'held MiB', 'stored records']
    console.log(table(head, soak.series.filter((s, i, all) => s.turn % 50 === 0 || i === all.length - 1).map((s) => [s.turn, s.rssMiB, s.retainedRssMiB, s.heapMiB, s.maxGapMs, s.runsOpen, s.records, s.heldCatalogs, s.heldMiB, s.storedRecords].map(cell))))
  }
  console.log('')
  for (const result of results) {
    for (const c of result.checks) console.log(`${c.ok ? 'ok  ' : 'FAIL'} ${result.lane}: ${c.name}${c.ok || !c.detail ? '' : ` (${c.detail})`}`)
  }
}
const failed = results.flatMap((r) => r.checks).filter((c) => !c.ok).length
const passed = results.flatMap((r) => r.checks).length - failed
console.log(`\n${passed} passed, ${failed} failed`)
process.exitCode = failed === 0 && results.length > 0 ? 0 : 1

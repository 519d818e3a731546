// Runs the real OpenClaw headless and offline, one turn per call, and gathers what the QA checks:
// `openclaw agent exec` (the embedded runner) or `openclaw gateway run` + `openclaw agent`, each in a
// fresh HOME, TMPDIR and state folder, against the mock provider, with the fake plugin and the MCP
// server, and (native lanes) this package installed as an OpenClaw plugin.
import { spawn, spawnSync } from 'node:child_process'
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { FAKE_PLUGIN_ID } from './fake-plugin.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
export const PLUGIN_ID = 'openclaw-tool-search'

/**
 * The OpenClaw config of one lane.
 * @param {object} lane `{ toolSearch, native, pluginConfig?, deny?, gatewayPort?, legacy?, oddTools? }` (`legacy`: a release
 *   before 2026.8.1; `oddTools`: the MCP server adds two tools the native catalog refuses as given)
 * @param {object} env `{ providerUrl, fakePluginDir, fakeLog, mcpLog, node, logFile, template, workspace }`
 */
export function laneConfig(lane, env) {
  // The template holds what `openclaw plugins install --link` wrote (load path + enabled entry).
  const config = lane.native ? structuredClone(env.template) : {}
  config.models = {
    mode: 'merge',
    providers: {
      qa: {
        baseUrl: `${env.providerUrl}/v1`,
        apiKey: 'qa-key',
        api: 'openai-completions',
        models: [{ id: 'qa-model', name: 'QA scripted model', reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 128000, maxTokens: 4096 }],
      },
    },
  }
  // No remote model catalog (the gateway would fetch it at start-up); a setting from 2026.8.1 on,
  // which older releases refuse.
  if (!lane.legacy) config.models.catalogRefresh = { enabled: false }
  config.update = { checkOnStart: false }
  config.agents = { defaults: { model: { primary: 'qa/qa-model' }, skipBootstrap: true, heartbeat: { every: '0m' }, ...(env.workspace ? { workspace: env.workspace } : {}) } }
  config.tools = { profile: 'full', toolSearch: lane.toolSearch, ...(lane.deny ? { deny: lane.deny } : {}) }
  config.plugins ??= {}
  config.plugins.load ??= {}
  config.plugins.load.paths = [...(config.plugins.load.paths ?? []), env.fakePluginDir]
  config.plugins.entries ??= {}
  config.plugins.entries[FAKE_PLUGIN_ID] = { enabled: true, config: { logFile: env.fakeLog } }
  if (lane.native && lane.pluginConfig) config.plugins.entries[PLUGIN_ID] = { ...config.plugins.entries[PLUGIN_ID], config: lane.pluginConfig }
  config.mcp = { servers: { qa_tracker: { command: env.node, args: [join(HERE, 'mcp-server.mjs')], env: { QA_MCP_LOG: env.mcpLog, ...(lane.oddTools ? { QA_MCP_ODD: '1' } : {}) } } } }
  config.logging = { file: env.logFile, level: 'info' }
  if (lane.gatewayPort) config.gateway = { mode: 'local', port: lane.gatewayPort, bind: 'loopback', auth: { mode: 'token', token: 'qa-token' } }
  return config
}

/** The environment OpenClaw runs in: only what it needs, nothing of the QA's own. */
function processEnv(node, dir, extra = {}) {
  const env = {
    PATH: `${dirname(node)}:/usr/local/bin:/usr/bin:/bin`,
    HOME: join(dir, 'home'),
    TMPDIR: join(dir, 'tmp'),
    LANG: 'C.UTF-8',
    NO_COLOR: '1',
    ...extra,
  }
  for (const key of ['OPENCLAW_TOOL_SEARCH_NODE', 'OPENCLAW_TOOL_SEARCH_MODEL_DIR', 'OPENCLAW_TOOL_SEARCH_CACHE_DIR', 'OPENCLAW_TOOL_SEARCH_LOG', 'OPENCLAW_TOOL_SEARCH_LOG_FILE']) {
    if (process.env[key]) env[key] = process.env[key]
  }
  return env
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
    server.on('error', reject)
  })
}

export function waitForPort(port, deadline) {
  return new Promise((resolve) => {
    const attempt = () => {
      const socket = net.connect(port, '127.0.0.1')
      socket.on('connect', () => {
        socket.destroy()
        resolve(true)
      })
      socket.on('error', () => {
        socket.destroy()
        if (Date.now() > deadline) resolve(false)
        else setTimeout(attempt, 300)
      })
    }
    attempt()
  })
}

function run(command, args, { env, cwd, timeoutMs }) {
  return new Promise((resolve) => {
    const started = performance.now()
    const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr, ms: performance.now() - started })
    })
  })
}

function lastJson(text) {
  const start = text.indexOf('{')
  if (start < 0) return undefined
  try {
    return JSON.parse(text.slice(start))
  } catch {
    return undefined
  }
}

/**
 * The engine's run lines among OpenClaw's log lines (one per run it served):
 * `openclaw-tool-search <version>: run <id> served searches=… cells=… ranking=… index=… fallbacks=… learned=…`.
 */
export function engineLines(logLines, version = '\\S+') {
  const pattern = new RegExp(`^${PLUGIN_ID} ${version.replaceAll('.', '\\.')}: run (\\S+) served searches=(\\d+) cells=(\\d+) ranking=(\\S+)(?: \\(configured hybrid: (.*)\\))? index=(\\S+) fallbacks=(\\d+) learned=(\\d+)$`)
  return logLines
    .map((line) => pattern.exec(line))
    .filter(Boolean)
    .map((m) => ({ runId: m[1], searches: Number(m[2]), cells: Number(m[3]), ranking: m[4], degraded: m[5], index: m[6], fallbacks: Number(m[7]), learned: Number(m[8]) }))
}

/** Session events from OpenClaw's SQLite session store (read with the Node OpenClaw runs on). */
export function sessionEvents(node, stateDir) {
  const out = spawnSync(node, [join(HERE, 'session-log.mjs'), stateDir], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 })
  if (out.status !== 0) return { events: [], error: out.stderr.trim() || `exit ${out.status}` }
  return { events: out.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line)) }
}

/**
 * Lines OpenClaw's file log holds: a JSON line's `message` field (2026.9.x), or its positional
 * arguments `"0"`, `"1"`, ... without the `{"subsystem":...}` one (tslog's shape, 2026.8.x).
 */
export function logMessages(file) {
  if (!existsSync(file)) return []
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      let record
      try {
        record = JSON.parse(line)
      } catch {
        return line
      }
      if (typeof record?.message === 'string') return record.message
      const parts = []
      for (let i = 0; typeof record?.[i] === 'string'; i++) {
        if (/^\{"subsystem":/.test(record[i])) continue
        parts.push(record[i])
      }
      return parts.join(' ')
    })
}

/**
 * One `openclaw agent exec` turn. `nodeOptions` goes into NODE_OPTIONS (native lanes: the seam's
 * --import, as the README tells operators to start `agent exec`).
 */
export async function agentExec({ openclaw, node, dir, config, prompt, nodeOptions, again = false }) {
  // `again`: a later turn in the same HOME and state folder (as one operator's next command).
  if (!again) rmSync(dir, { recursive: true, force: true })
  for (const sub of ['home', 'tmp', 'cwd', 'state']) mkdirSync(join(dir, sub), { recursive: true })
  // A later turn's log lines are the ones after the earlier turns'.
  const logBefore = again ? logMessages(config.logging.file).length : 0
  const configFile = join(dir, 'openclaw.json')
  writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`)
  // `agent exec` reads its file logger's settings from the state folder's config.
  copyFileSync(configFile, join(dir, 'state', 'openclaw.json'))
  const env = processEnv(node, dir, { OPENCLAW_CONFIG_PATH: configFile, ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}) })
  const args = [join(openclaw, 'openclaw.mjs'), 'agent', 'exec', '--config', configFile, '--cwd', join(dir, 'cwd'), '--state-dir', join(dir, 'state'), '--json', '--timeout', '180', prompt]
  const result = await run(node, args, { env, cwd: join(dir, 'cwd'), timeoutMs: 240_000 })
  writeFileSync(join(dir, 'stdout.json'), result.stdout)
  writeFileSync(join(dir, 'stderr.txt'), result.stderr)
  const output = lastJson(result.stdout)
  return {
    kind: 'exec',
    exitCode: result.code,
    ms: result.ms,
    output,
    final: output?.final ?? '',
    runId: output?.sessionId,
    bridgeCalls: output?.bridgeCalls,
    stderr: result.stderr,
    log: logMessages(config.logging.file).slice(logBefore),
    session: sessionEvents(node, join(dir, 'state')),
  }
}

/** One turn through the gateway: `openclaw gateway run`, then `openclaw agent --agent main`. */
export async function gatewayTurn({ openclaw, node, dir, configFor, prompt, nodeOptions, extraEnv, gatewayCalls = [] }) {
  rmSync(dir, { recursive: true, force: true })
  for (const sub of ['home/.openclaw', 'tmp', 'workspace']) mkdirSync(join(dir, sub), { recursive: true })
  const port = await freePort()
  const config = configFor(port, join(dir, 'workspace'))
  const configFile = join(dir, 'home', '.openclaw', 'openclaw.json')
  writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`)
  const env = processEnv(node, dir, { OPENCLAW_CONFIG_PATH: configFile, OPENCLAW_GATEWAY_TOKEN: 'qa-token', ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}), ...extraEnv })
  const started = performance.now()
  const gateway = spawn(node, [join(openclaw, 'openclaw.mjs'), 'gateway', 'run', '--port', String(port), '--bind', 'loopback', '--auth', 'token'], { env, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] })
  let gatewayErr = ''
  gateway.stdout.resume()
  gateway.stderr.setEncoding('utf8').on('data', (chunk) => (gatewayErr += chunk))
  const exited = new Promise((resolve) => gateway.on('close', resolve))
  let result
  try {
    const up = await waitForPort(port, Date.now() + 120_000)
    const startupMs = performance.now() - started
    if (!up) throw new Error(`the gateway did not listen on ${port} within 120 s`)
    const turn = await run(node, [join(openclaw, 'openclaw.mjs'), 'agent', '--agent', 'main', '--message', prompt, '--json', '--timeout', '180'], { env: { ...env, NODE_OPTIONS: '' }, cwd: dir, timeoutMs: 240_000 })
    writeFileSync(join(dir, 'stdout.json'), turn.stdout)
    writeFileSync(join(dir, 'agent-stderr.txt'), turn.stderr)
    const output = lastJson(turn.stdout)
    const meta = output?.result?.meta
    result = {
      kind: 'gateway',
      exitCode: turn.code,
      ms: turn.ms,
      startupMs,
      output,
      final: (output?.result?.payloads ?? []).map((p) => p?.text ?? '').join('\n'),
      runId: output?.runId,
      bridgeCalls: meta?.agentMeta?.bridgeCalls,
      stderr: turn.stderr,
      gatewayCalls: {},
    }
    // Gateway methods called after the turn, as an operator would (`openclaw gateway call M --json`).
    for (const method of gatewayCalls) {
      const call = await run(node, [join(openclaw, 'openclaw.mjs'), 'gateway', 'call', method, '--json', '--port', String(port)], { env: { ...env, NODE_OPTIONS: '' }, cwd: dir, timeoutMs: 120_000 })
      writeFileSync(join(dir, `${method}.json`), call.stdout)
      result.gatewayCalls[method] = { exitCode: call.code, output: lastJson(call.stdout), file: join(dir, `${method}.json`), stderr: call.stderr.slice(-2000) }
    }
  } finally {
    gateway.kill('SIGTERM')
    const stopped = await Promise.race([exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 15_000))])
    if (!stopped) gateway.kill('SIGKILL')
    appendFileSync(join(dir, 'gateway-stderr.txt'), gatewayErr)
  }
  result.log = logMessages(config.logging.file)
  result.session = sessionEvents(node, join(dir, 'home', '.openclaw'))
  return result
}

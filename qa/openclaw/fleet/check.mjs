#!/usr/bin/env node
// Self-check of the fleet with the official SDK client: host.mjs over streamable HTTP (lists,
// calls, the call log, list_changed, down/up, hang-list, delay, cancellation, session bounds) and
// stdio.mjs (lists, calls, a crash mid-call). Prints `N passed, M failed`; exits 1 on a failure.
//
//   node qa/openclaw/fleet/check.mjs
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import readline from 'node:readline'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ErrorCode, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { loadFleet } from './lib.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'fleet-check-'))
const LOG = join(dir, 'calls.jsonl')
const STDIO_LOG = join(dir, 'stdio-calls.jsonl')
const fleet = loadFleet()
const started = Date.now()
const children = new Set()

// The whole check is bounded: a hang anywhere is a failure, not a stuck QA run.
const watchdog = setTimeout(() => {
  console.log('FAIL check timed out after 40 s')
  for (const child of children) child.kill('SIGKILL')
  process.exit(1)
}, 40_000)

let passed = 0
let failed = 0
const notes = []
async function test(name, fn) {
  try {
    await fn()
    passed++
    console.log(`ok   ${name}`)
  } catch (error) {
    failed++
    console.log(`FAIL ${name}: ${error?.stack ?? error}`)
  }
}
function assert(condition, message) {
  if (!condition) throw new Error(message)
}
// Key order is not compared: the SDK client's zod parsing reorders keys (inputSchema.type first).
const canonical = (value) => JSON.stringify(value, (_key, v) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v))
const eq = (actual, expected, what) => assert(canonical(actual) === canonical(expected), `${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
async function waitFor(what, predicate, ms = 3000) {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await predicate()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(25)
  }
}
const textOf = (result) => result.content?.[0]?.text
const logLines = (file) => {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line))
  } catch {
    return []
  }
}

// --- host.mjs ---------------------------------------------------------------------------------

const ODD = 'it tools/ü' // an endpoint name that needs encodeURIComponent
const config = {
  servers: [
    { endpoint: 'time', fleet: 'time' },
    { endpoint: 'git.local', fleet: 'git' },
    { endpoint: ODD, fleet: 'it-tools-mcp' },
    {
      endpoint: 'inline',
      tools: [
        { name: 'do.thing', description: null, inputSchema: { properties: { a: { type: 'string' } } } },
        { name: 'odd schema', description: 'A tool whose schema is not an object schema.', inputSchema: { type: 'string' } },
      ],
    },
    { endpoint: 'late', fleet: 'calculator', down: true },
    { endpoint: 'crowd', fleet: 'time' },
  ],
}

let host
let hostExit
let ready
let base
const control = async (body) => (await fetch(`${base}/control`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()
const state = async () => (await fetch(`${base}/debug/state`)).json()
const sessions = async () => (await fetch(`${base}/debug/sessions`)).json()

/** An SDK client connected to an endpoint of the host, with the list_changed notifications it got. */
async function connect(endpoint) {
  const client = new Client({ name: 'fleet-check', version: '1.0.0' })
  client.listChanged = 0
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    client.listChanged++
  })
  const transport = new StreamableHTTPClientTransport(new URL(ready.servers[endpoint]))
  await client.connect(transport)
  return client
}
/** Ends a session the polite way (DELETE), then closes the client. */
async function disconnect(client) {
  await client.transport.terminateSession().catch(() => {})
  await client.close()
}

/** Starts host.mjs on a config; resolves with its ready line once it prints it. */
async function startHost(name, hostConfig, extraArgs = []) {
  const file = join(dir, `${name}.json`)
  writeFileSync(file, JSON.stringify(hostConfig))
  const child = spawn(process.execPath, [join(here, 'host.mjs'), '--config', file, ...extraArgs], { stdio: ['ignore', 'pipe', 'pipe'] })
  children.add(child)
  const exit = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  let stderr = ''
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const line = await Promise.race([
    new Promise((resolve) => readline.createInterface({ input: child.stdout }).once('line', resolve)),
    exit.then(({ code }) => Promise.reject(new Error(`host exited ${code}: ${stderr}`))),
    sleep(5000).then(() => Promise.reject(new Error('no ready line in 5 s'))),
  ])
  return { child, exit, ready: JSON.parse(line) }
}

await test('host starts and prints its endpoints', async () => {
  ;({ child: host, exit: hostExit, ready } = await startHost('config', config, ['--log', LOG, '--max-sessions', '8']))
  base = ready.url
  assert(/^http:\/\/127\.0\.0\.1:\d+$/.test(base), `url ${base}`)
  eq(Object.keys(ready.servers), config.servers.map((s) => s.endpoint), 'endpoints')
  eq(ready.servers[ODD], `${base}/mcp/${encodeURIComponent(ODD)}`, 'encoded endpoint url')
})

let time
let git
await test('tools/list serves each fleet list as given', async () => {
  time = await connect('time')
  git = await connect('git.local')
  const odd = await connect(ODD)
  for (const [client, name] of [[time, 'time'], [git, 'git'], [odd, 'it-tools-mcp']]) {
    const { tools } = await client.listTools()
    const expected = fleet.get(name).tools
    eq(tools.map((t) => t.name), expected.map((t) => t.name), `${name} tool names`)
    eq(tools.map((t) => t.inputSchema), expected.map((t) => t.inputSchema), `${name} schemas`)
  }
  await disconnect(odd)
})

await test('inline tools: null fields dropped, schemas made object schemas', async () => {
  const client = await connect('inline')
  const { tools } = await client.listTools()
  eq(tools, [
    { name: 'do.thing', inputSchema: { type: 'object', properties: { a: { type: 'string' } } } },
    { name: 'odd schema', description: 'A tool whose schema is not an object schema.', inputSchema: { type: 'object', properties: {} } },
  ], 'inline tools')
  eq(textOf(await client.callTool({ name: 'odd schema', arguments: {} })), 'FLEET_OK inline odd schema {}', 'odd-name call')
  await disconnect(client)
})

await test('tools/call answers FLEET_OK and logs the call', async () => {
  const result = await git.callTool({ name: 'git_status', arguments: { repo_path: '/tmp/r', n: 1 } })
  eq(textOf(result), 'FLEET_OK git.local git_status {"repo_path":"/tmp/r","n":1}', 'answer')
  assert(!result.isError, 'isError set')
  const last = logLines(LOG).at(-1)
  eq({ ...last, t: typeof last.t }, { t: 'number', server: 'git.local', tool: 'git_status', args: { repo_path: '/tmp/r', n: 1 }, session: git.transport.sessionId }, 'log line')
})

await test('an unknown tool answers isError', async () => {
  const result = await git.callTool({ name: 'no_such_tool', arguments: {} })
  eq(result, { isError: true, content: [{ type: 'text', text: 'unknown tool no_such_tool' }] }, 'result')
})

await test('add / remove send notifications/tools/list_changed', async () => {
  // The notification rides the session's GET stream, which the client opens just after connect.
  await waitFor('the GET stream of time', async () => (await state()).time.listening === 1)
  const added = await control({ endpoint: 'time', action: 'add', tool: { name: 'fresh_tool', description: 'New.', inputSchema: { type: 'object', properties: {} } } })
  eq(added, { ok: true, tools: 4, notified: 1, listening: 1 }, 'add answer')
  await waitFor('list_changed after add', () => time.listChanged === 1)
  assert((await time.listTools()).tools.some((t) => t.name === 'fresh_tool'), 'fresh_tool missing from the re-list')
  const removed = await control({ endpoint: 'time', action: 'remove', name: 'fresh_tool' })
  eq(removed, { ok: true, tools: 3, removed: true, notified: 1, listening: 1 }, 'remove answer')
  await waitFor('list_changed after remove', () => time.listChanged === 2)
  assert(!(await time.listTools()).tools.some((t) => t.name === 'fresh_tool'), 'fresh_tool still listed')
  eq(git.listChanged, 0, 'notifications on another endpoint')
})

await test('down → connect fails with 503; up → works; down closes open sessions', async () => {
  const error = await connect('late').then(() => null, (e) => e)
  assert(error, 'connect to a down server succeeded')
  eq(error.code, 503, `error code (${error.message})`)
  eq((await control({ endpoint: 'late', action: 'up' })).ok, true, 'up')
  const client = await connect('late')
  eq((await client.listTools()).tools.map((t) => t.name), fleet.get('calculator').tools.map((t) => t.name), 'late tools')
  eq(await control({ endpoint: 'late', action: 'down' }), { ok: true, tools: 1, closed: 1 }, 'down answer')
  const listError = await client.listTools().then(() => null, (e) => e)
  eq(listError?.code, 503, 'an open session of a down server')
  await control({ endpoint: 'late', action: 'up' })
  const again = await client.listTools().then(() => null, (e) => e)
  eq(again?.code, 404, 'the old session after up (must initialize again)')
  await client.close()
  const fresh = await connect('late')
  await fresh.listTools()
  await disconnect(fresh)
})

await test('hang-list → listTools times out; calls still work; the hung handler is released', async () => {
  await control({ endpoint: 'time', action: 'hang-list', on: true })
  const t0 = Date.now()
  const error = await time.listTools({}, { timeout: 1000 }).then(() => null, (e) => e)
  assert(error, 'listTools answered while hanging')
  eq(error.code, ErrorCode.RequestTimeout, `error code (${error.message})`)
  assert(Date.now() - t0 >= 900, 'timed out too early')
  eq(textOf(await time.callTool({ name: 'get_current_time', arguments: { timezone: 'UTC' } })), 'FLEET_OK time get_current_time {"timezone":"UTC"}', 'call while hanging')
  // The client's notifications/cancelled reaches the server and ends the handler.
  await waitFor('the hung list to be released', async () => (await state()).time.pending === 0, 1500)
  await control({ endpoint: 'time', action: 'hang-list', on: false })
  eq((await time.listTools()).tools.length, 3, 'list after hang-list off')
})

await test('delay → calls answer late; a cancelled or dropped call stops waiting', async () => {
  eq(await control({ endpoint: 'time', action: 'delay', ms: 400 }), { ok: true, tools: 3, callDelayMs: 400 }, 'delay answer')
  const t0 = Date.now()
  await time.callTool({ name: 'get_current_time', arguments: {} })
  assert(Date.now() - t0 >= 380, `answered after ${Date.now() - t0} ms`)
  await control({ endpoint: 'time', action: 'delay', ms: 8000 })
  const error = await time.callTool({ name: 'get_current_time', arguments: {} }, undefined, { timeout: 300 }).then(() => null, (e) => e)
  eq(error?.code, ErrorCode.RequestTimeout, 'timed-out call')
  await waitFor('the cancelled call to stop', async () => (await state()).time.pending === 0, 1500)
  // A client that goes away mid-call (closes its HTTP connection, sends no cancel).
  const leaver = await connect('time')
  const call = leaver.callTool({ name: 'get_current_time', arguments: {} }).catch((e) => e)
  await waitFor('the call to be waiting', async () => (await state()).time.pending === 1, 1500)
  await leaver.close()
  notes.push(`client.close() mid-call: the pending callTool rejects with ${JSON.stringify(String(await call))}`)
  await waitFor('the dropped call to stop', async () => (await state()).time.pending === 0, 1500)
  await control({ endpoint: 'time', action: 'delay', ms: 0 })
})

await test('DELETE ends a session; sessions per endpoint are bounded (oldest evicted)', async () => {
  const before = (await sessions()).time
  await disconnect(time)
  eq((await sessions()).time, before - 1, 'time sessions after DELETE')
  const ids = []
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }
  for (let i = 0; i < 10; i++) {
    const response = await fetch(ready.servers.crowd, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(init) })
    await response.text()
    ids.push(response.headers.get('mcp-session-id'))
  }
  eq((await sessions()).crowd, 8, 'crowd sessions with --max-sessions 8')
  const probe = (id) => fetch(ready.servers.crowd, { method: 'DELETE', headers: { 'mcp-session-id': id } }).then((r) => r.status)
  eq(await probe(ids[0]), 404, 'the oldest session')
  for (const id of ids.slice(2)) eq(await probe(id), 200, 'DELETE of a kept session')
  eq((await sessions()).crowd, 0, 'crowd sessions after DELETEs')
})

await test('bounds: 1 MiB body → 413; foreign Host → 403; unknown endpoint → 404', async () => {
  const big = await fetch(ready.servers.inline, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: `"${'x'.repeat(1.5 * 1024 * 1024)}"` })
  eq(big.status, 413, 'big body')
  const status = await new Promise((resolve, reject) => {
    http.get(`${base}/debug/sessions`, { headers: { host: 'evil.example' } }, (res) => resolve(res.statusCode) || res.resume()).on('error', reject)
  })
  eq(status, 403, 'foreign Host')
  eq((await fetch(`${base}/mcp/nope`, { method: 'POST' })).status, 404, 'unknown endpoint')
  eq((await control({ endpoint: 'nope', action: 'up' })).ok, false, 'control of an unknown endpoint')
})

await test('no session leaks; SIGTERM exits 0', async () => {
  await disconnect(git)
  // leaver closed without DELETE: its session stays until evicted, as with a vanished client.
  const open = await sessions()
  eq(open, { time: 1, 'git.local': 0, [ODD]: 0, inline: 0, late: 0, crowd: 0 }, 'open sessions')
  host.kill('SIGTERM')
  const exit = await Promise.race([hostExit, sleep(3000).then(() => ({ code: 'still running' }))])
  eq(exit, { code: 0, signal: null }, 'exit')
  children.delete(host)
})

await test(`all ${fleet.size} fleet servers list and answer through the SDK client`, async () => {
  // The SDK client rejects a whole tools/list over one malformed tool: every list must pass its schema.
  const all = await startHost('all', { servers: [...fleet.keys()].map((name) => ({ endpoint: name, fleet: name })) })
  let count = 0
  for (const [name, url] of Object.entries(all.ready.servers)) {
    const client = new Client({ name: 'fleet-check', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(url)))
    const { tools } = await client.listTools()
    eq(tools.map((t) => t.name), fleet.get(name).tools.map((t) => t.name), `${name} tools`)
    count += tools.length
    const tool = tools.at(-1).name
    eq(textOf(await client.callTool({ name: tool, arguments: { q: 1 } })), `FLEET_OK ${name} ${tool} {"q":1}`, `${name} call`)
    await disconnect(client)
  }
  eq(count, [...fleet.values()].reduce((n, server) => n + server.tools.length, 0), 'tools listed')
  all.child.kill('SIGTERM')
  eq((await all.exit).code, 0, 'exit')
  children.delete(all.child)
})

// --- stdio.mjs --------------------------------------------------------------------------------

const CRASH = 'vault_rotate_signing_keys'
await test('stdio: lists the fleet tools plus the crash tool, calls, logs', async () => {
  const transport = new StdioClientTransport({ command: process.execPath, args: [join(here, 'stdio.mjs'), 'time', '--crash-tool', CRASH], env: { QA_FLEET_LOG: STDIO_LOG }, stderr: 'pipe' })
  const client = new Client({ name: 'fleet-check', version: '1.0.0' })
  let closed = false
  client.onclose = () => (closed = true)
  await client.connect(transport)
  const { tools } = await client.listTools()
  eq(tools.map((t) => t.name), [...fleet.get('time').tools.map((t) => t.name), CRASH], 'tool names')
  eq(tools.at(-1).description, 'Rotate the signing keys of the deployment vault now (irreversible).', 'crash tool description')
  eq(textOf(await client.callTool({ name: 'convert_time', arguments: { time: '10:00' } })), 'FLEET_OK time convert_time {"time":"10:00"}', 'answer')
  const t0 = Date.now()
  const error = await client.callTool({ name: CRASH, arguments: { marker: 'm1' } }).then(() => null, (e) => e)
  assert(error, 'the crash call answered')
  notes.push(`stdio server exit mid-call: callTool rejects after ${Date.now() - t0} ms with code ${error.code}: ${JSON.stringify(error.message)}`)
  eq(error.code, ErrorCode.ConnectionClosed, `error code (${error.message})`)
  await waitFor('client onclose', () => closed, 1000)
  eq(logLines(STDIO_LOG).map(({ server, tool, args }) => ({ server, tool, args })), [
    { server: 'time', tool: 'convert_time', args: { time: '10:00' } },
    { server: 'time', tool: CRASH, args: { marker: 'm1' } },
  ], 'stdio log')
  await client.close()
})

await test('stdio: the crash exits 1 with nothing but protocol on stdout', async () => {
  const child = spawn(process.execPath, [join(here, 'stdio.mjs'), 'time', '--crash-tool', CRASH], { stdio: ['pipe', 'pipe', 'pipe'], env: {} })
  children.add(child)
  let stdout = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  const exit = new Promise((resolve) => child.on('exit', (code) => resolve(code)))
  const send = (message) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`)
  send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })
  // Wait for the answer as a client would: a crash in the same tick would beat it to stdout.
  await waitFor('the initialize answer', () => stdout.includes('\n'), 3000)
  send({ method: 'notifications/initialized' })
  send({ id: 2, method: 'tools/call', params: { name: CRASH, arguments: { marker: 'raw' } } })
  eq(await Promise.race([exit, sleep(3000).then(() => 'still running')]), 1, 'exit code')
  children.delete(child)
  const lines = stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line))
  eq(lines.map((m) => m.id), [1], 'answered ids (only initialize)')
  const bad = spawn(process.execPath, [join(here, 'stdio.mjs'), 'no-such-server'], { stdio: 'ignore' })
  eq(await new Promise((resolve) => bad.on('exit', resolve)), 2, 'exit code for an unknown fleet name')
})

clearTimeout(watchdog)
for (const child of children) child.kill('SIGKILL')
rmSync(dir, { recursive: true, force: true })
for (const note of notes) console.log(`note ${note}`)
console.log(`${passed} passed, ${failed} failed (${((Date.now() - started) / 1000).toFixed(1)} s)`)
process.exit(failed ? 1 : 0)

#!/usr/bin/env node
// Hosts many MCP servers of the fleet (servers.json) in one process over streamable HTTP, for the
// OpenClaw QA: each endpoint /mcp/<encodeURIComponent(endpoint)> is its own MCP server with its
// own tool list and faults, driven at run time through POST /control.
//
//   node qa/openclaw/fleet/host.mjs --config <file.json> [--log <calls.jsonl>] [--max-sessions 64]
//
// Config: { "servers": [ { "endpoint": "name-in-url", "fleet": "<servers.json name>", "tools": [..],
//   "down": false, "hangList": false, "callDelayMs": 0 } ] } (tools: the fleet's, then inline ones).
// Prints one JSON line when listening: { "url": "http://127.0.0.1:PORT", "servers": { endpoint: url } }.
// Stateful sessions (one SDK Server per session), because only a session has the standalone GET
// SSE stream that carries notifications/tools/list_changed; a stateless server cannot push.
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import http from 'node:http'
import { parseArgs } from 'node:util'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { CallToolRequestSchema, isInitializeRequest, isJSONRPCRequest, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { loadFleet, logCall, normalizeTool, okResult, unknownTool } from './lib.mjs'

const MAX_BODY = 1024 * 1024 // bytes of one request body (MCP or control)
const MAX_DELAY_MS = 10 * 60_000

const { values: opts } = parseArgs({
  options: { config: { type: 'string' }, log: { type: 'string' }, 'max-sessions': { type: 'string', default: '64' }, verbose: { type: 'boolean', default: false } },
})
const fail = (message) => {
  process.stderr.write(`fleet host: ${message}\n`)
  process.exit(2)
}
if (!opts.config) fail('usage: node host.mjs --config <file.json> [--log <calls.jsonl>] [--max-sessions N]')
const MAX_SESSIONS = Number(opts['max-sessions'])
if (!Number.isInteger(MAX_SESSIONS) || MAX_SESSIONS < 1) fail('--max-sessions must be a positive integer')
const LOG = opts.log
const warn = (message) => opts.verbose && process.stderr.write(`fleet host: ${message}\n`)

/** Endpoint name → { name, tools, down, hangList, callDelayMs, sessions: Map<id, session>, pending }. */
const endpoints = new Map()
{
  let config
  try {
    config = JSON.parse(readFileSync(opts.config, 'utf8'))
  } catch (error) {
    fail(`cannot read ${opts.config}: ${error.message}`)
  }
  if (!Array.isArray(config?.servers)) fail('config needs a "servers" array')
  const fleet = loadFleet()
  for (const entry of config.servers) {
    const name = entry.endpoint ?? entry.fleet
    if (typeof name !== 'string' || name === '') fail(`every server needs an "endpoint": ${JSON.stringify(entry)}`)
    if (endpoints.has(name)) fail(`endpoint ${name} twice`)
    if (entry.fleet !== undefined && !fleet.has(entry.fleet)) fail(`no fleet server ${JSON.stringify(entry.fleet)} in servers.json`)
    if (entry.tools !== undefined && !Array.isArray(entry.tools)) fail(`endpoint ${name}: "tools" must be an array`)
    let tools
    try {
      tools = [...(entry.fleet ? fleet.get(entry.fleet).tools : []), ...(entry.tools ?? [])].map(normalizeTool)
    } catch (error) {
      fail(`endpoint ${name}: ${error.message}`)
    }
    endpoints.set(name, {
      name,
      tools,
      down: entry.down === true,
      hangList: entry.hangList === true,
      callDelayMs: clampDelay(entry.callDelayMs ?? 0),
      sessions: new Map(),
      pending: 0,
    })
  }
}

function clampDelay(ms) {
  const n = Number(ms)
  return Number.isFinite(n) && n > 0 ? Math.min(n, MAX_DELAY_MS) : 0
}

/** Resolves after ms, or rejects as soon as signal aborts (the client cancelled or went away). */
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal.reason)
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * One MCP session: its own SDK Server and transport. Its handlers read the endpoint's state at
 * request time, so control actions apply to open sessions at once.
 */
function newSession(ep) {
  const session = { id: undefined, created: Date.now(), gets: 0, inflight: new Map() }
  session.transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: randomUUID,
    onsessioninitialized: (id) => {
      session.id = id
      // Clients that vanish without DELETE would otherwise pile up: keep the newest MAX_SESSIONS.
      while (ep.sessions.size >= MAX_SESSIONS) closeSession(ep.sessions.values().next().value)
      ep.sessions.set(id, session)
    },
  })
  const server = new Server({ name: ep.name, version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } })
  session.server = server
  // The SDK aborts extra.signal on notifications/cancelled and on transport close, but not when the
  // HTTP response carrying the request is dropped; the tracked per-request controller covers that.
  const signalOf = (extra) => {
    const dropped = session.inflight.get(extra.requestId)?.signal
    return dropped ? AbortSignal.any([extra.signal, dropped]) : extra.signal
  }
  server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => {
    if (!ep.hangList) return { tools: ep.tools }
    // Never answer; give the handler up when the client does, so nothing piles up.
    ep.pending++
    try {
      const signal = signalOf(extra)
      await new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', resolve, { once: true })))
      throw new Error('tools/list abandoned by the client')
    } finally {
      ep.pending--
    }
  })
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args = {} } = request.params
    logCall(LOG, { server: ep.name, tool: name, args, session: session.id })
    if (!ep.tools.some((tool) => tool.name === name)) return unknownTool(name)
    if (ep.callDelayMs > 0) {
      ep.pending++
      try {
        await sleep(ep.callDelayMs, signalOf(extra))
      } finally {
        ep.pending--
      }
    }
    return okResult(ep.name, name, args)
  })
  // Server.onclose runs once the transport closes, whichever way (DELETE, eviction, down, exit).
  server.onclose = () => {
    if (session.id !== undefined && ep.sessions.get(session.id) === session) ep.sessions.delete(session.id)
    for (const controller of session.inflight.values()) controller.abort()
    session.inflight.clear()
  }
  server.onerror = (error) => warn(`${ep.name} ${session.id ?? '(new)'}: ${error.message}`)
  return session
}

function closeSession(session) {
  session.server.close().catch(() => {})
}

/** Ties each JSON-RPC request of a POST to its HTTP response: a dropped response aborts its handler. */
function trackRequests(session, body, res) {
  for (const message of [body].flat()) {
    if (!isJSONRPCRequest(message)) continue
    const controller = new AbortController()
    session.inflight.set(message.id, controller)
    res.on('close', () => {
      if (!res.writableFinished) controller.abort(new Error('HTTP response closed before the answer'))
      if (session.inflight.get(message.id) === controller) session.inflight.delete(message.id)
    })
  }
}

const sendJson = (res, status, value, headers = {}) => {
  if (res.headersSent) return res.end()
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(value))
}
const rpcError = (res, status, code, message) => sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null })

/** The request body as JSON, or undefined after answering 413 / 400 itself. */
async function readJson(req, res) {
  if (Number(req.headers['content-length']) > MAX_BODY) {
    rpcError(res, 413, -32000, `request body over ${MAX_BODY} bytes`)
    req.destroy()
    return undefined
  }
  const chunks = []
  let size = 0
  for await (const chunk of req) {
    size += chunk.length
    if (size > MAX_BODY) {
      rpcError(res, 413, -32000, `request body over ${MAX_BODY} bytes`)
      req.destroy()
      return undefined
    }
    chunks.push(chunk)
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'))
  } catch {
    rpcError(res, 400, -32700, 'Parse error: invalid JSON')
    return undefined
  }
}

async function handleMcp(ep, req, res) {
  // A down server refuses everything, as a server that has not started yet would.
  if (ep.down) return rpcError(res, 503, -32000, `server ${ep.name} is down`)
  const sessionId = req.headers['mcp-session-id']
  const session = sessionId === undefined ? undefined : ep.sessions.get(sessionId)
  if (sessionId !== undefined && !session) return rpcError(res, 404, -32001, 'Session not found')
  if (req.method === 'POST') {
    const body = await readJson(req, res)
    if (body === undefined) return
    if (session) {
      trackRequests(session, body, res)
      return session.transport.handleRequest(req, res, body)
    }
    if (![body].flat().some(isInitializeRequest)) return rpcError(res, 400, -32000, 'Bad Request: No valid session ID provided')
    const fresh = newSession(ep)
    await fresh.server.connect(fresh.transport)
    await fresh.transport.handleRequest(req, res, body)
    // The transport refused the initialize (bad headers, batch...): drop it, it has no session.
    if (fresh.transport.sessionId === undefined) closeSession(fresh)
    return
  }
  if (req.method === 'GET' || req.method === 'DELETE') {
    if (!session) return rpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required')
    if (req.method === 'GET') {
      // Counted so /debug/state can tell whether a session would receive list_changed now.
      session.gets++
      res.on('close', () => session.gets--)
    }
    return session.transport.handleRequest(req, res)
  }
  res.setHeader('allow', 'GET, POST, DELETE')
  return rpcError(res, 405, -32000, 'Method not allowed')
}

async function notifyListChanged(ep) {
  const sessions = [...ep.sessions.values()]
  // Without an open GET stream the SDK drops the notification silently (no event store).
  await Promise.all(sessions.map((session) => session.server.sendToolListChanged().catch((error) => warn(`notify ${ep.name}: ${error.message}`))))
  return { notified: sessions.length, listening: sessions.filter((session) => session.gets > 0).length }
}

async function handleControl(req, res) {
  const body = await readJson(req, res)
  if (body === undefined) return
  const ep = endpoints.get(body?.endpoint)
  if (!ep) return sendJson(res, 404, { ok: false, error: `no endpoint ${JSON.stringify(body?.endpoint)}` })
  let extra = {}
  switch (body.action) {
    case 'add': {
      let tool
      try {
        tool = normalizeTool(body.tool)
      } catch (error) {
        return sendJson(res, 400, { ok: false, error: error.message })
      }
      // Same name replaces (a server updating a tool); a new array so in-flight lists keep theirs.
      const index = ep.tools.findIndex((existing) => existing.name === tool.name)
      ep.tools = index < 0 ? [...ep.tools, tool] : ep.tools.map((existing, i) => (i === index ? tool : existing))
      extra = await notifyListChanged(ep)
      break
    }
    case 'remove': {
      const before = ep.tools.length
      ep.tools = ep.tools.filter((tool) => tool.name !== body.name)
      extra = { removed: ep.tools.length < before, ...(await notifyListChanged(ep)) }
      break
    }
    case 'down': {
      // The server is gone: its sessions and streams end too; a client must initialize again.
      ep.down = true
      const sessions = [...ep.sessions.values()]
      for (const session of sessions) closeSession(session)
      extra = { closed: sessions.length }
      break
    }
    case 'up':
      ep.down = false
      break
    case 'hang-list':
      ep.hangList = body.on !== false
      break
    case 'delay':
      ep.callDelayMs = clampDelay(body.ms)
      extra = { callDelayMs: ep.callDelayMs }
      break
    default:
      return sendJson(res, 400, { ok: false, error: `unknown action ${JSON.stringify(body.action)}` })
  }
  sendJson(res, 200, { ok: true, tools: ep.tools.length, ...extra })
}

let allowedHosts = new Set()
const httpServer = http.createServer((req, res) => {
  route(req, res).catch((error) => {
    warn(`${req.method} ${req.url}: ${error.stack ?? error}`)
    if (!res.headersSent) rpcError(res, 500, -32603, 'Internal server error')
    else res.destroy()
  })
})

async function route(req, res) {
  // Loopback only, and a Host check against DNS rebinding from a browser on this machine.
  if (!allowedHosts.has(req.headers.host)) return sendJson(res, 403, { ok: false, error: 'forbidden host' })
  const { pathname } = new URL(req.url, 'http://127.0.0.1')
  if (pathname.startsWith('/mcp/')) {
    let name
    try {
      name = decodeURIComponent(pathname.slice('/mcp/'.length))
    } catch {
      return rpcError(res, 400, -32000, 'bad endpoint name')
    }
    const ep = endpoints.get(name)
    if (!ep) return rpcError(res, 404, -32000, `no endpoint ${name}`)
    return handleMcp(ep, req, res)
  }
  if (pathname === '/control' && req.method === 'POST') return handleControl(req, res)
  if (pathname === '/debug/sessions' && req.method === 'GET') {
    return sendJson(res, 200, Object.fromEntries([...endpoints.values()].map((ep) => [ep.name, ep.sessions.size])))
  }
  if (pathname === '/debug/state' && req.method === 'GET') {
    const state = (ep) => ({
      sessions: ep.sessions.size,
      listening: [...ep.sessions.values()].filter((session) => session.gets > 0).length,
      pending: ep.pending,
      tools: ep.tools.length,
      down: ep.down,
      hangList: ep.hangList,
      callDelayMs: ep.callDelayMs,
    })
    return sendJson(res, 200, Object.fromEntries([...endpoints.values()].map((ep) => [ep.name, state(ep)])))
  }
  return sendJson(res, 404, { ok: false, error: 'not found' })
}

httpServer.on('clientError', (_error, socket) => socket.destroy())
httpServer.listen(0, '127.0.0.1', () => {
  const { port } = httpServer.address()
  allowedHosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`])
  const url = `http://127.0.0.1:${port}`
  const servers = Object.fromEntries([...endpoints.keys()].map((name) => [name, `${url}/mcp/${encodeURIComponent(name)}`]))
  process.stdout.write(`${JSON.stringify({ url, servers })}\n`)
})

let stopping = false
async function shutdown() {
  if (stopping) return
  stopping = true
  setTimeout(() => process.exit(0), 2000).unref() // a stuck close must not keep the QA waiting
  httpServer.close()
  const sessions = [...endpoints.values()].flatMap((ep) => [...ep.sessions.values()])
  await Promise.allSettled(sessions.map((session) => session.server.close()))
  httpServer.closeAllConnections()
  process.exit(0)
}
process.on('SIGTERM', shutdown)
process.on('SIGINT', shutdown)

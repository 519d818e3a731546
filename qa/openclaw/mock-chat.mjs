#!/usr/bin/env node
// Mock OpenAI chat-completions provider for the OpenClaw QA: a real HTTP server on 127.0.0.1, run
// as its own process. OpenClaw's `openai-completions` providers call POST /v1/chat/completions
// with `stream: true` (JSON without it is served too). The answers come from scripted-chat.mjs.
//
//   node qa/openclaw/mock-chat.mjs
// Prints one JSON line `{"event":"listening","url":…,"canaryPort":…}` on stdout, then nothing.
// Exits on SIGTERM/SIGINT and when its stdin closes.
//
// GET /debug/requests?marker=<m>: every request of the scenario with that marker
//   `[{ n, bytes, tools, toolNames, note, reply }]`; GET /debug/canary: connections the canary port
//   accepted (a code cell must never reach it).
import http from 'node:http'
import net from 'node:net'
import { decide, scenarioOf } from './scripted-chat.mjs'

const MAX_BODY = 64 * 1024 * 1024
const requests = []
let canaryConnections = 0

const canary = net.createServer((socket) => {
  canaryConnections += 1
  socket.destroy()
})

function send(res, status, body) {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

function reply(res, body, decision, n) {
  const id = `chatcmpl-qa-${n}`
  const created = Math.floor(Date.now() / 1000)
  const model = body.model ?? 'qa-model'
  const prompt = Math.ceil(JSON.stringify(body).length / 4)
  const usage = { prompt_tokens: prompt, completion_tokens: 10, total_tokens: prompt + 10 }
  const toolCalls = (decision.toolCalls ?? []).map((call, i) => ({ id: `call_qa${n}x${i}`, ...call }))
  const finish = toolCalls.length > 0 ? 'tool_calls' : 'stop'
  if (!body.stream) {
    const message = { role: 'assistant', content: decision.content ?? null }
    if (toolCalls.length > 0) {
      message.tool_calls = toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }))
    }
    return send(res, 200, { id, object: 'chat.completion', created, model, choices: [{ index: 0, message, finish_reason: finish }], usage })
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
  const chunk = (choices, extra = {}) => res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices, ...extra })}\n\n`)
  chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }])
  if (decision.content) chunk([{ index: 0, delta: { content: decision.content }, finish_reason: null }])
  toolCalls.forEach((call, index) => {
    chunk([{ index: 0, delta: { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }, finish_reason: null }])
    chunk([{ index: 0, delta: { tool_calls: [{ index, function: { arguments: call.arguments } }] }, finish_reason: null }])
  })
  chunk([{ index: 0, delta: {}, finish_reason: finish }])
  chunk([], { usage })
  res.write('data: [DONE]\n\n')
  res.end()
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1')
  const chunks = []
  let size = 0
  req.on('data', (chunk) => {
    size += chunk.length
    if (size <= MAX_BODY) chunks.push(chunk)
  })
  req.on('end', () => {
    if (req.method === 'GET' && url.pathname === '/debug/requests') {
      const marker = url.searchParams.get('marker')
      return send(res, 200, requests.filter((r) => !marker || r.marker === marker))
    }
    if (req.method === 'GET' && url.pathname === '/debug/canary') return send(res, 200, { connections: canaryConnections })
    if (req.method === 'GET' && url.pathname === '/v1/models') {
      return send(res, 200, { object: 'list', data: [{ id: 'qa-model', object: 'model', created: 0, owned_by: 'qa' }] })
    }
    if (req.method !== 'POST' || url.pathname !== '/v1/chat/completions') {
      return send(res, 404, { error: { message: `no route ${req.method} ${url.pathname}`, type: 'invalid_request_error' } })
    }
    if (size > MAX_BODY) return send(res, 413, { error: { message: 'request too large', type: 'invalid_request_error' } })
    let body
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    } catch {
      return send(res, 400, { error: { message: 'invalid JSON', type: 'invalid_request_error' } })
    }
    const decision = decide(body, { canaryPort: canary.address()?.port })
    const toolNames = (body.tools ?? []).map((t) => t?.function?.name).filter(Boolean)
    const n = requests.length + 1
    requests.push({
      n,
      marker: scenarioOf(body.messages ?? [])?.marker,
      bytes: size,
      tools: toolNames.length,
      toolNames,
      note: decision.note,
      reply: decision.content ? { content: decision.content } : { toolCalls: decision.toolCalls.map((c) => c.name) },
    })
    reply(res, body, decision, n)
  })
})

canary.listen(0, '127.0.0.1', () => {
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address()
    process.stdout.write(`${JSON.stringify({ event: 'listening', url: `http://127.0.0.1:${port}`, canaryPort: canary.address().port })}\n`)
  })
})
const stop = () => {
  server.close()
  canary.close()
  process.exit(0)
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
process.stdin.on('end', stop)
process.stdin.resume()

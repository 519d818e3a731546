#!/usr/bin/env node
// A stdio MCP server for the OpenClaw QA (newline-delimited JSON-RPC 2.0, no dependencies):
// three tools, each `{ marker: string }`, answering `FAKE_MCP_OK <tool> <json args>`. OpenClaw
// catalogs them as `mcp:qa_tracker:qa_tracker__<tool>`. Every message is appended to the file in
// $QA_MCP_LOG when set (OpenClaw passes a server only the env its config names).
import { appendFileSync } from 'node:fs'
import readline from 'node:readline'

const LOG = process.env.QA_MCP_LOG
const log = (direction, message) => {
  if (LOG) appendFileSync(LOG, `${direction} ${JSON.stringify(message)}\n`)
}
const MARKER_SCHEMA = {
  type: 'object',
  properties: { marker: { type: 'string', description: 'Marker echoed back' } },
  required: ['marker'],
  additionalProperties: false,
}
/** A schema nested `levels` objects deep. */
function nested(levels) {
  let schema = { type: 'string' }
  for (let i = 0; i < levels; i++) schema = { type: 'object', properties: { next: schema } }
  return schema
}
const TOOLS = [
  ['tracker_search_issues', 'Search the issue tracker for issues matching a text query.'],
  ['tracker_link_pull_request', 'Link a pull request to a tracker issue.'],
  ['tracker_close_issue', 'Close an issue in the tracker with a resolution note.'],
].map(([name, description]) => ({ name, description, inputSchema: MARKER_SCHEMA }))
// QA_MCP_ODD=1: two tools a hostile server could send, which the native catalog refuses as given:
// a name with a zero-width space, and an input schema nested about 200 JSON levels deep.
if (process.env.QA_MCP_ODD === '1') {
  TOOLS.push(
    { name: 'tracker_export\u200Breport', description: 'Export a burndown report of the sprint as a spreadsheet.', inputSchema: MARKER_SCHEMA },
    { name: 'tracker_deep_lookup', description: 'Look up the escalation chain of an incident.', inputSchema: { type: 'object', properties: { marker: { type: 'string' }, chain: nested(100) }, required: ['marker'] } },
  )
}

const send = (message) => {
  log('>', message)
  process.stdout.write(`${JSON.stringify(message)}\n`)
}
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  let message
  try {
    message = JSON.parse(line)
  } catch {
    return
  }
  log('<', message)
  const { id, method, params } = message
  if (id === undefined) return
  if (method === 'initialize') {
    return send({ jsonrpc: '2.0', id, result: { protocolVersion: params?.protocolVersion ?? '2025-06-18', capabilities: { tools: { listChanged: false } }, serverInfo: { name: 'qa-tracker', version: '1.0.0' } } })
  }
  if (method === 'ping') return send({ jsonrpc: '2.0', id, result: {} })
  if (method === 'tools/list') return send({ jsonrpc: '2.0', id, result: { tools: TOOLS } })
  if (method === 'tools/call') {
    const tool = TOOLS.find((t) => t.name === params?.name)
    if (!tool) return send({ jsonrpc: '2.0', id, error: { code: -32602, message: `unknown tool ${params?.name}` } })
    return send({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: `FAKE_MCP_OK ${tool.name} ${JSON.stringify(params?.arguments ?? {})}` }], isError: false } })
  }
  send({ jsonrpc: '2.0', id, error: { code: -32601, message: `method not found: ${method}` } })
})

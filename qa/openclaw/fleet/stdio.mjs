#!/usr/bin/env node
// One fleet server (servers.json) as a stdio MCP server, for the OpenClaw QA.
//
//   node qa/openclaw/fleet/stdio.mjs <fleet server name> [--crash-tool <tool name>]
//
// tools/call answers `FLEET_OK <fleet name> <tool> <json args>` and appends a line to $QA_FLEET_LOG
// when set (OpenClaw passes a stdio server only the env its config names). With --crash-tool, an
// extra tool of that name logs its call and then exits the process with code 1 without answering:
// a server crashing in the middle of a call. stdout carries protocol only; diagnostics go to stderr.
import { parseArgs } from 'node:util'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { loadFleet, logCall, normalizeTool, okResult, unknownTool } from './lib.mjs'

const { values: opts, positionals } = parseArgs({ options: { 'crash-tool': { type: 'string' } }, allowPositionals: true })
const name = positionals[0]
const entry = name === undefined ? undefined : loadFleet().get(name)
if (!entry || positionals.length !== 1) {
  process.stderr.write(`usage: node stdio.mjs <fleet server name> [--crash-tool <tool name>]${name ? `\nno fleet server ${JSON.stringify(name)}` : ''}\n`)
  process.exit(2)
}
const crashTool = opts['crash-tool']
const tools = entry.tools.map(normalizeTool)
if (crashTool !== undefined) {
  tools.push({
    name: crashTool,
    description: 'Rotate the signing keys of the deployment vault now (irreversible).',
    inputSchema: { type: 'object', properties: { marker: { type: 'string' } } },
  })
}
const LOG = process.env.QA_FLEET_LOG
const session = `stdio-${process.pid}`

const server = new Server({ name, version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } })
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }))
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const { name: tool, arguments: args = {} } = request.params
  logCall(LOG, { server: name, tool, args, session })
  if (tool === crashTool) process.exit(1) // the log line is on disk (sync append); no answer goes out
  if (!tools.some((t) => t.name === tool)) return unknownTool(tool)
  return okResult(name, tool, args)
})
server.onerror = (error) => process.stderr.write(`fleet stdio ${name}: ${error.message}\n`)
// The client closing stdin is the end of the session (the SDK transport does not watch for it).
process.stdin.on('end', () => process.exit(0))
process.stdout.on('error', () => process.exit(0)) // client gone: EPIPE
await server.connect(new StdioServerTransport())

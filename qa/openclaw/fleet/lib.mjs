// Shared by host.mjs and stdio.mjs: the fleet's tool lists as served, and the canned answers.
import { appendFileSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))

let fleet
/** servers.json as a Map name → server, read once. */
export function loadFleet() {
  if (!fleet) {
    const { servers } = JSON.parse(readFileSync(join(here, 'servers.json'), 'utf8'))
    fleet = new Map(servers.map((server) => [server.name, server]))
  }
  return fleet
}

const isPlainObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value)

/**
 * A tool as tools/list sends it. The SDK's client rejects a whole list whose tool has a null
 * description or an inputSchema that is not `type: "object"`, so one odd tool (inline configs,
 * `add`) must not take the server's list down: null fields go, a schema without a type but with
 * properties gets `type: "object"`, anything else becomes an open object schema. Nulls inside
 * schemas (224 `default: null` in servers.json) are valid JSON Schema and are kept as given.
 */
export function normalizeTool(tool) {
  if (!isPlainObject(tool) || typeof tool.name !== 'string' || tool.name === '') throw new Error('a tool needs a non-empty string name')
  const out = {}
  for (const [key, value] of Object.entries(tool)) if (value !== null && value !== undefined) out[key] = value
  if (out.description !== undefined && typeof out.description !== 'string') out.description = String(out.description)
  const schema = out.inputSchema
  if (isPlainObject(schema) && schema.type === 'object') out.inputSchema = schema
  else if (isPlainObject(schema) && schema.type === undefined && isPlainObject(schema.properties)) out.inputSchema = { type: 'object', ...schema }
  else out.inputSchema = { type: 'object', properties: {} }
  return out
}

/** The answer of every fleet tool: which server and tool ran, with which arguments. */
export const okResult = (server, tool, args) => ({ content: [{ type: 'text', text: `FLEET_OK ${server} ${tool} ${JSON.stringify(args ?? {})}` }] })
export const unknownTool = (name) => ({ isError: true, content: [{ type: 'text', text: `unknown tool ${name}` }] })

/** Appends one call record; synchronous so a line is on disk before a crash or an answer. */
export function logCall(file, record) {
  if (!file) return
  try {
    appendFileSync(file, `${JSON.stringify({ t: Date.now(), ...record })}\n`)
  } catch (error) {
    process.stderr.write(`fleet: cannot append to ${file}: ${error.message}\n`)
  }
}

// What OpenClaw 2026.9.6 itself sends per Tool Search mode, measured with its own functions (no
// re-implementation): the control tools from `createToolSearchTools`, the visible tools from
// `applyToolSearchCatalog` (code, tools) or `applyToolSchemaDirectoryCatalog` (directory), and the
// prompt text from `buildToolSchemaDirectoryPrompt` (which calls `formatToolSearchCatalogDirectory`),
// which OpenClaw adds to the system prompt in every Tool Search mode once a catalog is registered.
// Plugin and MCP origin goes through OpenClaw's own `setPluginToolMeta`, as its plugin loader does.
// Tools are serialized in the OpenAI Responses shape this package's surfaces use
// ({ type, name, description, parameters, strict: false }), so both sides are counted alike.
// Needs the Node OpenClaw runs on (>= 24.16): bench/surfaces.mjs re-executes itself on it.
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

/** The chunk holding `marker` and a map of its exports' names to their aliases. */
async function chunkWith(dist, marker) {
  for (const file of readdirSync(dist)) {
    if (!file.endsWith('.mjs')) continue
    const text = readFileSync(join(dist, file), 'utf8')
    if (!text.includes(marker)) continue
    const exportLine = text.slice(text.lastIndexOf('export {'))
    const aliases = new Map([...exportLine.matchAll(/(\w+) as (\w+)/g)].map((m) => [m[1], m[2]]))
    return { module: await import(pathToFileURL(join(dist, file)).href), aliases }
  }
  throw new Error(`no OpenClaw chunk has ${marker}`)
}

function pick({ module, aliases }, name) {
  const alias = aliases.get(name)
  if (!alias || typeof module[alias] !== 'function') throw new Error(`OpenClaw does not export ${name}`)
  return module[alias]
}

/** OpenClaw's own surface functions, from the installed package's dist folder. */
export async function loadOpenClaw(packageDir) {
  const dist = join(packageDir, 'dist')
  const search = await chunkWith(dist, '//#region src/agents/tool-search.ts')
  const meta = await chunkWith(dist, '//#region src/plugins/tool-metadata.ts')
  return {
    createToolSearchTools: pick(search, 'createToolSearchTools'),
    applyToolSearchCatalog: pick(search, 'applyToolSearchCatalog'),
    applyToolSchemaDirectoryCatalog: pick(search, 'applyToolSchemaDirectoryCatalog'),
    buildToolSchemaDirectoryPrompt: pick(search, 'buildToolSchemaDirectoryPrompt'),
    createToolSearchCatalogRef: pick(search, 'createToolSearchCatalogRef'),
    addClientToolsToToolSearchCatalog: pick(search, 'addClientToolsToToolSearchCatalog'),
    setPluginToolMeta: pick(meta, 'setPluginToolMeta'),
  }
}

/** Agent tools for catalog records ({ source?, owner?, name, label?, description, inputSchema | parameters, catalogMode? }). */
function agentTools(openclaw, records) {
  return records.map((r) => {
    const source = r.source ?? 'openclaw'
    const owner = r.owner ?? 'core'
    const tool = {
      name: r.name,
      label: r.label ?? r.name,
      description: r.description ?? '',
      parameters: r.inputSchema ?? r.parameters ?? { type: 'object', properties: {} },
      execute: async () => ({ content: [{ type: 'text', text: 'ok' }] }),
      ...(r.catalogMode ? { catalogMode: r.catalogMode } : {}),
    }
    if (source === 'mcp') {
      openclaw.setPluginToolMeta(tool, { pluginId: 'bundle-mcp', mcp: { serverName: owner, safeServerName: owner, toolName: r.name, operation: `${owner}__${r.name}` } })
    } else if (owner !== 'core') {
      openclaw.setPluginToolMeta(tool, { pluginId: owner })
    }
    return tool
  })
}

const responsesShape = (tool) => ({ type: 'function', name: tool.name, description: tool.description ?? '', parameters: tool.parameters, strict: false })

/**
 * `{ tools, toolBytes, promptBytes }` of one mode, as OpenClaw builds it for a run with no context
 * size: plugin, MCP and direct-only tools go through the mode's catalog function; client tools
 * join through `addClientToolsToToolSearchCatalog` (cataloged in code and tools modes, left
 * visible in directory mode).
 */
export function openclawSurface(openclaw, records, mode) {
  const config = { tools: { toolSearch: { mode } } }
  const catalogRef = openclaw.createToolSearchCatalogRef()
  const ctx = { config, runtimeConfig: config, agentId: 'main', sessionKey: 'agent:main:bench', sessionId: 'bench', runId: 'bench', catalogRef, executeTool: async () => ({ content: [] }) }
  const controls = openclaw.createToolSearchTools(ctx)
  const apply = mode === 'directory' ? openclaw.applyToolSchemaDirectoryCatalog : openclaw.applyToolSearchCatalog
  const agent = agentTools(openclaw, records.filter((r) => r.source !== 'client'))
  const client = agentTools(openclaw, records.filter((r) => r.source === 'client'))
  const applied = apply({ tools: [...controls, ...agent], config, catalogRef, directToolNames: [] })
  const clients = openclaw.addClientToolsToToolSearchCatalog({ tools: client, config, catalogRef })
  const prompt = applied.catalogRegistered && catalogRef.current?.entries.length ? openclaw.buildToolSchemaDirectoryPrompt(ctx, {}) : ''
  const tools = [...applied.tools, ...clients.tools].map(responsesShape)
  return { tools: tools.length, toolBytes: Buffer.byteLength(JSON.stringify(tools)), promptBytes: Buffer.byteLength(prompt ?? '') }
}

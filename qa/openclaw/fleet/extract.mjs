#!/usr/bin/env node
// Writes servers.json, the MCP fleet of `pnpm qa:openclaw`'s mcp lanes, from the retrieval dev
// catalog beside the project (../shared/data/retrieval-dev/catalog.jsonl): real MCP servers' tools
// with their own names, descriptions and input schemas.
//   - every LiveMCPBench server (70 servers, their real `inputSchema`; Apache-2.0), and
//   - the 22 largest tool lists of the toolsdk MCP registry (names and descriptions only, served
//     with an open object schema; MIT), leaving out its merged `mcp` and `mcp-server` entries.
// LiveMCPBench servers are the dev catalog's MCP owners with input schemas that are not another
// labelled source's (RapidAPI, MetaTool, RestBench, tau-bench, ToolAlpaca). See LICENSE-NOTES.md.
//
//   node qa/openclaw/fleet/extract.mjs [catalog.jsonl]
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const data = join(here, '..', '..', '..', '..', 'shared', 'data', 'retrieval-dev')
const catalogFile = process.argv[2] ?? join(data, 'catalog.jsonl')
const lines = (file) => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line))
const tools = lines(catalogFile).filter((tool) => tool.source === 'mcp')
const queries = lines(join(dirname(catalogFile), 'queries.jsonl'))
const labelled = new Set(queries.filter((q) => q.set === 'toolalpaca').flatMap((q) => q.gold.map((id) => id.split(':')[1])))
for (const owner of ['metatool', 'tmdb', 'spotify', 'retail', 'airline']) labelled.add(owner)

const byOwner = new Map()
for (const tool of tools) {
  if (!byOwner.has(tool.owner)) byOwner.set(tool.owner, [])
  byOwner.get(tool.owner).push(tool)
}
const serve = (tool, schema) => ({ name: tool.name, description: tool.description ?? '', inputSchema: schema })
const live = [...byOwner]
  .filter(([owner, list]) => !owner.startsWith('rapidapi-') && !labelled.has(owner) && list.some((tool) => tool.inputSchema))
  .map(([owner, list]) => ({ name: owner, origin: 'LiveMCPBench', tools: list.map((tool) => serve(tool, tool.inputSchema ?? { type: 'object', properties: {} })) }))
const registry = [...byOwner]
  .filter(([owner, list]) => !['mcp', 'mcp-server'].includes(owner) && !labelled.has(owner) && list.every((tool) => !tool.inputSchema))
  .sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]))
  .slice(0, 22)
  .map(([owner, list]) => ({ name: owner, origin: 'toolsdk-mcp-registry', tools: list.map((tool) => serve(tool, { type: 'object', properties: {} })) }))
const servers = [...live, ...registry].sort((a, b) => a.name.localeCompare(b.name))
const count = servers.reduce((n, server) => n + server.tools.length, 0)
writeFileSync(join(here, 'servers.json'), `${JSON.stringify({ servers }, null, 0)}\n`)
console.log(`${servers.length} servers (${live.length} LiveMCPBench, ${registry.length} toolsdk registry), ${count} tools`)

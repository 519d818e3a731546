#!/usr/bin/env node
// openclaw-tool-search CLI: debug a catalog the way the model meets it.
'use strict'

const { readFileSync } = require('node:fs')
const { resolve } = require('node:path')

const USAGE = `Usage: openclaw-tool-search <command> <catalog.json|catalog.jsonl> [args] [options]

Commands:
  search   <catalog> <query>            ranked hits, as tool_search returns them
  describe <catalog> <id-or-name>       the hit plus the exact schemas
  validate <catalog> <id-or-name> <json-args>
                                        check arguments against the tool's schema
  surface  <catalog> [--mode M]         what the model sees in mode M
                                        (direct | code | tools | directory)
  stats    <catalog>                    size, sources, excluded records, fingerprint

Options:
  --limit N          search: number of hits (default 8, capped at 20 unless --max-limit)
  --max-limit N      search: raise the cap (at most 50)
  --explain ID       search: where ID ranks for the query, and why it may be missing
  --policy FILE      a JSON policy ({ agent, profile, sandbox, session, groups })
  --mode M           surface: mode (default tools)
  --format F         surface: neutral | openai-responses | openai-chat | anthropic
  --context-tokens N surface: context size that scales the directory budget
  --json             machine-readable output
  -h, --help         this text

Exit codes: 0 ok, 1 the operation failed (error code printed), 2 bad usage.`

function parseArgs(argv) {
  const positional = []
  const flags = {}
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--json' || arg === '-h' || arg === '--help') flags[arg.replace(/^-+/, '')] = true
    else if (arg.startsWith('--')) {
      const value = argv[++i]
      if (value === undefined) usage(`missing value for ${arg}`)
      flags[arg.slice(2)] = value
    } else positional.push(arg)
  }
  return { positional, flags }
}

function usage(message) {
  if (message) process.stderr.write(`openclaw-tool-search: ${message}\n\n`)
  process.stderr.write(`${USAGE}\n`)
  process.exit(2)
}

function loadCatalog(path, flags, binding) {
  const text = readFileSync(resolve(path), 'utf8')
  const options = {}
  if (flags.policy) options.policy = JSON.parse(readFileSync(resolve(flags.policy), 'utf8'))
  if (flags['max-limit']) options.maxSearchLimit = Number(flags['max-limit'])
  if (flags.explain) options.maxSearchLimit = 50 // explain looks at the top 50
  return binding.ToolCatalog.fromJson(text, options)
}

function table(rows, columns) {
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length)))
  const line = (cells) => cells.map((cell, i) => String(cell ?? '').padEnd(widths[i])).join('  ').trimEnd()
  return [line(columns), line(widths.map((w) => '-'.repeat(w))), ...rows.map((r) => line(columns.map((c) => r[c])))].join('\n')
}

function clip(text, max) {
  const flat = String(text).replace(/\s+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

function out(flags, data, human) {
  process.stdout.write(flags.json ? `${JSON.stringify(data, null, 2)}\n` : `${human()}\n`)
}

function explain(catalog, query, id) {
  const rank = catalog.search(query, { limit: 50 }).findIndex((h) => h.id === id || h.name === id)
  if (rank >= 0) return { id, rank: rank + 1, note: `ranks #${rank + 1} for this query` }
  try {
    const d = catalog.describe(id)
    return { id: d.id, rank: null, note: 'cataloged and allowed, but not in the top 50 for this query: its name, description and parameter names share too few words with the query' }
  } catch (err) {
    const excluded = catalog.excluded.find((e) => e.name === id)
    if (excluded) return { id, rank: null, note: `not cataloged: ${excluded.reason}` }
    return { id, rank: null, note: `not found in this catalog view (unknown, or removed by --policy): ${err.code}: ${err.message}` }
  }
}

function main() {
  const { positional, flags } = parseArgs(process.argv.slice(2))
  if (flags.h || flags.help) {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  const [command, catalogPath, ...rest] = positional
  if (!command) usage()
  if (!catalogPath) usage('missing the catalog file')
  const binding = require('../index.js')
  const catalog = loadCatalog(catalogPath, flags, binding)

  switch (command) {
    case 'search': {
      const query = rest.join(' ')
      if (!query) usage('missing the query')
      const limit = flags.limit === undefined ? undefined : Number(flags.limit)
      const hits = catalog.search(query, { limit })
      const why = flags.explain ? explain(catalog, query, flags.explain) : undefined
      out(flags, why ? { hits, explain: why } : hits, () => {
        const rows = hits.map((h, i) => ({ '#': i + 1, id: h.id, input: clip(h.input, 50), description: clip(h.description, 70) }))
        const text = hits.length ? table(rows, ['#', 'id', 'input', 'description']) : '(no hits: empty or all-stopword query, or nothing matches)'
        return why ? `${text}\n\nexplain ${why.id}: ${why.note}` : text
      })
      break
    }
    case 'describe': {
      if (!rest[0]) usage('missing the tool id or name')
      const d = catalog.describe(rest[0])
      out(flags, d, () => {
        const lines = [`${d.id}  (${d.source}, ${d.sourceName})`, '', d.description, '', `input: ${d.input}`]
        if (d.output) lines.push(`output: ${d.output}`)
        lines.push('', 'parameters:', JSON.stringify(d.parameters, null, 2))
        if (d.outputSchema) lines.push('', 'outputSchema:', JSON.stringify(d.outputSchema, null, 2))
        return lines.join('\n')
      })
      break
    }
    case 'validate': {
      if (!rest[0] || rest[1] === undefined) usage('validate needs a tool and JSON arguments')
      let args
      try {
        args = JSON.parse(rest.slice(1).join(' '))
      } catch (err) {
        usage(`arguments are not valid JSON: ${err.message}`)
      }
      const result = catalog.validateArgs(rest[0], args)
      out(flags, result, () =>
        result.ok ? 'ok: the arguments match the schema' : table(result.errors.map((e) => ({ path: e.path || '(root)', message: e.message })), ['path', 'message'])
      )
      if (!result.ok) process.exitCode = 1
      break
    }
    case 'surface': {
      if (typeof binding.ToolSearchSession !== 'function') throw Object.assign(new Error('this build has no ToolSearchSession'), { code: 'INTERNAL' })
      const mode = flags.mode ?? 'tools'
      const raw = mode === 'direct' ? false : { mode }
      const config = binding.resolveToolSearchConfig(raw, { codeModeSupported: true })
      const options = { executor: async () => ({}) }
      if (flags['context-tokens']) options.contextTokens = Number(flags['context-tokens'])
      const session = new binding.ToolSearchSession(catalog, config, options)
      const surface = session.surface(flags.format ?? 'neutral')
      out(flags, surface, () => {
        const names = surface.tools.map((t) => t.name ?? t.function?.name).join(', ')
        const lines = [`mode ${mode}: ${surface.tools.length} tool definitions (${surface.bytes.tools} bytes): ${clip(names, 400)}`]
        if (surface.directoryPrompt !== undefined && surface.directoryPrompt !== null) {
          lines.push(`directory prompt (${surface.bytes.directoryPrompt} bytes):`, '', surface.directoryPrompt)
        }
        return lines.join('\n')
      })
      break
    }
    case 'stats': {
      const t = catalog.telemetry()
      const data = { size: catalog.size, fingerprint: catalog.fingerprint, sources: t.sources, directOnly: catalog.directOnly.map((d) => d.name), excluded: catalog.excluded }
      out(flags, data, () => {
        const lines = [
          `tools: ${catalog.size} (openclaw ${t.sources.openclaw}, mcp ${t.sources.mcp}, client ${t.sources.client})`,
          `fingerprint: ${catalog.fingerprint}`,
          `direct-only: ${data.directOnly.length ? data.directOnly.join(', ') : 'none'}`,
          `excluded: ${catalog.excluded.length}`,
        ]
        if (catalog.excluded.length) lines.push(table(catalog.excluded.map((e) => ({ index: e.index, name: e.name ?? '', reason: e.reason })), ['index', 'name', 'reason']))
        return lines.join('\n')
      })
      break
    }
    default:
      usage(`unknown command "${command}"`)
  }
}

try {
  main()
} catch (err) {
  process.stderr.write(`openclaw-tool-search: ${err.code ? `${err.code}: ` : ''}${err.message}\n`)
  process.exit(1)
}

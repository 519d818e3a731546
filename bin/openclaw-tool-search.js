#!/usr/bin/env node
// openclaw-tool-search CLI: debug a catalog the way the model meets it.
'use strict'

const { readFileSync } = require('node:fs')
const { resolve } = require('node:path')

const USAGE = `Usage: openclaw-tool-search <command> <catalog.json|catalog.jsonl> [args] [options]

Commands:
  search   <catalog> <query>            ranked hits, as tool_search returns them (a catalog
                                        may also be a live gateway's, as \`openclaw gateway call
                                        openclaw-tool-search.catalog --json\` saves it)
  describe <catalog> <id-or-name>       the hit plus the exact schemas
  validate <catalog> <id-or-name> <json-args>
                                        check arguments against the tool's schema
  surface  <catalog> [--mode M]         what the model sees in mode M
                                        (direct | code | tools | directory)
  stats    <catalog>                    size, sources, excluded records, fingerprint
  audit    <catalog>                    which tools the model will struggle to find and why:
                                        unfindable, empty/short/copied descriptions, near-
                                        duplicates across servers, colliding names, schema
                                        size and cost; most urgent first (--limit N rows),
                                        --json for all, --html FILE for a page
  audit --report FILE                   the same from a saved audit: audit --json, or the live
                                        gateway's (openclaw gateway call openclaw-tool-search.audit
                                        --json > FILE, the plugin audits its latest run's catalog)
  explain  <catalog> <id-or-name|#N>    whether the tool (or record N) is cataloged, direct-only,
                                        excluded (and why), removed by --policy
                                        (which layer and rule) or unknown
  learning show|reset [--learning DIR]  what the gateway's learned ranking holds per scope, or
                                        forget it (all scopes; DIR: the learning folder, default
                                        the user's cache folder)

Options:
  --limit N          search: number of hits (default 8, capped at 20 unless --max-limit);
                     audit: tools listed (default 30)
  --html FILE        audit: also write an HTML page (totals, per-server bars, sortable table)
  --no-findability   audit: skip the probes (two searches a tool), static checks only
  --max-limit N      search: raise the cap (at most 50)
  --explain ID       search: where ID ranks for the query or, when it cannot
                     rank, why (as the explain command)
  --ranking R        lexical | hybrid (default: as a gateway gets it: hybrid when the
                     model package is installed); hybrid waits for the tool vectors
                     (on-disk cache; the first run of a large catalog takes a minute)
  --learning DIR     search: rank with what the gateway learned (the learning folder; with
                     --scope S for an agent's scope, default gateway); --explain shows
                     the learned part of the tool's score
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
    if (arg === '--json' || arg === '--no-findability' || arg === '-h' || arg === '--help') flags[arg.replace(/^-+/, '')] = true
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

function catalogOptions(flags) {
  const options = {}
  if (flags['max-limit']) options.maxSearchLimit = Number(flags['max-limit'])
  if (flags.explain) options.maxSearchLimit = 50 // explain looks at the top 50
  if (flags.ranking !== undefined) {
    if (flags.ranking !== 'lexical' && flags.ranking !== 'hybrid') usage('--ranking must be lexical or hybrid')
    options.ranking = flags.ranking
  }
  if (flags.learning !== undefined) options.learning = { folder: resolve(flags.learning), ...(flags.scope ? { scope: flags.scope } : {}) }
  return options
}

/** The learning folder: --learning, else where the package keeps its caches. */
function learningFolder(flags) {
  if (flags.learning) return resolve(flags.learning)
  const { join } = require('node:path')
  const env = (name) => (process.env[name] ? process.env[name] : undefined)
  if (env('OPENCLAW_TOOL_SEARCH_CACHE_DIR')) return resolve(env('OPENCLAW_TOOL_SEARCH_CACHE_DIR'))
  const base = env('XDG_CACHE_HOME') ?? (env('HOME') ? join(env('HOME'), '.cache') : undefined)
  if (!base) usage('no cache folder (HOME unset): pass --learning DIR')
  return join(base, 'openclaw-tool-search')
}

function learningCommand(action, flags, binding) {
  const folder = learningFolder(flags)
  if (action === 'show') {
    const files = binding.learningFiles(folder)
    out(flags, { folder, scopes: files }, () => {
      if (!files.length) return `nothing learned in ${folder}`
      const rows = files.map((f) => ({ scope: f.scope || '?', learned: f.learned, ignored: f.ignored, tools: f.tools, file: f.file, warning: f.warning ?? '' }))
      return `${folder}\n${table(rows, ['scope', 'learned', 'ignored', 'tools', 'file', 'warning'])}`
    })
    return
  }
  if (action === 'reset') {
    const removed = binding.resetLearningFolder(folder)
    out(flags, { folder, removed }, () => `forgot what was learned in ${folder} (${removed} file${removed === 1 ? '' : 's'} removed)`)
    return
  }
  usage('learning takes show or reset')
}

/**
 * A live gateway's catalog as `openclaw gateway call openclaw-tool-search.catalog --json` saves
 * it (`{ records, … }`): its records; any other text as it is.
 */
function liveCatalogRecords(text) {
  if (!/^\s*\{/.test(text)) return text
  try {
    const saved = JSON.parse(text)
    if (Array.isArray(saved?.records) && typeof saved.fingerprint === 'string') return JSON.stringify(saved.records)
  } catch {
    // not one document: JSON lines, read as they are
  }
  return text
}

let bindingModule
function loadCatalogText(text, options) {
  return bindingModule.ToolCatalog.fromJson(text, options)
}

/** The catalog as the commands see it, plus what explain needs to rebuild it without the policy. */
function loadCatalog(path, flags, binding) {
  bindingModule = binding
  const text = liveCatalogRecords(readFileSync(resolve(path), 'utf8'))
  const options = catalogOptions(flags)
  const policy = flags.policy ? JSON.parse(readFileSync(resolve(flags.policy), 'utf8')) : undefined
  const catalog = loadCatalogText(text, policy ? { ...options, policy } : options)
  return { catalog, text, options, policy, policyPath: flags.policy }
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

/** An audit as a table (the `--limit N` most urgent), `--json`, and with `--html FILE` a page. */
function writeAudit(flags, audit, title) {
  const report = require('./audit-report.js')
  const limit = flags.limit === undefined ? 30 : Number(flags.limit)
  if (!Number.isInteger(limit) || limit < 0) usage('--limit must be a whole number')
  if (flags.html) require('node:fs').writeFileSync(resolve(flags.html), report.auditHtml(audit, { title }))
  out(flags, audit, () => `${report.auditText(audit, { limit })}${flags.html ? `\n\nHTML report: ${resolve(flags.html)}` : ''}`)
}

/**
 * A saved audit: the JSON of `audit --json`, or of the gateway's
 * `openclaw gateway call openclaw-tool-search.audit --json` (the plugin's audit of the live catalog).
 */
function readAuditReport(file) {
  let audit
  try {
    audit = JSON.parse(require('node:fs').readFileSync(resolve(file), 'utf8'))
  } catch (err) {
    usage(`cannot read the audit ${file}: ${err.message}`)
  }
  if (!audit || typeof audit !== 'object' || !Array.isArray(audit.tools) || !Array.isArray(audit.servers) || !audit.totals || typeof audit.totals !== 'object') {
    usage(`${file} is not an audit (the JSON of audit --json or of openclaw gateway call openclaw-tool-search.audit --json)`)
  }
  return audit
}

function out(flags, data, human) {
  process.stdout.write(flags.json ? `${JSON.stringify(data, null, 2)}\n` : `${human()}\n`)
}

const POLICY_LAYERS = ['agent', 'profile', 'sandbox', 'session']

/** The record an id or name refers to: `source:owner:name` ids are matched on their name part too. */
function namePart(id) {
  const parts = String(id).split(':')
  return parts.length >= 3 ? parts.slice(2).join(':') : String(id)
}

function sameTool(record, id) {
  return record && (record.name === id || record.id === id || (record.name !== undefined && record.name === namePart(id)))
}

/** Whether `id` is cataloged (searchable) or direct-only in `catalog`. */
function presence(catalog, id) {
  try {
    const d = catalog.describe(id)
    return { cataloged: d.id }
  } catch (err) {
    if (err.code === 'AMBIGUOUS_TOOL') return { ambiguous: err.message }
    const direct = catalog.directOnly.find((t) => sameTool(t, id))
    return direct ? { directOnly: direct.name } : { missing: err.message }
  }
}

/**
 * Which policy rules remove `id`: each layer's allow list and each deny
 * pattern is tried alone against the catalog built without a policy (the
 * built index is reused; only the policy view changes).
 */
function policyRules(text, options, policy, id) {
  const rules = []
  const gone = (probe) => {
    const view = loadCatalogText(text, { ...options, policy: policy.groups ? { groups: policy.groups, ...probe } : probe })
    const p = presence(view, id)
    return !p.cataloged && !p.directOnly && !p.ambiguous
  }
  for (const layer of POLICY_LAYERS) {
    const rule = policy[layer]
    if (!rule) continue
    if (Array.isArray(rule.allow) && gone({ [layer]: { allow: rule.allow } })) {
      rules.push({ layer, rule: 'allow', pattern: null, text: `${layer}.allow does not match it (allow: ${JSON.stringify(rule.allow)})` })
    }
    for (const pattern of rule.deny ?? []) {
      if (gone({ [layer]: { deny: [pattern] } })) rules.push({ layer, rule: 'deny', pattern, text: `${layer}.deny ${JSON.stringify(pattern)} matches it` })
    }
  }
  return rules
}

/** The records as the catalog file lists them: array elements or non-empty JSON lines. */
function recordTexts(text) {
  const trimmed = text.replace(/^[\ufeff\s]+/, '')
  if (trimmed.startsWith('[')) {
    try {
      return JSON.parse(trimmed)
    } catch {
      return []
    }
  }
  return trimmed.split(/\r?\n/).filter((line) => line.trim() !== '')
}

/** `catalog.excluded`, with the name the file gives each record (the core leaves it out for invalid records). */
function excludedRecords(ctx) {
  let records
  return ctx.catalog.excluded.map((e) => {
    if (e.name !== undefined && e.name !== null) return e
    records ??= recordTexts(ctx.text)
    let record = records[e.index]
    if (typeof record === 'string') {
      try {
        record = JSON.parse(record)
      } catch {
        record = undefined
      }
    }
    const name = record && typeof record === 'object' && typeof record.name === 'string' ? record.name : undefined
    return name === undefined ? e : { ...e, name }
  })
}

/** Why `id` is or is not what the model finds, for an operator reading the CLI. */
function explain(ctx, query, id) {
  const { catalog } = ctx
  const here = presence(catalog, id)
  if (here.cataloged) {
    if (query === undefined) return { id: here.cataloged, status: 'cataloged', rank: null, note: 'cataloged and allowed by the policy: tool_search can return it' }
    const hits = catalog.search(query, { limit: 50 })
    const rank = hits.findIndex((h) => h.id === here.cataloged)
    if (rank >= 0) {
      const hit = hits[rank]
      const why = [`ranks #${rank + 1} for this query`]
      // Placed, not scored: the catalog puts a look-up right after the hit that needs its identifier.
      if (hit.neededBy) {
        const needer = hits.findIndex((h) => h.id === hit.neededBy) + 1
        why.push(`placed right after ${hit.neededBy} (#${needer}), which requires an identifier this tool finds`)
      }
      if (hit.weak) why.push('marked weak: it shares only common words with the query, so the model is told it may not fit')
      const learned = catalog.learnedParts(query).find((p) => p.id === here.cataloged)
      if (learned) {
        why.push(
          `learned: +${learned.bonus.toFixed(2)} of the top score from ${learned.events.toFixed(1)} earlier successful call(s) after searches like this one (word similarity ${learned.similarity.toFixed(2)})`,
        )
      }
      return {
        id: here.cataloged,
        status: 'ranked',
        rank: rank + 1,
        ...(hit.neededBy ? { neededBy: hit.neededBy } : {}),
        weak: hit.weak === true,
        ...(learned ? { learned } : {}),
        note: why.join('; '),
      }
    }
    return {
      id: here.cataloged,
      status: 'unranked',
      rank: null,
      note: 'cataloged and allowed, but not in the top 50 for this query: its name, description and parameter names share too few words with the query',
    }
  }
  if (here.ambiguous) return { id, status: 'ambiguous', rank: null, note: `several allowed tools are named ${JSON.stringify(id)}; explain one by its id (source:owner:name)` }
  if (here.directOnly) {
    return {
      id,
      status: 'direct-only',
      rank: null,
      name: here.directOnly,
      note: `direct-only: ${JSON.stringify(here.directOnly)} is marked catalogMode "direct-only", so it is not cataloged and search never returns it; the gateway keeps it visible as a direct tool in every mode`,
    }
  }
  // `#N`: the record at index N (an invalid record may have no usable name).
  const index = /^#\d+$/.test(id) ? Number(id.slice(1)) : undefined
  const excluded = excludedRecords(ctx).filter((e) => (index === undefined ? sameTool(e, id) : e.index === index))
  if (excluded.length) {
    const reasons = excluded.map((e) => `record #${e.index} ${JSON.stringify(e.name)}: ${e.reason}`).join('; ')
    return {
      id,
      status: 'excluded',
      rank: null,
      name: excluded[0].name,
      records: excluded,
      note: `excluded when the catalog was built (the record is invalid, so no mode shows it): ${reasons}`,
    }
  }
  if (ctx.policy) {
    const open = loadCatalogText(ctx.text, ctx.options)
    const unfiltered = presence(open, id)
    if (unfiltered.cataloged || unfiltered.directOnly || unfiltered.ambiguous) {
      const rules = policyRules(ctx.text, ctx.options, ctx.policy, id)
      const what = unfiltered.cataloged ?? unfiltered.directOnly ?? id
      const why = rules.length ? rules.map((r) => r.text).join('; ') : 'no single rule removes it alone; the layers together do'
      return {
        id: what,
        status: 'policy',
        rank: null,
        rules,
        note: `removed by policy (${ctx.policyPath}): ${why}. ${unfiltered.directOnly ? 'It is a direct-only tool' : 'It is cataloged'} without the policy`,
      }
    }
  }
  // The core's message also carries guidance for the model; an operator needs only the near misses.
  const nearMisses = /Did you mean: ([^?]*)\?/.exec(here.missing ?? '')?.[1]
  return {
    id,
    status: 'unknown',
    rank: null,
    note: `unknown: no record in the catalog file has this id or name${nearMisses ? ` (near: ${nearMisses})` : ''}`,
  }
}

async function main() {
  const { positional, flags } = parseArgs(process.argv.slice(2))
  if (flags.h || flags.help) {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  const [command, catalogPath, ...rest] = positional
  if (!command) usage()
  if (command === 'learning') return learningCommand(catalogPath, flags, require('../index.js'))
  if (command === 'audit' && flags.report !== undefined) {
    if (catalogPath) usage('audit --report renders a saved audit; it takes no catalog file')
    return writeAudit(flags, readAuditReport(flags.report), `Tool catalog audit: ${flags.report}`)
  }
  if (!catalogPath) usage('missing the catalog file')
  const binding = require('../index.js')
  const ctx = loadCatalog(catalogPath, flags, binding)
  const { catalog } = ctx

  switch (command) {
    case 'search': {
      const query = rest.join(' ')
      if (!query) usage('missing the query')
      const limit = flags.limit === undefined ? undefined : Number(flags.limit)
      if (catalog.rankingStatus().ranking === 'hybrid') {
        const status = await catalog.whenRankingReady()
        const how = status.active === 'hybrid' ? `${status.reused} tool vectors reused, ${status.embedded} embedded` : `lexical: ${status.error}`
        if (!flags.json) process.stderr.write(`ranking: ${status.active} (${how})\n`)
      }
      const hits = catalog.search(query, { limit })
      const why = flags.explain ? explain(ctx, query, flags.explain) : undefined
      out(flags, why ? { hits, explain: why } : hits, () => {
        // A placed look-up says which hit needs it (the catalog's prerequisite tools).
        const rankOf = new Map(hits.map((h, i) => [h.id, i + 1]))
        const note = (h) => (h.neededBy ? `[finds an id for #${rankOf.get(h.neededBy)}] ` : '')
        const rows = hits.map((h, i) => ({ '#': i + 1, id: h.id, input: clip(h.input, 50), description: clip(note(h) + h.description, 70) }))
        const text = hits.length ? table(rows, ['#', 'id', 'input', 'description']) : '(no hits: empty or all-stopword query, or nothing matches)'
        return why ? `${text}\n\nexplain ${why.id} [${why.status}]: ${why.note}` : text
      })
      break
    }
    case 'explain': {
      const id = rest[0] ?? flags.explain
      if (!id) usage('missing the tool id or name')
      const why = explain(ctx, undefined, id)
      out(flags, why, () => `${why.id} [${why.status}]: ${why.note}`)
      if (why.status === 'unknown') process.exitCode = 1
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
    case 'audit': {
      if (catalog.rankingStatus().ranking === 'hybrid') {
        const status = await catalog.whenRankingReady()
        if (status.active !== 'hybrid') process.stderr.write(`openclaw-tool-search: auditing with lexical ranking (${status.error})\n`)
      }
      const audit = await catalog.audit({ findability: !flags['no-findability'] })
      writeAudit(flags, audit, `Tool catalog audit: ${catalogPath}`)
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

main().catch((err) => {
  process.stderr.write(`openclaw-tool-search: ${err.code ? `${err.code}: ` : ''}${err.message}\n`)
  process.exit(1)
})

// `pnpm bench`: every benchmark, on the release build (`scripts/setup.mjs --release`).
// Code mode needs a sound Node: set OPENCLAW_TOOL_SEARCH_NODE (e.g. Node 24) when the
// system Node is older; without one, that part reports why it is skipped.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const only = process.argv.slice(2).filter((a) => !a.startsWith('-'))
const parts = [
  ['search', 'search latency and catalog build (JS, release addon)', ['bench/search.mjs']],
  ['hybrid', 'hybrid ranking: embedding tools (new, restart), search latency lexical vs hybrid', ['bench/hybrid.mjs']],
  ['telemetry', 'what OpenTelemetry costs a search: no SDK, an SDK recording, content capture', ['bench/telemetry.mjs']],
  ['live', 'following a changed MCP server: withSource, withUnavailable, search on the result', ['bench/live.mjs']],
  ['surfaces', 'surface bytes per mode and directory render time', ['bench/surfaces.mjs']],
  ['code-mode', 'code-mode cells through the session and sandbox', ['bench/code-mode.mjs']],
  ['quality', 'retrieval quality on the dev set', ['bench/quality.mjs']],
  ['hostile', 'what hostile cells, schemas and lookups cost the gateway (event-loop gaps, RSS, bounds)', ['bench/hostile.mjs']],
  ['soak', '10,000 sequential and 100 concurrent cells: RSS, leftovers, every cell settled', ['bench/soak.mjs']],
  // The gateway runs on the code-mode Node when one is set (Node 24, as OpenClaw requires).
  ['responsive', "the gateway's longest event-loop gap under CPU-spinning cells, ordinary cells, hybrid tool_search, a 12.8k build, and a memory flood followed by 100 cells", ['bench/responsive.mjs'], process.env.OPENCLAW_TOOL_SEARCH_NODE],
]
// The caches (vectors, stored search indexes) start empty, in a folder of their own: the figures
// do not depend on what earlier runs left, and the user's cache folder is left alone.
const ownCache = process.env.OPENCLAW_TOOL_SEARCH_CACHE_DIR ? undefined : mkdtempSync(join(tmpdir(), 'ots-bench-cache-'))
const env = ownCache ? { ...process.env, OPENCLAW_TOOL_SEARCH_CACHE_DIR: ownCache } : process.env
process.on('exit', () => ownCache && rmSync(ownCache, { recursive: true, force: true }))
console.log(`openclaw-tool-search benchmarks, ${new Date().toISOString().slice(0, 10)}, Node ${process.version}`)
for (const [name, what, args, node] of parts) {
  if (only.length && !only.includes(name)) continue
  console.log(`\n## ${name}: ${what}\n`)
  execFileSync(node || process.execPath, args, { cwd: root, stdio: 'inherit', env })
}

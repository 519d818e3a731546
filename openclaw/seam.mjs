// The seam into OpenClaw's bundled Tool Search: a source-to-source patch of the one module that
// holds `src/agents/tool-search-runtime.ts`, applied by an ESM load hook (openclaw/hooks.mjs).
// OpenClaw has no supported seam for a Tool Search engine (docs/openclaw-upstream-proposal.md
// proposes one); this patch is the smallest that hands the engine what it needs:
//   1. ranking: `ToolSearchRuntime.search`, after OpenClaw has counted the search, resolved the
//      limit and the visible entries, asks the engine for the ranked entries and returns them
//      through OpenClaw's own `compactEntry` (hit shape and network-content tracking unchanged);
//   2. code mode: `runCodeModeChild(params)` asks the engine to run the cell; OpenClaw's own child
//      stays as `__otsBuiltinRunCodeModeChild` for the engine to fall back on;
//   3. catalog registered: `registerToolSearchCatalog` hands the engine the run's new catalog, so
//      its index (and, with hybrid ranking, its tool vectors) is prepared before the first search;
//   4. run end: `clearToolSearchCatalog` (called when a run's catalog is torn down) tells the
//      engine, which writes its one summary line for the run into OpenClaw's log;
//   5. a marker at the end of the module tells the engine the patched module was evaluated.
// Every anchor must occur exactly once, in the expected region, and the OpenClaw version must be
// one this package was tested against; otherwise nothing is patched and the reason is returned.

export const SEAM_VERSION = 1
/** OpenClaw releases this patch was tested against (its anchors and semantics). */
export const TESTED_OPENCLAW_VERSIONS = Object.freeze(['2026.9.6'])
export const ENGINE_KEY = 'openclaw-tool-search.engine'
export const MARKER = `/* openclaw-tool-search seam v${SEAM_VERSION} */`

// Written in two parts so that this file (which OpenClaw's plugin loader also loads) is never
// mistaken for the module it patches.
const RUNTIME_REGION = '//#region ' + 'src/agents/tool-search-runtime.ts'
const CODE_MODE_REGION = '//#region src/agents/tool-search-code-mode.ts'
const ENGINE = `globalThis[Symbol.for(${JSON.stringify(ENGINE_KEY)})]`

/** Why an OpenClaw version is left alone (one text, whether the plugin or the load hook sees it first). */
export function untestedVersionReason(version) {
  return `OpenClaw ${version} is not a version this package was tested against (${TESTED_OPENCLAW_VERSIONS.join(', ')})`
}

/** Whether this module source is the one that holds OpenClaw's Tool Search runtime. */
export function isToolSearchModule(source) {
  return typeof source === 'string' && source.includes(RUNTIME_REGION)
}

/** Whether `source` was already patched (a second hook must not patch twice). */
export function isPatched(source) {
  return source.includes(MARKER)
}

function regionOf(source, marker) {
  const start = source.indexOf(marker)
  if (start < 0) return undefined
  const end = source.indexOf('//#endregion', start)
  return { start, end: end < 0 ? source.length : end }
}

function countOf(text, needle) {
  let count = 0
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) count += 1
  return count
}

// Each anchor: the exact text, the region it must sit in, and what replaces it. Anchors are
// whole statements of OpenClaw's source (its bundler keeps names and formatting inside a chunk).
const ANCHORS = [
  {
    name: 'search entry',
    region: RUNTIME_REGION,
    text: '\t\tthis.search = async (query, options) => {\n\t\t\tconst catalog = resolveCatalog(this.ctx);\n\t\t\tcatalog.searchCount += 1;\n\t\t\tconst limit = readToolSearchLimit(options?.limit, this.config);\n\t\t\tconst entries = visibleCatalogEntries(catalog, options);\n\t\t\tconst compactEntry = (entry) => {',
  },
  {
    name: 'search ranking',
    region: RUNTIME_REGION,
    text: '\t\t\tconst spelling = query.trim();\n\t\t\tconst exact = spelling.toLowerCase();',
    replace: (text) =>
      `\t\t\tlet __otsRanked;\n` +
      `\t\t\ttry { __otsRanked = await ${ENGINE}?.rank?.({ runtime: this, catalog, entries, query, limit, options }); } catch {}\n` +
      `\t\t\tif (Array.isArray(__otsRanked)) return __otsRanked.map(compactEntry);\n` +
      text,
  },
  {
    name: 'code-mode bridge',
    region: CODE_MODE_REGION,
    text: 'async function runCodeModeBridgeRequest(runtime, method, args, options) {',
  },
  {
    name: 'code-mode child',
    region: CODE_MODE_REGION,
    text: 'function runCodeModeChild(params) {\n\treturn new Promise((resolve, reject) => {',
    replace: (text) =>
      'function runCodeModeChild(params) {\n' +
      `\tlet __otsCell;\n` +
      `\ttry { __otsCell = ${ENGINE}?.runCodeModeChild?.(params, { runCodeModeBridgeRequest, toToolSearchJsonSafe, builtin: __otsBuiltinRunCodeModeChild }); } catch {}\n` +
      `\treturn __otsCell ?? __otsBuiltinRunCodeModeChild(params);\n` +
      '}\n' +
      text.replace('function runCodeModeChild(params) {', 'function __otsBuiltinRunCodeModeChild(params) {'),
  },
  {
    name: 'catalog registered',
    region: '//#region src/agents/tool-search-catalog.ts',
    text: '\tparams.catalogRef.current = next;\n\tif (!prior) disposeCodeModeResults(params.catalogRef);',
    replace: (text) => `${text}\n\ttry { ${ENGINE}?.catalogRegistered?.(next); } catch {}`,
  },
  {
    name: 'run end',
    region: '//#region src/agents/tool-search-catalog.ts',
    text: 'function clearToolSearchCatalog(params) {\n\tif (params.catalogRef) {',
    replace: (text) =>
      'function clearToolSearchCatalog(params) {\n' +
      `\ttry { ${ENGINE}?.runEnded?.(params); } catch {}\n` +
      text.slice('function clearToolSearchCatalog(params) {\n'.length),
  },
  {
    name: 'JSON-safe import',
    region: undefined,
    text: ' as toToolSearchJsonSafe }',
  },
]

/**
 * Patches OpenClaw's Tool Search module.
 * @param {string} source the module's source
 * @param {{ version?: string, url?: string }} context the OpenClaw version the module belongs to
 * @returns {{ ok: true, source: string } | { ok: false, reason: string }}
 */
export function patchToolSearchModule(source, { version, url } = {}) {
  if (!isToolSearchModule(source)) return { ok: false, reason: 'not the Tool Search module' }
  if (isPatched(source)) return { ok: true, source }
  if (!version) return { ok: false, reason: `the OpenClaw version of ${url ?? 'the Tool Search module'} is unknown` }
  if (!TESTED_OPENCLAW_VERSIONS.includes(version)) return { ok: false, reason: untestedVersionReason(version) }
  let patched = source
  for (const anchor of ANCHORS) {
    const count = countOf(patched, anchor.text)
    if (count !== 1) {
      return { ok: false, reason: `anchor "${anchor.name}" found ${count} times in OpenClaw ${version}'s Tool Search module (expected once)` }
    }
    const at = patched.indexOf(anchor.text)
    if (anchor.region) {
      const region = regionOf(patched, anchor.region)
      if (!region || at < region.start || at > region.end) {
        return { ok: false, reason: `anchor "${anchor.name}" is not inside ${anchor.region.replace('//#region ', '')}` }
      }
    }
    if (anchor.replace) patched = patched.slice(0, at) + anchor.replace(anchor.text) + patched.slice(at + anchor.text.length)
  }
  patched += `\n${MARKER}\n${ENGINE}?.seamLoaded?.(${JSON.stringify(url ?? '')}, ${JSON.stringify(version)});\n`
  return { ok: true, source: patched }
}

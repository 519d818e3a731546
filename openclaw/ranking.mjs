// Ranking: the seam's ranking hook answers a search with OpenClaw's visible entries in the native
// catalog's order (hybrid once the tool vectors are ready, lexical until then) under the release's
// own exact-match rule; any failure leaves the search to OpenClaw's built-in ranking, logged.
import { setTimeout as delay } from 'node:timers/promises'
import { searched } from './diagnostics.mjs'
import { rememberShown } from './learning.mjs'
import { PLUGIN_ID } from './settings.mjs'

/**
 * How long a search waits for the tool vectors of a hybrid catalog, at most: while they are read
 * from the vector cache (a one-shot `agent exec` process finds them there), or when at most
 * NEARLY_READY are left to embed. A catalog still embedding more ranks lexically at once.
 */
const VECTOR_WAIT_MS = 2000
const NEARLY_READY = 64
const VECTOR_POLL_MS = 10

/** The seam's ranking hook: OpenClaw's visible entries in this engine's order, or undefined for OpenClaw's own. */
export async function rank(engine, { runtime, catalog, entries, query, limit, release }) {
  if (!engine.active) return engine.inactive()
  if (!engine.settings.replace.ranking || typeof query !== 'string' || !engine.releaseAllowed(release?.version)) return undefined
  const stats = engine.statsFor(runtime?.ctx)
  try {
    const native = engine.loadNative()
    if (!native) {
      engine.fellBack(stats, 'ranking', 'native_unavailable', engine.nativeError?.message)
      return undefined
    }
    const started = performance.now()
    const view = await engine.viewFor(catalog, entries)
    if (view.problem) {
      engine.fellBack(stats, 'ranking', 'catalog_not_indexable', view.problem)
      engine.warnOnce(`view:${view.problem}`, `${view.problem}; OpenClaw's built-in ranking answers this catalog's searches`)
      return undefined
    }
    const status = await vectorsFor(view.catalog)
    const ranking = status.active
    // The run's agent learns (and ranks with) its own prior, unless the gateway shares one.
    const ranker = engine.learningCatalog(view, stats)
    const hits = ranking === 'hybrid' ? await ranker.searchAsync(query, { limit }) : ranker.search(query, { limit })
    if (status.ranking === 'hybrid' && ranking !== 'hybrid') stats.degraded ??= hybridMissing(status)
    if (view.repaired.length > 0 && stats.repairsWarned !== view) {
      stats.repairsWarned = view
      engine.log.warn(`${PLUGIN_ID}: ${repairsMessage(engine, view.repaired, entries.length)}`)
    }
    const ranked = []
    for (const hit of hits) {
      const entry = view.byNativeId.get(hit.id)
      if (entry) ranked.push(entry)
    }
    exactMatchFirst(ranked, view, query, limit, release)
    rememberShown(engine, stats, { query, ranked, view, catalog: ranker })
    searched(engine, stats, { query, hits, ranked, ranking, status, started })
    return ranked
  } catch (error) {
    engine.fellBack(stats, 'ranking', 'search_failed', `${error?.code ? `${error.code} ` : ''}${error?.message ?? error}`)
    engine.warnOnce(`rank:${error?.code ?? error?.message}`, `search fell back to OpenClaw's built-in ranking: ${error?.code ? `${error.code} ` : ''}${error?.message ?? error}`)
    return undefined
  }
}

/**
 * The exact-match rule of the release's own ranking, where it differs from the native one. The
 * native ranking puts every entry whose id or name equals the trimmed query (ignoring case) first,
 * which is OpenClaw's rule up to 2026.9.4 (`exactMatch: 'id-or-name'`). From 2026.9.5
 * (`'id-first'`) an entry whose id is spelled exactly is the only exact match, so it leads.
 */
function exactMatchFirst(ranked, view, query, limit, release) {
  if (release?.exactMatch !== 'id-first') return
  const spelled = view.byId.get(query.trim())
  if (!spelled || ranked[0] === spelled) return
  const at = ranked.indexOf(spelled)
  if (at >= 0) ranked.splice(at, 1)
  ranked.unshift(spelled)
  if (ranked.length > limit) ranked.length = limit
}

/**
 * The catalog's ranking status once its tool vectors are ready, or as soon as waiting would not
 * help: a hybrid catalog whose vectors are being read (from the vector cache) or nearly all
 * embedded is waited for, at most VECTOR_WAIT_MS; one still embedding many ranks lexically now.
 */
async function vectorsFor(catalog) {
  let status = catalog.rankingStatus()
  const deadline = performance.now() + VECTOR_WAIT_MS
  while (status.ranking === 'hybrid' && status.active !== 'hybrid' && performance.now() < deadline) {
    if (status.state !== 'pending' && !(status.state === 'embedding' && status.total - status.done <= NEARLY_READY)) break
    await delay(VECTOR_POLL_MS)
    status = catalog.rankingStatus()
  }
  return status
}

/** Why a hybrid catalog ranked lexically. */
function hybridMissing(status) {
  if (status.state === 'failed') return status.error ?? 'the tool vectors could not be made'
  return `tool vectors warming: ${status.done.toLocaleString('en-US')} of ${status.total.toLocaleString('en-US')}`
}

/** Refused records named in a run's warning; the rest are counted. */
const REPAIRS_NAMED = 5

/** The run's one warning about the tools indexed in a repaired form. */
function repairsMessage(engine, repaired, total) {
  // Log text as the addon escapes it (control, separator and invisible characters as `\u{…}`).
  const printable = (text) => engine.native.printable(String(text))
  const named = repaired.slice(0, REPAIRS_NAMED).map(({ entry, notes }) => `${printable(entry.id)} (owner ${printable(entry.sourceName)}): ${notes.join('; ')}`)
  const more = repaired.length > REPAIRS_NAMED ? `; and ${repaired.length - REPAIRS_NAMED} more` : ''
  return `${repaired.length} of ${total} tools could not be indexed as OpenClaw gave them and rank natively in a repaired form: ${named.join('; ')}${more}`
}

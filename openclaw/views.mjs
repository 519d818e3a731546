// Views: the native catalog of an OpenClaw entries array (a run's whole catalog, or a filtered
// view of it) with the maps from the native catalog's ids back to OpenClaw's own entries. A run's
// whole catalog is built when OpenClaw registers it, as the next version of the last run's.
import { recordFor, sweepRecords } from './records.mjs'

/**
 * The seam's catalog hook (OpenClaw registered a run's catalog): start building its native
 * index now, off the event loop, so the first search finds it ready (with hybrid ranking, its
 * tool vectors too: read from the vector cache or computed in the background).
 */
export function catalogRegistered(engine, catalog) {
  if (!engine.active || !engine.settings.replace.ranking || !Array.isArray(catalog?.entries)) return
  if (!engine.releaseAllowed(engine.servedRelease()?.version) || !engine.loadNative()) return
  // A failed build is reported (and falls back) when a search uses it.
  engine.viewFor(catalog, catalog.entries).catch(() => {})
}

/**
 * The native view of an entries array (a Promise): the whole catalog's, kept per entries array
 * (the engine's `views`), or a filtered one's (allowedIds / includeMcp), kept per catalog while
 * the same entries come again (the engine's `filtered`).
 */
export function viewFor(engine, catalog, entries) {
  const cached = engine.views.get(entries)
  if (cached) return cached
  if (entries !== catalog.entries) {
    const last = engine.filtered.get(catalog)
    if (last && sameList(last.entries, entries)) return last.view
    const view = buildView(engine, entries, false)
    engine.filtered.set(catalog, { entries, view })
    return view
  }
  const view = buildView(engine, entries, true)
  engine.views.set(entries, view)
  return view
}

/** The native catalog's build options from the settings. */
export function catalogOptions(engine) {
  // OpenClaw passes its own limit with each search: the catalog must not clamp below it.
  const limits = engine.native.toolSearchLimits()
  const options = { maxSearchLimit: limits.maxSearchLimitCap, searchDefaultLimit: limits.searchDefaultLimitDefault }
  if (engine.settings.ranking !== 'auto') options.ranking = engine.settings.ranking
  if (engine.settings.modelDir) options.model = engine.settings.modelDir
  if (engine.settings.vectorCache !== undefined) options.vectorCache = engine.settings.vectorCache
  if (engine.settings.indexCache !== undefined) options.indexCache = engine.settings.indexCache
  if (engine.settings.learning) options.learning = true
  // Per tool, not per catalog: a record the native catalog refuses is indexed in a form it takes
  // (the refused part dropped, or its name made safe) in the same build, and mapped back to
  // OpenClaw's own entry; OpenClaw keeps validating and running its own calls.
  options.repair = true
  return options
}

async function buildView(engine, entries, whole) {
  const { ToolCatalog } = engine.native
  engine.generation += 1
  const records = entries.map((entry) => recordFor(engine, entry))
  sweepRecords(engine, records.length)
  const options = engine.catalogOptions()
  // A new run of a whole catalog with the same settings: the last one's next version (the
  // catalog derives it owner by owner when few changed, and equals a full build either way).
  const last = whole && engine.lastView?.options === JSON.stringify(options) ? engine.lastView.catalog : undefined
  const catalog = last ? await last.updateAsync(records) : await ToolCatalog.build(records, options)
  // How this version came to be: unchanged from the last run's, derived from it (an update),
  // built, or loaded from the index cache.
  const how = last && catalog.fingerprint === last.fingerprint ? 'unchanged' : (catalog.rankingStatus().index?.state ?? 'unknown')
  engine.versions[how] = (engine.versions[how] ?? 0) + 1
  // Log text as the addon escapes it (control, separator and invisible characters as `\u{…}`).
  const printable = (text) => engine.native.printable(String(text))
  // `ids`: each entry's native id as the catalog indexed it (a repaired one's new id; null: not indexed).
  const view = { catalog, byId: new Map(), byNativeId: new Map(), nativeIdOf: new Map(), records, ids: catalog.recordIds, repaired: [], problem: undefined }
  const repairs = new Map()
  for (const repair of catalog.repaired) repairs.set(repair.index, [...(repairs.get(repair.index) ?? []), repair])
  for (let i = 0; i < entries.length; i++) {
    const id = view.ids[i]
    view.byId.set(entries[i].id, entries[i])
    if (id !== null) {
      view.byNativeId.set(id, entries[i])
      view.nativeIdOf.set(entries[i].id, id)
    }
    const made = repairs.get(i)
    if (made) view.repaired.push({ entry: entries[i], notes: made.map((repair) => `${printable(repair.reason)}: ${printable(repair.change)}`) })
  }
  if (catalog.size !== entries.length) {
    const first = catalog.excluded[0]
    view.problem =
      `${entries.length - catalog.size} of ${entries.length} tools cannot be indexed natively` +
      (first ? ` (first: ${printable(entries[first.index]?.id ?? first.name ?? 'a tool')}: ${first.code} ${printable(first.reason)})` : '')
  }
  if (whole) engine.lastView = { catalog, options: JSON.stringify(options), view }
  return view
}

function sameList(a, b) {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

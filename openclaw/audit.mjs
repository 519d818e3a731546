// The plugin's gateway methods over the live gateway's catalog (the whole catalog its latest run
// registered): `openclaw-tool-search.audit` (the package's catalog audit, named by OpenClaw's ids),
// `.catalog` (the records as indexed, for replaying a search offline) and `.status` (what the
// engine holds in this process).

/** An error with a code, which the gateway method answers with. */
function coded(code, message) {
  return Object.assign(new Error(message), { code })
}

/**
 * The audit of the live gateway's catalog, for the plugin's gateway method
 * `openclaw-tool-search.audit`: the package's `catalog.audit()`, each tool also named by
 * OpenClaw's own id (`openclawId`), and the releases that served it.
 */
export async function auditLive(engine, params) {
  const findability = params?.findability
  if (findability !== undefined && typeof findability !== 'boolean') throw coded('INVALID_REQUEST', 'findability must be true or false')
  const view = await engine.lastView?.view
  if (!view) throw coded('UNAVAILABLE', 'no run has registered a Tool Search catalog in this gateway yet: run a turn first')
  const audit = await view.catalog.audit(findability === undefined ? undefined : { findability })
  for (const tool of audit.tools) {
    const entry = view.byNativeId.get(tool.id)
    if (entry) tool.openclawId = entry.id
  }
  return { ...audit, gateway: gatewayOf(engine), learning: engine.learningScopes(view) }
}

/**
 * The live gateway's catalog as this engine indexed it (its latest run's whole catalog), for the
 * plugin's gateway method `openclaw-tool-search.catalog`: the records as OpenClaw gave them,
 * the native id and OpenClaw's id of each, the catalog options and fingerprint. The CLI reads the saved answer
 * (`openclaw-tool-search search live.json "…"`) to replay a search offline.
 */
export async function catalogLive(engine) {
  const last = engine.lastView
  const view = await last?.view
  if (!view) throw coded('UNAVAILABLE', 'no run has registered a Tool Search catalog in this gateway yet: run a turn first')
  // Per record as OpenClaw gave it (the options repair it again on a replay): the native id it
  // ranks under (null when it was not indexed) and OpenClaw's id of its entry.
  const nativeIds = view.ids
  return {
    gateway: gatewayOf(engine),
    fingerprint: view.catalog.fingerprint,
    options: JSON.parse(last.options),
    records: view.records,
    nativeIds,
    openclawIds: nativeIds.map((id) => (id === null ? null : (view.byNativeId.get(id)?.id ?? null))),
  }
}

/**
 * What the engine holds in this process, for the plugin's gateway method
 * `openclaw-tool-search.status` (a long-lived gateway's memory accounting): runs it tracks and
 * has served, catalog versions by how they were made, its record cache, the package's native
 * memory (catalogs held, builds kept, stored records), the process's memory and the learning
 * scopes.
 */
export async function status(engine) {
  const memory = process.memoryUsage()
  const view = engine.lastView?.view
  let native = null
  try {
    native = engine.native?.nativeMemory?.() ?? null
  } catch {
    native = null
  }
  return {
    gateway: gatewayOf(engine),
    active: engine.active,
    runs: { open: engine.runs.size, served: engine.served },
    versions: { ...engine.versions },
    records: engine.records.size,
    native,
    process: { rssBytes: memory.rss, heapUsedBytes: memory.heapUsed, externalBytes: memory.external, arrayBuffersBytes: memory.arrayBuffers },
    learning: view && engine.settings?.learning ? engine.learningScopes(view) : null,
  }
}

/** The releases serving: OpenClaw's (its patched module's) and this plugin's. */
function gatewayOf(engine) {
  return { openclaw: engine.servedRelease()?.version ?? null, plugin: engine.version }
}

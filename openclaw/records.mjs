// OpenClaw's catalog entries as the native catalog's records, and the record cache: an entry of a
// later run with the same id and content gets the same record object, so the package's own record
// cache (js/catalog.js) finds the tool without serializing it again.

/** Entries whose tools are new since this many builds are forgotten by the record cache. */
const RECORD_GENERATIONS = 4

const isObject = (value) => typeof value === 'object' && value !== null

/**
 * The record of an entry: the same record object for an entry of a later run with the same id
 * and the same content (its strings equal, its schema the same object). The cache is the
 * engine's `records` (entry id → its content then, and its record), aged by `generation`.
 */
export function recordFor(engine, entry) {
  const parameters = isObject(entry.parameters) ? entry.parameters : undefined
  const mcp = isObject(entry.mcp) ? entry.mcp : undefined
  const known = engine.records.get(entry.id)
  if (
    known &&
    known.source === entry.source &&
    known.sourceName === entry.sourceName &&
    known.name === entry.name &&
    known.label === entry.label &&
    known.description === entry.description &&
    known.parameters === parameters &&
    known.mcp === mcpKey(mcp)
  ) {
    known.used = engine.generation
    return known.record
  }
  const record = { source: entry.source, owner: entry.sourceName, name: entry.name, description: entry.description ?? '' }
  if (typeof entry.label === 'string' && entry.label) record.label = entry.label
  if (parameters) record.inputSchema = parameters
  if (mcp && typeof mcp.serverName === 'string' && typeof mcp.toolName === 'string') {
    record.mcp = { serverName: mcp.serverName, toolName: mcp.toolName }
    if (typeof mcp.safeServerName === 'string') record.mcp.safeServerName = mcp.safeServerName
    if (typeof mcp.operation === 'string') record.mcp.operation = mcp.operation
  }
  engine.records.set(entry.id, {
    source: entry.source,
    sourceName: entry.sourceName,
    name: entry.name,
    label: entry.label,
    description: entry.description,
    parameters,
    mcp: mcpKey(mcp),
    record,
    used: engine.generation,
  })
  return record
}

/** Forgets the records no recent build used, once the cache holds many more than a catalog's `live` entries. */
export function sweepRecords(engine, live) {
  if (engine.records.size <= 2 * live + 1000) return
  for (const [key, known] of engine.records) {
    if (known.used < engine.generation - RECORD_GENERATIONS) engine.records.delete(key)
  }
}

function mcpKey(mcp) {
  return mcp ? `${mcp.serverName}\u0000${mcp.safeServerName}\u0000${mcp.toolName}\u0000${mcp.operation}` : undefined
}

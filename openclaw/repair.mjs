// Record repair, in JS (to be replaced by the Rust core's `repair: true` build option, which
// repairs in one build and reports `repaired[]`): per tool, not per catalog, a record the native
// catalog refuses is indexed in a form it takes (the refused part dropped, or its name made safe),
// mapped back to OpenClaw's own entry; the rest of the catalog is untouched. OpenClaw keeps
// validating and running its own calls.
import { nativeId, printable } from './records.mjs'

/** Builds that repair refused records, at most (a record can have one refusal per field). */
const REPAIR_ROUNDS = 4
/** Refused records named in a run's warning; the rest are counted. */
const REPAIRS_NAMED = 5
/** Per record the native catalog refused: the record indexed instead, and what was changed. */
const repairs = new WeakMap()

// Characters the native catalog refuses in a name or owner: controls, format characters (zero
// width, bidirectional overrides, tags) and the fillers and selectors that render as nothing.
const UNSAFE_IN_NAMES = /[\p{Cc}\p{Cf}\u034F\u115F\u1160\u17B4\u17B5\u180B-\u180F\u3164\uFE00-\uFE0F\uFFA0\u{E0000}-\u{E0FFF}]/gu

/** The record indexed for a record of the record cache: its repaired form from an earlier build, or itself. */
export function indexedRecord(original) {
  return repairs.get(original)?.record ?? original
}

/** What was changed in a repaired record, per refusal. */
export function repairNotes(original) {
  return repairs.get(original)?.notes
}

/**
 * The catalog once the records it refused are repaired: `records` (in place) and the catalog are
 * rebuilt with `build(records)` until nothing is left to repair, at most REPAIR_ROUNDS times.
 */
export async function repairRefused(catalog, records, originals, build) {
  for (let round = 0; round < REPAIR_ROUNDS && catalog.excluded.length > 0; round++) {
    const taken = new Set(records.map(nativeId))
    let changed = false
    for (const excluded of catalog.excluded) {
      const repair = repairRecord(records[excluded.index], excluded, taken, round)
      if (!repair) continue
      const original = originals[excluded.index]
      const notes = repairs.get(original)?.notes ?? []
      repairs.set(original, { record: repair.record, notes: [...notes, `${printable(excluded.reason)}: ${repair.note}`] })
      records[excluded.index] = repair.record
      changed = true
    }
    if (!changed) break
    catalog = await build(records)
  }
  return catalog
}

/** `text` as a name or owner the native catalog takes, unique among `taken` ids of this source/owner. */
function safeIdentifier(text, round) {
  const cleaned = Array.from(String(text).replace(UNSAFE_IN_NAMES, '').replaceAll(':', '_').trim()).slice(0, 200).join('')
  // A second refusal of a cleaned name: a plain ASCII stand-in.
  return round === 0 && cleaned ? cleaned : `tool_${hashText(String(text))}`
}

function hashText(text) {
  let hash = 2166136261
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619) >>> 0
  return hash.toString(36)
}

/**
 * The record the native catalog is asked to index instead of one it refused, by the refusal's
 * code and field (never its wording), and a note saying what changed; undefined when there is no
 * repair for it.
 */
function repairRecord(record, excluded, taken, round) {
  const without = (...keys) => Object.fromEntries(Object.entries(record).filter(([key]) => !keys.includes(key)))
  const renamed = (key) => {
    const next = { ...record }
    const base = safeIdentifier(record[key], round)
    next[key] = base
    for (let n = 2; taken.has(nativeId(next)); n++) next[key] = `${base}_${n}`
    taken.add(nativeId(next))
    return next
  }
  switch (excluded.code) {
    case 'INVALID_SCHEMA':
      if (excluded.field === 'inputSchema' && 'inputSchema' in record) return { record: without('inputSchema'), note: 'indexed without its input schema' }
      return undefined
    case 'UNREADABLE_RECORD': {
      const minimal = { source: record.source, owner: record.owner, name: record.name, description: typeof record.description === 'string' ? record.description : '' }
      return Object.keys(record).length > Object.keys(minimal).length ? { record: minimal, note: 'indexed by its name and description only' } : undefined
    }
    case 'CONTROL_TOOL':
      return { record: renamed('name'), note: 'a control tool\'s name, indexed under another' }
    case 'INVALID_FIELD':
      switch (excluded.field) {
        case 'name':
        case 'owner': {
          const next = renamed(excluded.field)
          return { record: next, note: `indexed as ${printable(nativeId(next))}` }
        }
        case 'mcp':
          return { record: without('mcp'), note: 'indexed without its MCP routing data' }
        case 'label':
          return { record: without('label'), note: 'indexed without its label' }
        case 'description':
          return { record: { ...record, description: '' }, note: 'indexed without its description' }
        case 'source':
          return { record: { ...record, source: 'client' }, note: 'indexed as a client tool' }
        default:
          return undefined
      }
    default:
      return undefined
  }
}

/** The run's one warning about the tools indexed in a repaired form. */
export function repairsMessage(repaired, total) {
  const named = repaired.slice(0, REPAIRS_NAMED).map(({ entry, notes }) => `${printable(entry.id)} (owner ${printable(entry.sourceName)}): ${notes.join('; ')}`)
  const more = repaired.length > REPAIRS_NAMED ? `; and ${repaired.length - REPAIRS_NAMED} more` : ''
  return `${repaired.length} of ${total} tools could not be indexed as OpenClaw gave them and rank natively in a repaired form: ${named.join('; ')}${more}`
}

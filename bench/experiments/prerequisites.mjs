// Prerequisite tools, offline: a hit that needs an identifier (a required parameter such as
// person_id, geoId, user_id) is of no use without a tool of the same server that finds that
// identifier (search-person, SearchLocation, find_user_id_by_email). Promote that provider
// to just after the hit that needs it. The same rule as the product's
// crates/core/src/search/prerequisites.rs (without its bounds on hostile schemas).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const words = (s) => String(s ?? '').replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
  .toLowerCase().split(/[^a-z0-9]+/).filter(Boolean)
const MAX_SERVER_TOOLS = 1000
const LOOKUP = new Set(['search', 'find', 'list', 'lookup', 'query', 'resolve'])

export function loadPrerequisites(dataDir, toolIds, { mentions = false, skip = 'request' } = {}) {
  const byId = new Map(readFileSync(join(dataDir, 'catalog.jsonl'), 'utf8').trim().split('\n').map((l) => { const t = JSON.parse(l); return [t.id, t] }))
  const tools = toolIds.map((id) => {
    const t = byId.get(id)
    const server = id.slice(0, id.lastIndexOf(':'))
    const required = new Set(t?.inputSchema?.required ?? [])
    const nameWords = words(t?.name ?? id.slice(id.lastIndexOf(':') + 1))
    const needs = [...required].map((p) => ({ p, w: words(p) })).filter(({ w }) => w.length >= 2 && (w.at(-1) === 'id' || w.at(-1) === 'ids'))
      .map(({ p, w }) => ({ param: p, entity: w.slice(0, -1), told: new Set(words(t?.inputSchema?.properties?.[p]?.description)) }))
    return { server, required, nameWords: new Set(nameWords), needs }
  })
  const byServer = new Map()
  tools.forEach((t, o) => { if (!byServer.has(t.server)) byServer.set(t.server, []); byServer.get(t.server).push(o) })
  // The providers of one need of tool o, best first (cached).
  const cache = new Map()
  const providers = (o, need) => {
    const key = `${o}|${need.param}`
    if (cache.has(key)) return cache.get(key)
    const list = []
    // A server of more tools than MAX_SERVER_TOOLS is no one API: names there coincide by chance.
    if (byServer.get(tools[o].server).length > MAX_SERVER_TOOLS) { cache.set(key, []); return [] }
    for (const c of byServer.get(tools[o].server)) {
      if (c === o || tools[c].required.has(need.param)) continue
      const n = tools[c].nameWords
      // --prereq-mentions: also a tool the parameter's description names ("extracted from the
      // Search Airport API"): its own name words (those it does not share with the needing
      // tool) all appear there. Not in the product (nestful +0.2, seal-dev −0.1).
      const own = [...n].filter((w) => !tools[o].nameWords.has(w))
      const named = mentions && own.length > 0 && own.every((w) => need.told.has(w))
      if (!named && !need.entity.every((w) => n.has(w) || n.has(`${w}s`))) continue
      const strength = (n.has('id') || n.has('ids') || named ? 2 : 0) + ([...n].some((w) => LOOKUP.has(w)) ? 1 : 0)
      if (strength > 0) list.push({ c, strength })
    }
    list.sort((a, b) => b.strength - a.strength || a.c - b.c)
    cache.set(key, list)
    return list
  }
  // ranked: ordinals best first. top: how many leading hits may bring their providers.
  return function promote(ranked, { top = 3, perNeed = 1, query = '' } = {}) {
    // A request that states an identifier ("book with ID 42", "order #W2378156") needs no look-up.
    let stated = null
    if (skip === 'entity') {
      // Variant (not in the product: tau-bench +0.1, the rest unchanged): skip only the needs
      // whose entity the request gives an id for ("order #W23", "the book with ID 42"): the
      // four words before each id mention.
      const qw = query.toLowerCase().replace(/#\w*\d\w*/g, ' idmark ').split(/[^a-z0-9]+/).filter(Boolean)
      stated = new Set()
      qw.forEach((w, i) => { if (w === 'id' || w === 'ids' || w === 'idmark') for (let j = Math.max(0, i - 4); j < i; j++) { stated.add(qw[j]); stated.add(qw[j].replace(/s$/, '')) } })
    } else if (/\bids?\b/i.test(query) || /#\w*\d/.test(query)) return ranked
    const rankOf = new Map(ranked.map((o, r) => [o, r]))
    const out = []
    const placed = new Set()
    ranked.forEach((o, r) => {
      if (placed.has(o)) return
      out.push(o); placed.add(o)
      if (r >= top) return
      for (const need of tools[o].needs) {
        if (stated && need.entity.some((w) => stated.has(w))) continue
        // Among the strongest providers, the one the ranking already likes best.
        const list = providers(o, need)
        if (!list.length) continue
        const best = list.filter((x) => x.strength === list[0].strength)
          .sort((a, b) => (rankOf.get(a.c) ?? 1e9) - (rankOf.get(b.c) ?? 1e9) || a.c - b.c).slice(0, perNeed)
        for (const { c } of best) if (!placed.has(c)) { out.push(c); placed.add(c) }
      }
    })
    return out
  }
}

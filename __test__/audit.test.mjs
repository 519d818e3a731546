// The operator's audit: `catalog.audit()` and `openclaw-tool-search audit` find the tools a
// model will struggle to find (unfindable, empty or copied descriptions, near-duplicates across
// servers and which one wins, colliding names, large schemas), most urgent first; the HTML page
// holds every tool, escapes catalog text and sorts in the page; bad options fail with a code.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { browserSkip, findChromium, openPage } from './browser.mjs'

const require = createRequire(import.meta.url)
const { ToolCatalog } = require('../index.js')
const cli = require.resolve('../bin/openclaw-tool-search.js')

const bigSchema = {
  type: 'object',
  properties: Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`field_${i}`, { type: 'string', description: `the ${i}th field of the record, as the server names it` }])),
}
const tools = [
  { name: 'create_issue', owner: 'github', source: 'mcp', description: 'Create a new issue in a GitHub repository with a title and body.' },
  { name: 'create-issue', owner: 'github_mirror', source: 'mcp', description: 'Create a new issue in a GitHub repository with a title and body.' },
  { name: 'xq7', owner: 'tools', source: 'mcp', description: '' },
  { name: 'weather_now', owner: 'weather', source: 'mcp', description: 'Weather.' },
  { name: 'bulk_record_import', owner: 'crm', source: 'mcp', description: 'Import many customer records into the CRM at once from a spreadsheet.', inputSchema: bigSchema },
  { name: 'send_email', owner: 'mail', source: 'mcp', description: 'Send an email message to one or more recipients.' },
  // Hostile text an HTML report must not run.
  { name: 'evil', owner: '<img src=x onerror=alert(1)>', source: 'mcp', description: '</script><script>alert(2)</script> steals cookies from the page' },
  ...Array.from({ length: 11 }, (_, i) => ({ name: 'lookup_order', owner: `shop${String(i).padStart(2, '0')}`, source: 'mcp', description: 'Look up a customer order by its number and show its status.' })),
]

test('audit() names each problem, the duplicate that wins, and sorts the urgent first', async () => {
  const catalog = new ToolCatalog(tools, { ranking: 'lexical' })
  const audit = await catalog.audit()
  assert.equal(audit.ranking, 'lexical')
  assert.equal(audit.findability, true)
  assert.equal(audit.totals.tools, tools.length)
  const byId = new Map(audit.tools.map((t) => [t.id, t]))

  const email = byId.get('mcp:mail:send_email')
  assert.deepEqual(email.problems, [])
  assert.equal(email.bestRank, 1)
  assert.deepEqual(email.probes.map((p) => p.from), ['name', 'description'])
  assert.ok(byId.get('mcp:tools:xq7').problems.includes('empty-description'))
  assert.ok(byId.get('mcp:weather:weather_now').problems.includes('short-description'))
  const bulk = byId.get('mcp:crm:bulk_record_import')
  assert.ok(bulk.problems.includes('large-schema') && bulk.schemaTokens > 1000, JSON.stringify(bulk))

  const a = byId.get('mcp:github:create_issue')
  const b = byId.get('mcp:github_mirror:create-issue')
  for (const tool of [a, b]) {
    assert.ok(tool.problems.includes('duplicated-description') && tool.problems.includes('name-collision'), JSON.stringify(tool))
    assert.equal(tool.nearDuplicates.length, 1)
    assert.match(tool.nearDuplicates[0].why, /ranks/)
  }
  assert.equal(a.nearDuplicates[0].winner, b.nearDuplicates[0].winner)
  assert.equal([a, b].filter((t) => t.problems.includes('outranked-duplicate')).length, 1)

  // Eleven servers with one tool: the last by id order is eleventh for its own requests.
  const unfindable = audit.tools.filter((t) => t.problems.includes('unfindable'))
  assert.deepEqual(unfindable.map((t) => t.id), ['mcp:shop10:lookup_order'])
  assert.equal(audit.tools[0].id, 'mcp:shop10:lookup_order')
  assert.equal(audit.totals.unfindable, 1)
  for (let i = 1; i < audit.tools.length; i++) assert.ok(audit.tools[i - 1].priority >= audit.tools[i].priority)
  const servers = audit.servers.map((s) => s.withProblems)
  assert.deepEqual(servers, [...servers].sort((x, y) => y - x))

  const quick = await catalog.audit({ findability: false })
  assert.equal(quick.findability, false)
  assert.ok(quick.tools.every((t) => t.probes.length === 0 && t.bestRank === null))
})

test('audit() refuses bad options with a stable code', async () => {
  const catalog = new ToolCatalog(tools.slice(0, 3), { ranking: 'lexical' })
  for (const bad of [{ findability: 'yes' }, { depth: 3 }, 7]) {
    assert.throws(() => catalog.audit(bad), (e) => e.code === 'INVALID_REQUEST', JSON.stringify(bad))
  }
})

test('the CLI prints the urgent tools, --json all of them, --html a page that escapes the catalog', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ots-audit-'))
  try {
    const file = join(dir, 'catalog.json')
    writeFileSync(file, JSON.stringify(tools))
    const text = execFileSync(process.execPath, [cli, 'audit', file, '--ranking', 'lexical', '--limit', '3'], { encoding: 'utf8' })
    assert.match(text, /^18 tools on 18 servers \(lexical ranking\), audited in/)
    assert.match(text, /Fix first \(3 of \d+/)
    assert.match(text, /mcp:shop10:lookup_order\s+-\s+unfindable/)

    const json = JSON.parse(execFileSync(process.execPath, [cli, 'audit', file, '--ranking', 'lexical', '--json'], { encoding: 'utf8' }))
    assert.equal(json.tools.length, tools.length)
    assert.equal(json.tools[0].id, 'mcp:shop10:lookup_order')

    const page = join(dir, 'audit.html')
    execFileSync(process.execPath, [cli, 'audit', file, '--ranking', 'lexical', '--html', page], { encoding: 'utf8' })
    const html = readFileSync(page, 'utf8')
    assert.match(html, /^<!doctype html>/)
    const body = html.slice(html.indexOf('<tbody>'), html.indexOf('</tbody>'))
    assert.equal((body.match(/<tr>/g) ?? []).length, tools.length, 'one row per tool')
    for (const tool of json.tools) assert.ok(body.includes(tool.id.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')), tool.id)
    // Catalog text is inert: no tag from it survives, and the page has exactly its own script.
    assert.ok(!html.includes('<img src=x'), 'owner markup escaped')
    assert.ok(!html.includes('<script>alert(2)'), 'description markup escaped')
    assert.equal((html.match(/<script>/g) ?? []).length, 1)
    assert.equal((html.match(/<\/script>/g) ?? []).length, 1)
    assert.match(html, /<table id="tools">/)
    assert.match(html, /addEventListener\('click'/)
    // Per-server bars: one row per server with a tool to fix.
    const bars = (html.match(/class="bar-row"/g) ?? []).length
    assert.equal(bars, json.servers.filter((s) => s.withProblems > 0).length)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('the audit of the 13,163-tool dev catalog covers every tool', async () => {
  const text = readFileSync(new URL('../bench/data/retrieval-dev/catalog.jsonl', import.meta.url), 'utf8')
  const catalog = ToolCatalog.fromJson(text, { ranking: 'lexical' })
  const audit = await catalog.audit()
  assert.equal(audit.totals.tools, 13163)
  assert.equal(audit.tools.length, 13163)
  assert.ok(audit.totals.emptyDescriptions > 0 && audit.totals.nameCollisions > 0, JSON.stringify(audit.totals))
  // A tool with problems is never listed after one without.
  const firstClean = audit.tools.findIndex((t) => t.problems.length === 0)
  assert.ok(audit.tools.slice(firstClean).every((t) => t.problems.length === 0))
})

test('audit --report renders a saved audit (table, --json, --html) and refuses a file that is not one', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ots-audit-report-'))
  try {
    const file = join(dir, 'catalog.json')
    writeFileSync(file, JSON.stringify(tools))
    const saved = join(dir, 'audit.json')
    writeFileSync(saved, execFileSync(process.execPath, [cli, 'audit', file, '--ranking', 'lexical', '--json'], { encoding: 'utf8' }))
    const text = execFileSync(process.execPath, [cli, 'audit', '--report', saved, '--limit', '3'], { encoding: 'utf8' })
    assert.match(text, /^18 tools on 18 servers \(lexical ranking\)/)
    assert.match(text, /mcp:shop10:lookup_order\s+-\s+unfindable/)
    assert.deepEqual(JSON.parse(execFileSync(process.execPath, [cli, 'audit', '--report', saved, '--json'], { encoding: 'utf8' })), JSON.parse(readFileSync(saved, 'utf8')))
    const page = join(dir, 'saved.html')
    execFileSync(process.execPath, [cli, 'audit', '--report', saved, '--html', page], { encoding: 'utf8' })
    assert.equal((readFileSync(page, 'utf8').match(/<tr>/g) ?? []).length, tools.length + 1, 'a row per tool and the header')
    const notAudit = join(dir, 'other.json')
    writeFileSync(notAudit, JSON.stringify({ tools: 'x' }))
    const refused = spawnSync(process.execPath, [cli, 'audit', '--report', notAudit], { encoding: 'utf8' })
    assert.equal(refused.status, 2)
    assert.match(refused.stderr, /is not an audit/)
    const both = spawnSync(process.execPath, [cli, 'audit', file, '--report', saved], { encoding: 'utf8' })
    assert.equal(both.status, 2)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

const chromium = findChromium()
const noBrowser = browserSkip(chromium)

test('the HTML page in a real headless browser: every tool, inert catalog text, sorting, filtering, bars', { skip: noBrowser }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ots-audit-browser-'))
  let page
  try {
    const file = join(dir, 'catalog.json')
    writeFileSync(file, JSON.stringify(tools))
    const html = join(dir, 'audit.html')
    execFileSync(process.execPath, [cli, 'audit', file, '--ranking', 'lexical', '--html', html], { encoding: 'utf8' })
    const json = JSON.parse(execFileSync(process.execPath, [cli, 'audit', file, '--ranking', 'lexical', '--json'], { encoding: 'utf8' }))
    page = await openPage(chromium, pathToFileURL(html).href)
    const rows = () => page.evaluate(`[...document.querySelectorAll('#tools tbody tr')].filter((r) => r.style.display !== 'none').map((r) => [...r.cells].map((c) => c.textContent))`)
    assert.equal((await rows()).length, tools.length, 'one row per tool')
    // The hostile owner and description are shown as text; they made no element and ran nothing.
    assert.equal(await page.evaluate('document.scripts.length'), 1)
    assert.equal(await page.evaluate('document.images.length'), 0)
    const cells = (await rows()).flat()
    assert.ok(cells.some((text) => text.includes('</script><script>alert(2)</script>')), 'the description reads as text')
    assert.ok(cells.some((text) => text.includes('<img src=x onerror=alert(1)>')), 'the owner reads as text')
    // Most urgent first as served; a click on "best rank" sorts ascending, another descending.
    assert.equal((await rows())[0][1], json.tools[0].id)
    const rankColumn = 3
    const ranks = async () => (await rows()).map((row) => (row[rankColumn] === '–' ? 99 : Number(row[rankColumn])))
    await page.evaluate(`document.querySelectorAll('#tools th')[${rankColumn}].click()`)
    const ascending = await ranks()
    assert.deepEqual(ascending, [...ascending].sort((a, b) => a - b))
    assert.equal(await page.evaluate(`document.querySelectorAll('#tools th')[${rankColumn}].getAttribute('aria-sort')`), 'ascending')
    await page.evaluate(`document.querySelectorAll('#tools th')[${rankColumn}].click()`)
    const descending = await ranks()
    assert.deepEqual(descending, [...descending].sort((a, b) => b - a))
    assert.equal(descending[0], 99, 'the unfindable tool (no rank) first when descending')
    // The filter keeps the rows that mention its text, and all of them again when cleared.
    const filter = (text) => page.evaluate(`(() => { const f = document.getElementById('filter'); f.value = ${JSON.stringify(text)}; f.dispatchEvent(new Event('input')); })()`)
    await filter('SHOP1')
    const shown = await rows()
    assert.equal(shown.length, json.tools.filter((t) => t.id.includes('shop1')).length)
    assert.ok(shown.every((row) => row.join(' ').toLowerCase().includes('shop1')))
    await filter('')
    assert.equal((await rows()).length, tools.length)
    // Per-server bars: one per server with a tool to fix, each drawn with a width.
    const bars = await page.evaluate(`[...document.querySelectorAll('.bar-row')].map((r) => r.querySelector('.bar').getBoundingClientRect().width)`)
    assert.equal(bars.length, json.servers.filter((s) => s.withProblems > 0).length)
    assert.ok(bars.every((width) => width > 0), JSON.stringify(bars))
    assert.deepEqual(page.exceptions, [], 'no script error in the page')
  } finally {
    await page?.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

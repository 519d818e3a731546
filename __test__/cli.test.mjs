// The CLI as an operator uses it: `explain` (cataloged, direct-only,
// excluded (with the record's name and reason), removed by policy (layer and
// rule), unknown), and `search` marking the look-ups it places.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { root } from './helpers.mjs'

const cli = join(root, 'bin', 'openclaw-tool-search.js')

const records = [
  { name: 'get_weather', owner: 'weather', description: 'Current weather and forecast for a city.', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } },
  { name: 'send_message', description: 'Send a chat message to a channel.' },
  { source: 'mcp', owner: 'github', name: 'create_issue', description: 'Open a GitHub issue.' },
  { name: 'exec', description: 'Run a shell command.', catalogMode: 'direct-only' },
  { name: 'broken_tool', description: 'Schema is not a schema.', inputSchema: 42 },
]
const policy = { profile: { allow: ['group:openclaw'] }, session: { deny: ['send_message', 'nothing_*'] } }

function withFiles(fn) {
  const dir = mkdtempSync(join(tmpdir(), 'cli-explain-'))
  try {
    writeFileSync(join(dir, 'catalog.jsonl'), records.map((r) => JSON.stringify(r)).join('\n'))
    writeFileSync(join(dir, 'policy.json'), JSON.stringify(policy))
    return fn(dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

function run(dir, args) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: dir, encoding: 'utf8' })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

function explain(dir, id, extra = []) {
  const r = run(dir, ['explain', 'catalog.jsonl', id, '--policy', 'policy.json', '--json', ...extra])
  assert.ok(r.stdout, r.stderr)
  return { ...JSON.parse(r.stdout), exit: r.status }
}

test('explain tells cataloged, direct-only, excluded, policy-removed and unknown tools apart', () =>
  withFiles((dir) => {
    assert.equal(explain(dir, 'get_weather').status, 'cataloged')

    const direct = explain(dir, 'exec')
    assert.equal(direct.status, 'direct-only')
    assert.match(direct.note, /not cataloged/)
    assert.match(direct.note, /visible/)

    const broken = explain(dir, 'broken_tool')
    assert.equal(broken.status, 'excluded')
    assert.equal(broken.name, 'broken_tool', 'the record name is read from the file for invalid records')
    assert.match(broken.note, /broken_tool/)
    assert.ok(broken.records[0].reason.length > 0)
    assert.equal(explain(dir, '#4').status, 'excluded')

    const denied = explain(dir, 'send_message')
    assert.equal(denied.status, 'policy')
    assert.deepEqual(denied.rules.map((r) => [r.layer, r.rule, r.pattern]), [['session', 'deny', 'send_message']])
    const notAllowed = explain(dir, 'mcp:github:create_issue')
    assert.equal(notAllowed.status, 'policy')
    assert.deepEqual(notAllowed.rules.map((r) => [r.layer, r.rule]), [['profile', 'allow']])

    const unknown = explain(dir, 'no_such_tool')
    assert.equal(unknown.status, 'unknown')
    assert.equal(unknown.exit, 1)
  }))

test('explain text is for an operator: the layer and rule, not model guidance', () =>
  withFiles((dir) => {
    const r = run(dir, ['search', 'catalog.jsonl', 'chat message', '--policy', 'policy.json', '--explain', 'send_message'])
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /explain openclaw:core:send_message \[policy\]: removed by policy \(policy\.json\): session\.deny "send_message" matches it/)
    assert.doesNotMatch(r.stdout, /tool_search|tool_describe|tool_call/)
    const text = run(dir, ['explain', 'catalog.jsonl', 'broken_tool']).stdout
    assert.match(text, /^broken_tool \[excluded\]: excluded when the catalog was built/)
    assert.doesNotMatch(text, /tool_search|tool_describe|tool_call/)
  }))

test('search marks a look-up placed for the hit that needs its identifier', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cli-needed-'))
  try {
    const tool = (name, description, required) => ({
      owner: 'movies', name, description,
      inputSchema: { type: 'object', properties: Object.fromEntries(required.map((p) => [p, { type: 'string' }])), required },
    })
    const tools = [
      tool('get_person_movie_credits', 'Movie credits of a person: the films they directed or acted in.', ['person_id']),
      tool('search_person', 'Search people by name.', ['query']),
      tool('get_movie_details', 'Details of a movie.', ['movie_id']),
    ]
    writeFileSync(join(dir, 'catalog.jsonl'), tools.map((t) => JSON.stringify(t)).join('\n'))
    const r = run(dir, ['search', 'catalog.jsonl', 'list the movie credits of Sofia Coppola'])
    assert.equal(r.status, 0, r.stderr)
    const lines = r.stdout.split('\n')
    assert.match(lines.find((l) => l.includes('search_person')) ?? '', /\[finds an id for #1\]/, r.stdout)
    assert.equal(lines.filter((l) => l.includes('[finds an id')).length, 1, r.stdout)
    const json = JSON.parse(run(dir, ['search', 'catalog.jsonl', 'list the movie credits of Sofia Coppola', '--json']).stdout)
    assert.equal(json[1].neededBy, 'openclaw:movies:get_person_movie_credits')
    // --explain says why the look-up is there, not only where it ranks.
    const why = JSON.parse(run(dir, ['search', 'catalog.jsonl', 'list the movie credits of Sofia Coppola', '--explain', 'search_person', '--json']).stdout).explain
    assert.equal(why.status, 'ranked')
    assert.equal(why.rank, 2)
    assert.equal(why.neededBy, 'openclaw:movies:get_person_movie_credits')
    assert.match(why.note, /^ranks #2 for this query; placed right after openclaw:movies:get_person_movie_credits \(#1\), which requires an identifier this tool finds/)
    const first = JSON.parse(run(dir, ['search', 'catalog.jsonl', 'list the movie credits of Sofia Coppola', '--explain', 'get_person_movie_credits', '--json']).stdout).explain
    assert.equal(first.neededBy, undefined)
    assert.equal(first.note, 'ranks #1 for this query')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test("a live gateway's catalog as `openclaw-tool-search.catalog` saves it replays a search, ids as the gateway indexed them", () =>
  withFiles((dir) => {
    const live = records.filter((r) => r.name !== 'broken_tool')
    const saved = { gateway: { openclaw: '2026.9.6', plugin: '0.1.0' }, fingerprint: 'f', options: { ranking: 'lexical' }, records: live, openclawIds: live.map((r) => `${r.source ?? 'openclaw'}:${r.owner ?? 'core'}:${r.name}`) }
    writeFileSync(join(dir, 'live.json'), JSON.stringify(saved))
    const r = run(dir, ['search', 'live.json', 'weather forecast for a city', '--ranking', 'lexical', '--json'])
    assert.equal(r.status, 0, r.stderr)
    const hits = JSON.parse(r.stdout)
    const ids = (Array.isArray(hits) ? hits : hits.hits).map((hit) => hit.id)
    assert.equal(ids[0], 'openclaw:weather:get_weather')
    const stats = JSON.parse(run(dir, ['stats', 'live.json', '--json']).stdout)
    assert.equal(stats.size ?? stats.tools, live.length - 1, JSON.stringify(stats)) // exec is direct-only
  }))

// Code mode's CPU isolation and admission as the gateway sees them: the capability report,
// `configureCodeMode`'s CPU settings (in a fresh process each: they apply before the probe), and
// each cell's containment record.
import test from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { capability, needsCodeMode, root } from './helpers.mjs'

/** Runs `body` in a fresh gateway process (the binding as `b`); returns what it prints as JSON. */
function fresh(body) {
  const script = `const b = require(${JSON.stringify(`${root}/index.js`)});
(async () => { const out = await (async () => { ${body} })(); process.stdout.write(JSON.stringify(out)); process.exit(0) })()
  .catch((e) => { process.stdout.write(JSON.stringify({ thrown: e.code ?? String(e) })); process.exit(0) })`
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', env: process.env, timeout: 120_000 }))
}

test('the capability report shows the CPU the gateway has and the default cells at once that follow it', { skip: needsCodeMode }, () => {
  const budget = capability.cpuBudget
  assert.ok(budget.affinityCpus >= 1 && budget.cores >= 1 && budget.cores <= budget.affinityCpus, JSON.stringify(budget))
  const cores = Math.max(1, Math.ceil(budget.cores))
  assert.equal(capability.maxConcurrentCells, Math.min(64, Math.max(2, 2 * cores)))
  // The default policy follows the cpu group: idle inside it, batch without it.
  const group = capability.cpuCgroup
  const policy = group.applied ? 'idle' : 'batch'
  assert.deepEqual(capability.cpuIsolation, { weight: 10, maxShare: null, nice: 10, policy })
  // The probe's launch already ran below the gateway, and says so.
  assert.equal(capability.layers.nice, 10)
  assert.equal(capability.layers.schedPolicy, policy)
  assert.equal(capability.layers.priorityLocked, true)
  if (group.applied) assert.ok(['v1', 'v2'].includes(group.version) && group.weight === 10, JSON.stringify(group))
  else assert.ok(typeof group.reason === 'string' && group.reason.length > 0, JSON.stringify(group))
})

test('configureCodeMode sets the CPU isolation and the cells at once; each cell reports what applied', { skip: needsCodeMode }, () => {
  const out = fresh(`
    b.configureCodeMode({ childrenCpuWeight: 30, childrenCpuMax: 0.5, childrenNice: 15, childrenCpuPolicy: 'idle', maxConcurrentCells: 3 })
    const cap = await b.probeCodeMode()
    const session = new b.ToolSearchSession(new b.ToolCatalog([{ name: 'noop', description: 'Nothing.' }]), b.resolveToolSearchConfig({ mode: 'code' }), { executor: async () => 'ok' })
    const r = await session.handle('tool_search_code', { code: 'return 1' })
    return { cap, r }
  `)
  assert.equal(out.thrown, undefined, JSON.stringify(out))
  const { cap, r } = out
  assert.equal(cap.available, true, JSON.stringify(cap))
  assert.equal(cap.maxConcurrentCells, 3)
  assert.deepEqual(cap.cpuIsolation, { weight: 30, maxShare: 0.5, nice: 15, policy: 'idle' })
  const telemetry = r.value.telemetry
  assert.equal(r.value.ok, true, JSON.stringify(r))
  assert.equal(telemetry.containment.nice, 15)
  assert.equal(telemetry.containment.schedPolicy, 'idle')
  assert.equal(telemetry.containment.priorityLocked, true)
  if (cap.cpuCgroup.applied) {
    assert.equal(cap.cpuCgroup.weight, 30)
    assert.ok(cap.cpuCgroup.max, JSON.stringify(cap.cpuCgroup))
    assert.ok(telemetry.cgroups.some((g) => g.startsWith('cpu (')), JSON.stringify(telemetry.cgroups))
  } else {
    assert.ok(!telemetry.cgroups.some((g) => g.startsWith('cpu (')), JSON.stringify(telemetry.cgroups))
  }
})

test('CPU settings out of range are refused with INVALID_CONFIG before anything starts', () => {
  for (const settings of [
    { childrenNice: -1 },
    { childrenNice: 20 },
    { childrenCpuWeight: 0 },
    { childrenCpuWeight: 10001 },
    { childrenCpuMax: 0 },
    { childrenCpuMax: 1.5 },
    { childrenCpuPolicy: 'fifo' },
    { maxConcurrentCells: 0 },
    { childrenCpuWeigth: 5 },
  ]) {
    const out = fresh(`
      try { b.configureCodeMode(${JSON.stringify(settings)}) } catch (e) { return { code: e.code, message: e.message } }
      return { accepted: true }
    `)
    assert.equal(out.code, 'INVALID_CONFIG', `${JSON.stringify(settings)}: ${JSON.stringify(out)}`)
  }
})

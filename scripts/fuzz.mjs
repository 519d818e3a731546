#!/usr/bin/env node
// `pnpm fuzz`: the fuzz campaign (libFuzzer through cargo-fuzz, nightly toolchain).
//
//  1. builds every target once (`cargo +nightly fuzz build`, no sanitizer: the code
//     under test is safe Rust, and throughput is what reaches millions of executions;
//     debug assertions and overflow checks stay on);
//  2. runs each target for --runs executions (default 2,000,000) under `nice -n 19`
//     with -rss_limit_mb=2048 (also the single-malloc limit) and -timeout=2; the
//     targets themselves fail an input that takes over 100 ms CPU (fuzz/src/lib.rs);
//     new inputs go to fuzz/corpus-work/<target> (git-ignored);
//  3. a crash, hang or OOM input is minimized when possible and copied to
//     fuzz/regressions/<target>/ (replayed by `cargo test`, so by `pnpm test`), then
//     the target restarts for its remaining executions (at most --max-crashes times);
//     an input that passes three reruns (a stall of the busy machine, not the code)
//     is reported as flaky and left in fuzz/artifacts/<target>/;
//  4. merges the new inputs into fuzz/corpus/<target> (libFuzzer -merge=1): the
//     committed seeds (seed-*) stay, other files are kept only if they add coverage
//     and are at most 2 KiB (the committed corpus stays small; `--runs 0` only merges);
//  5. prints one summary line per target and writes fuzz/artifacts/summary.txt.
//
//   node scripts/fuzz.mjs [--runs N] [--targets a,b] [--parallel K] [--max-time SECONDS]
//                         [--max-crashes N] [--no-merge] [--no-build]
//
// --max-time bounds each target's wall time (libFuzzer -max_total_time); --parallel
// runs K targets at once (default 1). CI does not fuzz: it replays the corpus in
// `cargo test` (crates/core/tests/fuzz_replay.rs, crates/sandbox/tests/fuzz_replay.rs).
import { spawn, spawnSync } from 'node:child_process'
import { copyFileSync, createWriteStream, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const fuzzDir = join(root, 'fuzz')
const TARGET = 'x86_64-unknown-linux-gnu'
/** Largest generated input committed to fuzz/corpus (seeds are kept whatever their size). */
const MAX_KEPT_BYTES = 2 * 1024
const ALL_TARGETS = ['catalog_records', 'queries', 'schemas', 'bridge_frames', 'control_args']

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 ? process.argv[at + 1] : fallback
}
const flag = (name) => process.argv.includes(`--${name}`)

const runs = Number(option('runs', '2000000'))
const targets = option('targets', ALL_TARGETS.join(',')).split(',').filter(Boolean)
const parallel = Math.max(1, Number(option('parallel', '1')))
const maxTime = option('max-time', undefined)
const maxCrashes = Number(option('max-crashes', '3'))
for (const t of targets) {
  if (!ALL_TARGETS.includes(t)) throw new Error(`unknown target ${t} (${ALL_TARGETS.join(', ')})`)
}

const binary = (t) => join(fuzzDir, 'target', TARGET, 'release', t)
const dirOf = (...parts) => {
  const d = join(fuzzDir, ...parts)
  mkdirSync(d, { recursive: true })
  return d
}
const files = (d) => (existsSync(d) ? readdirSync(d).filter((f) => statSync(join(d, f)).isFile()) : [])

if (!flag('no-build')) {
  const build = spawnSync('nice', ['-n', '19', 'cargo', '+nightly', 'fuzz', 'build', '-s', 'none', '--target', TARGET], {
    cwd: fuzzDir,
    stdio: 'inherit',
  })
  if (build.status !== 0) {
    console.error('fuzz build failed (needs `rustup toolchain install nightly` and `cargo install cargo-fuzz`)')
    process.exit(1)
  }
}

/** Run the fuzzer binary at nice 19; resolves with its exit code and the log text. */
function runFuzzer(t, args, logPath) {
  return new Promise((resolve) => {
    const log = createWriteStream(logPath, { flags: 'a' })
    const child = spawn('nice', ['-n', '19', binary(t), ...args], { cwd: fuzzDir, stdio: ['ignore', 'pipe', 'pipe'] })
    let text = ''
    const keep = (chunk) => {
      log.write(chunk)
      // Only the tail matters (final stats); keep memory bounded.
      text = (text + chunk.toString()).slice(-64 * 1024)
    }
    child.stdout.on('data', keep)
    child.stderr.on('data', keep)
    child.on('close', (code) => log.end(() => resolve({ code, text })))
  })
}

/** Executions a libFuzzer run reports (final stats, else its last status line). */
function executions(text) {
  const stat = text.match(/stat::number_of_executed_units:\s*(\d+)/)
  if (stat) return Number(stat[1])
  const lines = [...text.matchAll(/^#(\d+)\s/gm)]
  return lines.length ? Number(lines[lines.length - 1][1]) : 0
}

async function campaign(t) {
  const work = dirOf('corpus-work', t)
  const committed = dirOf('corpus', t)
  const regressions = dirOf('regressions', t)
  const artifacts = dirOf('artifacts', t)
  const logPath = join(artifacts, 'fuzz.log')
  rmSync(logPath, { force: true })
  const start = Date.now()
  let done = 0
  const crashes = []
  const flaky = []
  while (done < runs && crashes.length + flaky.length <= maxCrashes) {
    const before = new Set(files(artifacts))
    const elapsed = (Date.now() - start) / 1000
    if (maxTime !== undefined && elapsed >= Number(maxTime)) break
    const args = [
      work,
      committed,
      `-runs=${runs - done}`,
      '-rss_limit_mb=2048',
      '-timeout=2',
      '-print_final_stats=1',
      `-artifact_prefix=${artifacts}/`,
      ...(maxTime !== undefined ? [`-max_total_time=${Math.max(1, Math.floor(Number(maxTime) - elapsed))}`] : []),
    ]
    const { code, text } = await runFuzzer(t, args, logPath)
    done += executions(text)
    const found = files(artifacts).filter((f) => !before.has(f) && /^(crash|timeout|oom|leak)-/.test(f))
    if (code === 0 && found.length === 0) break
    if (found.length === 0) {
      crashes.push(`exit ${code} without an artifact (see ${logPath})`)
      break
    }
    for (const f of found) {
      // A busy machine can stall a nice-19 process past -timeout (wall time): an
      // input that then passes three reruns is reported as flaky, not committed.
      const rerun = () =>
        spawnSync('nice', ['-n', '19', binary(t), '-timeout=2', '-rss_limit_mb=2048', join(artifacts, f)], { cwd: fuzzDir, stdio: 'ignore' }).status
      if ([0, 1, 2].every(() => rerun() === 0)) {
        flaky.push(`${f} (passed 3 reruns; see ${logPath})`)
        continue
      }
      const saved = join(regressions, f)
      copyFileSync(join(artifacts, f), saved)
      // Minimize in place when libFuzzer can (a crash reproduces; hangs often do not).
      const min = join(artifacts, `min-${f}`)
      const tmin = spawnSync(
        'nice',
        ['-n', '19', binary(t), '-minimize_crash=1', '-runs=20000', '-timeout=2', '-rss_limit_mb=2048', `-exact_artifact_path=${min}`, saved],
        { cwd: fuzzDir, stdio: 'ignore', timeout: 300_000 },
      )
      if (tmin.status === 0 && existsSync(min) && statSync(min).size > 0) copyFileSync(min, saved)
      const reason = text.match(/panicked at [^\n]*\n[^\n]*/)?.[0] ?? text.match(/==\d+== ERROR: libFuzzer: [^\n]*/)?.[0] ?? `exit ${code}`
      crashes.push(`${f}: ${reason.replace(/\s+/g, ' ').slice(0, 300)}`)
    }
  }

  let corpusNote = ''
  if (!flag('no-merge')) {
    // Seeds stay as written; other inputs stay only if they add coverage to them.
    const merged = join(fuzzDir, 'corpus-work', `${t}.merged`)
    rmSync(merged, { recursive: true, force: true })
    mkdirSync(merged)
    for (const f of files(committed).filter((f) => f.startsWith('seed-'))) copyFileSync(join(committed, f), join(merged, f))
    const merge = await runFuzzer(t, ['-merge=1', '-rss_limit_mb=2048', '-timeout=2', merged, committed, work], join(artifacts, 'merge.log'))
    if (merge.code === 0) {
      for (const f of files(committed)) rmSync(join(committed, f))
      // Large inputs mostly add coverage by repetition; they stay out of git.
      const kept = files(merged).filter((f) => f.startsWith('seed-') || statSync(join(merged, f)).size <= MAX_KEPT_BYTES)
      for (const f of kept) copyFileSync(join(merged, f), join(committed, f))
      const bytes = files(committed).reduce((n, f) => n + statSync(join(committed, f)).size, 0)
      corpusNote = `, corpus ${files(committed).length} files / ${(bytes / 1024).toFixed(0)} KiB`
    } else {
      corpusNote = `, merge failed (exit ${merge.code}, see ${join(artifacts, 'merge.log')}); corpus unchanged`
    }
    rmSync(merged, { recursive: true, force: true })
  }
  const seconds = (Date.now() - start) / 1000
  const line = `${t}: ${done} executions in ${seconds.toFixed(0)} s (${(done / Math.max(seconds, 1)).toFixed(0)}/s), ${crashes.length} crashes, ${flaky.length} flaky${corpusNote}`
  const notes = [...crashes.map((c) => `  ${t} crash: ${c}`), ...flaky.map((c) => `  ${t} flaky: ${c}`)]
  console.log([line, ...notes].join('\n'))
  return { t, line, notes, crashes, done }
}

const queue = [...targets]
const results = []
await Promise.all(
  Array.from({ length: Math.min(parallel, queue.length) }, async () => {
    while (queue.length) results.push(await campaign(queue.shift()))
  }),
)
results.sort((a, b) => ALL_TARGETS.indexOf(a.t) - ALL_TARGETS.indexOf(b.t))
const summary = results.map((r) => [r.line, ...r.notes].join('\n')).join('\n')
mkdirSync(join(fuzzDir, 'artifacts'), { recursive: true })
writeFileSync(join(fuzzDir, 'artifacts', 'summary.txt'), `${new Date().toISOString()} runs=${runs}\n${summary}\n`)
console.log(`\nsummary (fuzz/artifacts/summary.txt):\n${summary}`)
const failed = results.filter((r) => r.crashes.length > 0 || r.done < runs)
if (failed.length) {
  console.log(`\n${failed.length} target(s) crashed or stopped short of ${runs} executions; crash inputs are in fuzz/regressions/.`)
  process.exit(1)
}

// Preloaded into the QA's long-lived gateway (`--import`, with `--expose-gc`): once a second, one
// JSON line in $QA_LOOP_PROBE_FILE with the longest event-loop gap of that second (ms), its p99,
// and the process's memory (RSS, JS heap, external and array buffers, bytes), with its pid (a
// child that inherits the preload writes its own lines). When the file `<that file>.gc.<pid>` appears,
// the probe runs a full garbage collection first and marks the line `forced`: memory that is
// retained, not merely not yet collected (OpenClaw uses SIGUSR1/SIGUSR2 itself, so no signal).
// The main thread only (a worker's loop and heap are its own); unref'd: never keeps the gateway alive.
import { appendFileSync, existsSync, rmSync } from 'node:fs'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { isMainThread } from 'node:worker_threads'

const file = process.env.QA_LOOP_PROBE_FILE
if (file && isMainThread) {
  const delay = monitorEventLoopDelay({ resolution: 10 })
  delay.enable()
  // Per process: children that inherit the preload (stdio MCP servers) share the file.
  const trigger = `${file}.gc.${process.pid}`
  setInterval(() => {
    let forced = false
    if (existsSync(trigger)) {
      rmSync(trigger, { force: true })
      if (typeof globalThis.gc === 'function') {
        globalThis.gc()
        forced = true
      }
    }
    const memory = process.memoryUsage()
    const sample = {
      pid: process.pid,
      t: Date.now(),
      gapMs: Math.round(delay.max / 1e5) / 10,
      p99Ms: Math.round(delay.percentile(99) / 1e5) / 10,
      rss: memory.rss,
      heapUsed: memory.heapUsed,
      external: memory.external,
      arrayBuffers: memory.arrayBuffers,
      ...(forced ? { forced } : {}),
    }
    delay.reset()
    try {
      appendFileSync(file, `${JSON.stringify(sample)}\n`)
    } catch {
      // the QA folder went away: nothing to report to
    }
  }, 1000).unref()
}

// Preloaded into the QA's long-lived gateway (`--import`): once a second, one JSON line in
// $QA_LOOP_PROBE_FILE with the longest event-loop gap of that second (ms), its p99, and the
// process's memory (RSS, JS heap, external and array buffers, bytes). What the soak reports as
// "the longest event-loop gap" and the heap beside RSS, with its pid (a child that inherits the
// preload writes its own lines). Unref'd: never keeps the gateway alive.
import { appendFileSync } from 'node:fs'
import { monitorEventLoopDelay } from 'node:perf_hooks'

const file = process.env.QA_LOOP_PROBE_FILE
if (file) {
  const delay = monitorEventLoopDelay({ resolution: 10 })
  delay.enable()
  setInterval(() => {
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
    }
    delay.reset()
    try {
      appendFileSync(file, `${JSON.stringify(sample)}\n`)
    } catch {
      // the QA folder went away: nothing to report to
    }
  }, 1000).unref()
}

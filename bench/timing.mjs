// Timing helpers the benchmarks share.

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/**
 * Wall time of `run()`, its value, and the longest the event loop went without a turn
 * meanwhile. The probe spins the loop (one core busy), so an async build's wall time is
 * measured under that load.
 */
export async function loopStall(run) {
  let last = performance.now()
  let longest = 0
  let ticking = true
  const tick = () => {
    const now = performance.now()
    longest = Math.max(longest, now - last)
    last = now
    if (ticking) setImmediate(tick)
  }
  setImmediate(tick)
  const t0 = performance.now()
  const value = await run()
  const wall = performance.now() - t0
  ticking = false
  tick()
  return { wall, longest, value }
}

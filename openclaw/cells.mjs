// Code cells: the seam's code-mode hook runs a `tool_search_code` cell in this package's contained
// child, its bridge OpenClaw's own (search, describe and call go through the gateway), its logs in
// OpenClaw's style; where that child cannot run, OpenClaw's own child runs the cell.

/** The seam's code-mode hook: a Promise of the cell's value, or undefined for OpenClaw's own child. */
export function runCodeModeChild(engine, params, openclaw) {
  if (!engine.active) return engine.inactive()
  if (!engine.settings.replace.codeMode || !engine.releaseAllowed(openclaw?.release?.version)) return undefined
  const native = engine.loadNative()
  if (!native) return undefined
  const stats = engine.statsFor(params.runtime?.ctx)
  return (async () => {
    const result = await native.runCodeCell(params.code, {
      timeoutMs: params.config?.codeTimeoutMs,
      signal: params.signal,
      logStyle: 'json',
      bridge: async (op, args, signal) => {
        const value = await openclaw.runCodeModeBridgeRequest(params.runtime, op, args, {
          parentToolCallId: params.parentToolCallId,
          signal,
          onUpdate: params.onUpdate,
        })
        return openclaw.toToolSearchJsonSafe(value)
      },
    })
    if (!result.ok && result.error?.code === 'CODE_MODE_UNAVAILABLE') {
      engine.fellBack(stats, 'code_cell', 'code_mode_unavailable', result.error.message)
      engine.warnOnce('code-unavailable', `code cells run in OpenClaw's own child: ${result.error.message}`)
      return openclaw.builtin(params)
    }
    for (const line of result.logs ?? []) params.logs.push(line)
    stats.cells += 1
    const bridgeCalls = result.telemetry?.bridgeCalls ?? {}
    engine.diagnostic({
      type: 'tool_search.code_cell',
      durationMs: result.telemetry?.durationMs,
      outcome: result.ok ? 'ok' : 'error',
      ...(result.ok ? {} : { errorCode: result.error?.code }),
      bridgeCalls: { search: bridgeCalls.search ?? 0, describe: bridgeCalls.describe ?? 0, call: bridgeCalls.call ?? 0 },
      warm: result.telemetry?.warm === true,
    })
    // Where OpenClaw makes a cell's value JSON-safe differs by release (openclaw.release.cellJsonSafe):
    // up to 2026.9.2 its runCodeMode passes the child's value through toToolSearchJsonSafe, from
    // 2026.9.3 only its child does. This value crossed from the contained child as JSON text, so it
    // is JSON-safe already and the model sees the same value in both cases.
    if (result.ok) return result.value
    throw new Error(cellErrorMessage(result.error))
  })()
}

/** The text OpenClaw's child gives for the same failure where there is one; ours otherwise. */
function cellErrorMessage(error) {
  switch (error?.code) {
    case 'CODE_TIMEOUT':
      return 'tool_search_code timed out'
    case 'CODE_ABORTED':
      return 'tool_search_code aborted'
    default:
      return `tool_search_code failed (${error?.code ?? 'CODE_RUNTIME_ERROR'}): ${error?.message ?? 'unknown error'}`
  }
}

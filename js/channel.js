// The one adapter between the native engine and a gateway function (the session's executor,
// runCodeCell's bridge). The addon evaluates this file as one function expression, wraps the
// function once, and calls `run` and `abort` from its threads (crates/gateway/src/channel.rs):
// - run(text): `{ key, ... }` in; calls the function with an AbortSignal and always resolves
//   with one text: `{ ok: true, value }`, `{ ok: false, code, message }` (it threw or rejected;
//   code: the error's own string code or null), or `{ ok: false, broken }` (unreadable request);
// - abort(text): `{ key, reason }`; aborts that request's signal. Keys arrive in delivery order
//   and `run` and `abort` travel on two queues: an abort whose run has not arrived yet (key above
//   the last run seen) is parked, and that run then does not call the function.
// A listener (kind 'listener': session events, ranking progress) is only notified:
// run(text) calls it with JSON.parse(text).
(function channel(target, kind) {
  'use strict'
  if (kind === 'listener') return { run: (text) => void target(JSON.parse(text)) }
  const controllers = new Map()
  const early = new Map()
  let lastRun = 0
  const invoke =
    kind === 'bridge'
      ? (request, signal) => target(request.op, request.args, signal)
      : (request, signal) => {
          const call = {
            id: request.id,
            name: request.name,
            source: request.source,
            owner: request.owner,
            args: request.args,
            toolCallId: request.toolCallId,
            signal,
          }
          if (request.parentToolCallId !== undefined) call.parentToolCallId = request.parentToolCallId
          return target(call)
        }
  const fallback = kind === 'bridge' ? 'the bridge request failed' : 'executor failed'
  const thrown = (code, message) => JSON.stringify({ ok: false, code, message })
  return {
    run(text) {
      let request
      try {
        request = JSON.parse(text)
      } catch {
        return Promise.resolve(JSON.stringify({ ok: false, broken: 'the request could not be decoded' }))
      }
      if (request.key > lastRun) lastRun = request.key
      if (early.has(request.key)) {
        const reason = early.get(request.key)
        early.delete(request.key)
        return Promise.resolve(thrown(null, 'aborted before it started: ' + reason))
      }
      const controller = new AbortController()
      controllers.set(request.key, controller)
      return (async () => {
        try {
          const value = await invoke(request, controller.signal)
          const json = JSON.stringify(value === undefined ? null : value)
          return '{"ok":true,"value":' + (json === undefined ? 'null' : json) + '}'
        } catch (error) {
          let code = null
          let message
          try {
            if (error !== null && typeof error === 'object' && typeof error.code === 'string' && error.code !== '') code = error.code
            message = error !== null && typeof error === 'object' && 'message' in error ? String(error.message) : String(error)
          } catch {
            message = fallback
          }
          return thrown(code, message)
        } finally {
          controllers.delete(request.key)
        }
      })()
    },
    abort(text) {
      let request
      try {
        request = JSON.parse(text)
      } catch {
        return
      }
      const controller = controllers.get(request.key)
      if (controller) controller.abort(new Error(request.reason))
      else if (request.key > lastRun && early.size < 1024) early.set(request.key, String(request.reason))
    },
  }
})

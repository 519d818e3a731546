// The OpenClaw plugin entry (package.json `openclaw.extensions`, manifest openclaw.plugin.json):
// reads `plugins.entries.openclaw-tool-search.config`, hands the engine OpenClaw's logger, and
// installs the seam so that OpenClaw's Tool Search module is patched when it loads. Under
// `openclaw gateway run` that happens after plugins register; `openclaw agent exec` loads it
// before plugins, so there the seam must come from `--import` (openclaw/register.mjs), and this
// entry says so once in OpenClaw's log when it is missing. Registration is synchronous, as
// OpenClaw requires, and runs again harmlessly (OpenClaw registers plugins more than once).
import { engine } from './engine.mjs'
import { installSeamHooks } from './hooks.mjs'
import { modelProblem, PLUGIN_ID, resolveSettings } from './settings.mjs'

/**
 * The manifest's one tool contract, whose factory never makes a tool (nothing reaches the model).
 * OpenClaw 2026.8.1 to 2026.9.1 load no plugin under `agent exec` but those whose declared tools
 * the run's tool policy allows (tool discovery); this slot is how the plugin gets registered there.
 */
export const LOADER_TOOL = 'openclaw_tool_search_engine'

/** OpenClaw's plugin logger, made safe to call (a failing logger must not fail a run). */
function safeLogger(logger) {
  const call = (method, fallback) => (message) => {
    try {
      if (typeof logger?.[method] === 'function') return void logger[method](message)
    } catch {
      // fall through to stderr
    }
    fallback(message)
  }
  const stderr = (message) => process.stderr.write(`${message}\n`)
  return { info: call('info', stderr), warn: call('warn', stderr) }
}

function safeCall(fn) {
  try {
    return fn()
  } catch {
    return undefined
  }
}

/** `openclaw agent exec`: the one command that loads Tool Search before plugins register. */
function isAgentExec(argv = process.argv) {
  const at = argv.indexOf('agent')
  return at >= 0 && argv[at + 1] === 'exec'
}

function register(api) {
  try {
    api?.registerTool?.(() => null, { names: [LOADER_TOOL] })
  } catch {
    // an OpenClaw without tool factories loads the plugin at start-up anyway
  }
  const tool = engine()
  if (typeof api?.rootDir === 'string' && api.rootDir) tool.packageRoot ??= api.rootDir
  const log = safeLogger(api?.logger)
  let settings
  try {
    settings = resolveSettings(api?.pluginConfig)
  } catch (error) {
    tool.configure({ enabled: false }, log)
    // Named as OpenClaw names a config error: `plugins.entries.<id>.config.<key>: invalid config: …`.
    tool.warnOnce('config', `${error.message}; OpenClaw's built-in Tool Search stays in use`)
    return
  }
  tool.configure(settings, log, api?.config)
  if (!settings.enabled) {
    tool.warnOnce('disabled', "disabled by its config (enabled: false); OpenClaw's built-in Tool Search stays in use")
    return
  }
  // A release before the runtime split, or an untested one with requireTestedRelease set, keeps
  // OpenClaw's own engine (one line says why); an untested one is otherwise served when the seam's
  // structural checks pass (one line says so).
  const version = api?.runtime?.version
  if (!tool.releaseAllowed(version)) return
  if (!tool.loadNative()) return
  // Settings OpenClaw's schema accepts but that cannot work: said once, at start-up.
  const problem = settings.ranking === 'lexical' ? undefined : modelProblem(settings, safeCall(() => tool.native.rankingCapability()), safeCall(() => tool.native.contract().modelFiles))
  if (problem) tool.warnOnce(`model:${problem}`, `${problem}; ranking stays lexical`)
  const seam = installSeamHooks()
  if (seam.reason) {
    tool.warnOnce('hooks', `cannot install its seam (${seam.reason}); OpenClaw's built-in Tool Search stays in use`)
    return
  }
  tool.watchSeam(seam)
  // The live gateway's catalog, audited on request (`openclaw gateway call openclaw-tool-search.audit
  // --json`), exported as indexed (`.catalog`), and what the engine holds (`.status`).
  const methods = { audit: (params) => tool.auditLive(params), status: () => tool.status(), catalog: () => tool.catalogLive() }
  for (const [name, answer] of Object.entries(methods)) {
    try {
      api?.registerGatewayMethod?.(
        `${PLUGIN_ID}.${name}`,
        async ({ params, respond }) => {
          try {
            respond(true, await answer(params))
          } catch (error) {
            respond(false, undefined, { code: typeof error?.code === 'string' ? error.code : 'INTERNAL', message: String(error?.message ?? error) })
          }
        },
        { scope: 'operator.read' },
      )
    } catch {
      // registered already in this registry (OpenClaw registers plugins more than once)
    }
  }
  const missing = () => {
    // A module the seam saw and refused has said why already (watchSeam).
    if (seam.modules.length > 0) return
    // Under `agent exec` without --import the module loaded before the hook: say how to fix it.
    // Otherwise the hook was in place when Tool Search loaded, and no module had its shape.
    if (tool.preloaded || !isAgentExec()) {
      tool.warnOnce(
        'not-found',
        `not installed in this process: the seam saw no module of OpenClaw ${version ?? '(version unknown)'} that declares its Tool Search runtime ` +
          '(ToolSearchRuntime, registerToolSearchCatalog, clearToolSearchCatalog, runCodeModeChild)' +
          (tool.preloaded ? '' : ', or OpenClaw loaded it before this plugin registered (then start the process with NODE_OPTIONS="--import=openclaw-tool-search/openclaw/register")') +
          "; OpenClaw's built-in Tool Search serves this process",
      )
      return
    }
    tool.warnOnce(
      'preloaded',
      'not installed in this process: OpenClaw loaded its Tool Search module before this plugin registered ' +
        '(`openclaw agent exec` does); start the process with NODE_OPTIONS="--import=openclaw-tool-search/openclaw/register" ' +
        "(or the file's absolute path). OpenClaw's built-in Tool Search serves this process",
    )
  }
  if (!tool.seamPatched() && isAgentExec()) missing()
  // Commands that run plugin hooks (the gateway): the first Tool Search call proves the seam.
  if (typeof api?.on === 'function' && !tool.hookRegistered) {
    tool.hookRegistered = true
    // The control tools' names, from their one home (the addon's contract).
    const controlTools = new Set(safeCall(() => tool.native.contract().controlTools) ?? [])
    api.on('before_tool_call', (event) => {
      if (controlTools.has(event?.toolName) && tool.active && !tool.seamPatched()) missing()
      return undefined
    })
  }
}

export default {
  id: PLUGIN_ID,
  name: 'OpenClaw Tool Search (native)',
  description: "Ranks Tool Search with a native index and runs tool_search_code cells in a contained child; OpenClaw keeps policy, hooks and execution.",
  register,
}

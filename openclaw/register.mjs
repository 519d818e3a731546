// `node --import openclaw-tool-search/openclaw/register` (or in NODE_OPTIONS): installs the seam
// before OpenClaw loads, for processes that load Tool Search before plugins register
// (`openclaw agent exec`). The engine still serves only once the plugin is enabled
// (plugins.entries.openclaw-tool-search) and has registered its settings.
import { engine } from './engine.mjs'
import { installSeamHooks } from './hooks.mjs'

const tool = engine()
tool.preloaded = true
const seam = installSeamHooks()
if (seam.reason) process.stderr.write(`openclaw-tool-search: cannot install its seam (${seam.reason})\n`)
else tool.watchSeam(seam)

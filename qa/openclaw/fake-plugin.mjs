// The QA's fake OpenClaw plugin: 300 tools `fake_plugin_tool_001..300`, each `{ marker: string }`
// (required, no other properties), returning `FAKE_PLUGIN_OK <name> <json args>` and appending each
// execution to the file in its config (`logFile`), so the QA sees which tools really ran. OpenClaw
// needs every tool name in the manifest's `contracts.tools`, so the plugin folder is written per
// QA run rather than kept as 300 names in the repository.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export const FAKE_PLUGIN_ID = 'qa-fake-plugin'
export const TOOL_COUNT = 300

const VERBS = ['create', 'archive', 'export', 'import', 'summarize', 'translate', 'schedule', 'cancel', 'approve', 'reject',
  'merge', 'split', 'tag', 'rename', 'restore', 'audit', 'forecast', 'reconcile', 'publish', 'validate']
const OBJECTS = ['invoice', 'calendar event', 'support ticket', 'shipping label', 'payroll run', 'customer record', 'blog post',
  'pull request', 'expense report', 'inventory count', 'sales lead', 'backup snapshot', 'survey response', 'contract draft', 'playlist']

/** Tool `i` (1-based): its name and the capability it describes (20 verbs x 15 objects). */
export function fakeTool(i) {
  const name = `fake_plugin_tool_${String(i).padStart(3, '0')}`
  const verb = VERBS[(i - 1) % VERBS.length]
  const object = OBJECTS[Math.floor((i - 1) / VERBS.length)]
  const capability = `${verb[0].toUpperCase()}${verb.slice(1)} ${/^[aeiou]/.test(object) ? 'an' : 'a'} ${object}`
  return { name, capability, label: `Fake: ${capability}` }
}

const ENTRY = `// Written by qa/openclaw/fake-plugin.mjs.
import { appendFileSync } from 'node:fs'
const TOOLS = __TOOLS__
export default {
  id: ${JSON.stringify(FAKE_PLUGIN_ID)},
  name: 'QA fake plugin',
  register(api) {
    const logFile = api.pluginConfig?.logFile
    for (const { name, capability, label } of TOOLS) {
      api.registerTool({
        name,
        label,
        description: capability + ' in the QA system of record (fake). Returns an OK line that echoes the marker.',
        parameters: {
          type: 'object',
          properties: { marker: { type: 'string', description: 'Marker echoed back in the result' } },
          required: ['marker'],
          additionalProperties: false,
        },
        async execute(_toolCallId, args) {
          const text = 'FAKE_PLUGIN_OK ' + name + ' ' + JSON.stringify(args ?? {})
          if (logFile) appendFileSync(logFile, JSON.stringify({ tool: name, args }) + '\\n')
          return { content: [{ type: 'text', text }], details: { ok: true, name, args } }
        },
      })
    }
  },
}
`

/** Writes the plugin folder (package.json, openclaw.plugin.json, entry.mjs) into `dir`. */
export function writeFakePlugin(dir) {
  mkdirSync(dir, { recursive: true })
  const tools = Array.from({ length: TOOL_COUNT }, (_, k) => fakeTool(k + 1))
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: FAKE_PLUGIN_ID, version: '1.0.0', private: true, type: 'module', openclaw: { extensions: ['./entry.mjs'] } }, null, 2)}\n`)
  writeFileSync(
    join(dir, 'openclaw.plugin.json'),
    `${JSON.stringify({
      id: FAKE_PLUGIN_ID,
      name: 'QA fake plugin',
      description: `${TOOL_COUNT} fake tools for the Tool Search QA`,
      contracts: { tools: tools.map((t) => t.name) },
      activation: { onStartup: true },
      configSchema: { type: 'object', additionalProperties: false, properties: { logFile: { type: 'string' } } },
    }, null, 2)}\n`,
  )
  writeFileSync(join(dir, 'entry.mjs'), ENTRY.replace('__TOOLS__', JSON.stringify(tools)))
  return dir
}

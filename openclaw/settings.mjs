// Settings: `plugins.entries.openclaw-tool-search.config`, checked against and defaulted from the
// manifest's own configSchema (openclaw.plugin.json, read once at load), the one description of
// them; and the check of model settings that schema accepts but that cannot work.
import { existsSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { schemaDefaults, schemaIssues, where } from './schema.mjs'

const require = createRequire(import.meta.url)
/** The plugin's manifest, as OpenClaw reads it: its id and its config schema. */
const MANIFEST = require('../openclaw.plugin.json')
const SCHEMA = MANIFEST.configSchema
/** `learning`'s object form; `true` or `false` is short for `{ enabled }`. */
const LEARNING = SCHEMA.properties.learning.anyOf.find((branch) => branch.type === 'object')

export const PLUGIN_ID = MANIFEST.id

/**
 * Settings from a plugin config object (undefined or null: none set), the manifest's defaults
 * filled in: one setting per key of its schema, `learning` as a boolean beside `learningScope`.
 * Throws when the schema refuses the config, naming each key as OpenClaw's own config check does:
 * `plugins.entries.openclaw-tool-search.config.ranking: invalid config: must be equal to one of
 * the allowed values (allowed: "auto", "lexical", "hybrid")`, issues joined by "; ".
 */
export function resolveSettings(config) {
  const raw = config ?? {}
  const issues = schemaIssues(SCHEMA, raw)
  if (issues.length > 0) {
    const lines = issues.map(({ path, message }) => `plugins.entries.${PLUGIN_ID}.config${path.length > 0 ? `.${where(path)}` : ''}: invalid config: ${message}`)
    throw new Error(lines.join('; '))
  }
  const value = schemaDefaults(SCHEMA, raw)
  const settings = Object.fromEntries(Object.keys(SCHEMA.properties).map((key) => [key, value[key]]))
  const learning = schemaDefaults(LEARNING, typeof value.learning === 'boolean' ? { enabled: value.learning } : value.learning)
  settings.learning = learning.enabled
  settings.learningScope = learning.scope
  return settings
}

/** The settings of an empty config. */
export const DEFAULT_SETTINGS = deepFreeze(resolveSettings(undefined))

function deepFreeze(value) {
  if (typeof value === 'object' && value !== null) for (const inner of Object.values(value)) deepFreeze(inner)
  return Object.freeze(value)
}

/**
 * What is wrong with the plugin's model settings, before any catalog is built: a `modelDir`
 * that is missing, not a folder or without a model file, or `ranking: 'hybrid'` with no model
 * installed. Undefined when nothing is. `modelFiles`: the files a model folder holds (the addon's
 * `contract().modelFiles`).
 */
export function modelProblem(settings, capability, modelFiles = []) {
  if (settings.modelDir !== undefined) {
    let stat
    try {
      stat = statSync(settings.modelDir)
    } catch {
      return `modelDir ${settings.modelDir} does not exist`
    }
    if (!stat.isDirectory()) return `modelDir ${settings.modelDir} is not a folder`
    const missing = modelFiles.filter((file) => !existsSync(join(settings.modelDir, file)))
    if (missing.length > 0) return `modelDir ${settings.modelDir} has no ${missing.join(', ')}`
    return undefined
  }
  if (settings.ranking === 'hybrid' && capability && !capability.hybrid) return `ranking is hybrid but no model is installed (${capability.reason ?? 'no model folder'})`
  return undefined
}

// The subset of JSON Schema the manifest's configSchema (openclaw.plugin.json) uses: a value
// checked against it with OpenClaw's own messages and key paths (its plugin config check,
// dist/schema-validator-*.mjs: `ranking`, `learning.scope`, `<root>` for the object itself), and
// its defaults filled in as OpenClaw fills them (an absent key takes its `default`, an object's
// keys theirs). A keyword outside the subset fails closed: the check throws, so the config is
// refused rather than checked in part.

/** Keywords that only describe (or that schemaDefaults reads). */
const ANNOTATIONS = new Set(['$comment', 'default', 'description', 'examples', 'title'])
/** Keywords schemaIssues checks. */
const CHECKED = new Set(['additionalProperties', 'anyOf', 'const', 'enum', 'minLength', 'properties', 'type'])
const TYPES = {
  array: Array.isArray,
  boolean: (value) => typeof value === 'boolean',
  integer: Number.isInteger,
  null: (value) => value === null,
  number: (value) => typeof value === 'number' && Number.isFinite(value),
  object: (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
  string: (value) => typeof value === 'string',
}

/**
 * What is wrong with `value` under `schema`: `{ path, message, keyword }` per issue, `path` the
 * keys down to it (an absent or undefined key is not checked), `message` in OpenClaw's words.
 * Throws when the schema, anywhere in it, uses a keyword or type this check does not know.
 */
export function schemaIssues(schema, value) {
  knownSchema(schema, [])
  return issuesOf(schema, value, [])
}

function knownSchema(schema, path) {
  if (!TYPES.object(schema)) throw new Error(`configSchema at ${where(path)} is not a schema object`)
  const unknown = Object.keys(schema).find((keyword) => !ANNOTATIONS.has(keyword) && !CHECKED.has(keyword))
  if (unknown !== undefined) throw new Error(`configSchema at ${where(path)} uses "${unknown}", which the plugin's settings check does not know`)
  if ('type' in schema && !Object.hasOwn(TYPES, schema.type)) throw new Error(`configSchema at ${where(path)} has type ${JSON.stringify(schema.type)}, which the plugin's settings check does not know`)
  if ('enum' in schema && !Array.isArray(schema.enum)) throw new Error(`configSchema at ${where(path)} has an enum that is not a list`)
  if ('anyOf' in schema && !Array.isArray(schema.anyOf)) throw new Error(`configSchema at ${where(path)} has an anyOf that is not a list`)
  for (const branch of schema.anyOf ?? []) knownSchema(branch, path)
  for (const [key, property] of Object.entries(schema.properties ?? {})) knownSchema(property, [...path, key])
  if (typeof schema.additionalProperties !== 'boolean' && schema.additionalProperties !== undefined) knownSchema(schema.additionalProperties, [...path, '*'])
}

function issuesOf(schema, value, path) {
  const issues = []
  if ('type' in schema && !TYPES[schema.type](value)) issues.push({ path, keyword: 'type', message: `must be ${schema.type}` })
  if ('const' in schema && !same(value, schema.const)) {
    issues.push({ path, keyword: 'const', message: `must be equal to constant (allowed: ${JSON.stringify(schema.const)})` })
  }
  if ('enum' in schema && !schema.enum.some((allowed) => same(value, allowed))) {
    issues.push({ path, keyword: 'enum', message: `must be equal to one of the allowed values (allowed: ${schema.enum.map((v) => JSON.stringify(v)).join(', ')})` })
  }
  if ('minLength' in schema && typeof value === 'string' && [...value].length < schema.minLength) {
    issues.push({ path, keyword: 'minLength', message: `must not have fewer than ${schema.minLength} characters` })
  }
  if ('anyOf' in schema) issues.push(...anyOfIssues(schema.anyOf, value, path))
  if (TYPES.object(value)) issues.push(...objectIssues(schema, value, path))
  return issues
}

/** The issues of no branch matching: those of the one branch of the value's own kind, else what the branches allow. */
function anyOfIssues(branches, value, path) {
  const failed = branches.map((branch) => issuesOf(branch, value, path))
  if (failed.some((issues) => issues.length === 0)) return []
  // A branch refusing the value's type (or constant) outright says nothing about what is wrong inside it.
  const ownKind = failed.filter((issues) => !issues.some((issue) => issue.path.length === path.length && (issue.keyword === 'type' || issue.keyword === 'const')))
  if (ownKind.length === 1) return ownKind[0]
  const kinds = branches.map((branch) => ('const' in branch ? JSON.stringify(branch.const) : branch.type))
  const message = kinds.every((kind) => typeof kind === 'string') ? `must be ${kinds.join(' or ')}` : 'must match a schema in anyOf'
  return [{ path, keyword: 'anyOf', message }]
}

/** An object's keys: first those the schema has no property for (as OpenClaw lists them), then each property's issues. */
function objectIssues(schema, value, path) {
  const properties = schema.properties ?? {}
  const issues = []
  const extra = Object.keys(value).filter((key) => !Object.hasOwn(properties, key) && value[key] !== undefined)
  if (extra.length > 0 && schema.additionalProperties === false) {
    issues.push({ path, keyword: 'additionalProperties', message: `must not have additional properties: ${extra.map((key) => `"${key}"`).join(', ')}` })
  } else if (typeof schema.additionalProperties === 'object') {
    for (const key of extra) issues.push(...issuesOf(schema.additionalProperties, value[key], [...path, key]))
  }
  for (const [key, property] of Object.entries(properties)) {
    if (Object.hasOwn(value, key) && value[key] !== undefined) issues.push(...issuesOf(property, value[key], [...path, key]))
  }
  return issues
}

/**
 * `value` with the schema's defaults filled in, as OpenClaw fills them: an absent (or undefined)
 * value takes the schema's `default`, and an object's keys their own. `value` is not changed.
 */
export function schemaDefaults(schema, value) {
  let filled = value === undefined && 'default' in schema ? structuredClone(schema.default) : value
  if (TYPES.object(schema.properties) && TYPES.object(filled)) {
    filled = { ...filled }
    for (const [key, property] of Object.entries(schema.properties)) {
      const next = schemaDefaults(property, filled[key])
      if (next !== undefined) filled[key] = next
    }
  }
  return filled
}

/** A key path as OpenClaw writes it (`learning.scope`, `<root>`). */
export function where(path) {
  return path.length > 0 ? path.join('.') : '<root>'
}

function same(a, b) {
  return a === b || (typeof a === 'object' && typeof b === 'object' && a !== null && b !== null && JSON.stringify(a) === JSON.stringify(b))
}

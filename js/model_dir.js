'use strict'
// Finds the hybrid-ranking model's folder: OPENCLAW_TOOL_SEARCH_MODEL_DIR, else
// the optional package openclaw-tool-search-model-minilm. Without either,
// catalogs rank lexically and rankingCapability() says why.

const MODEL_PACKAGE = 'openclaw-tool-search-model-minilm'

/** The model folder (`dir`), or why there is none (`reason`). @returns {{ dir?: string, reason?: string }} */
function findModelDir() {
  const configured = process.env.OPENCLAW_TOOL_SEARCH_MODEL_DIR
  if (configured) return { dir: configured }
  try {
    const { modelDir } = require(MODEL_PACKAGE)
    if (typeof modelDir === 'string' && modelDir !== '') return { dir: modelDir }
    return { reason: `${MODEL_PACKAGE} does not export modelDir` }
  } catch (error) {
    if (error && error.code === 'MODULE_NOT_FOUND') {
      return { reason: `${MODEL_PACKAGE} is not installed (install it for hybrid ranking, or set OPENCLAW_TOOL_SEARCH_MODEL_DIR)` }
    }
    return { reason: `${MODEL_PACKAGE} could not be loaded: ${error && error.message}` }
  }
}

module.exports = { findModelDir }

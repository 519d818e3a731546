'use strict'
// The folder holding config.json, vocab.txt and model.safetensors, for
// openclaw-tool-search's encoder (Encoder::load).
const { join } = require('node:path')

module.exports = { modelDir: join(__dirname, 'model') }

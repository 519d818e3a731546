// node session-log.mjs <stateDir>: OpenClaw's session log (its SQLite session store,
// <stateDir>/agents/<agent>/agent/openclaw-agent.sqlite) as JSON lines
// `{ agent, session, seq, event }`, transcript events in order. Runs on the Node OpenClaw runs on
// (node:sqlite; large events are stored zstd-compressed).
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import zlib from 'node:zlib'

const agents = join(process.argv[2], 'agents')
for (const agent of existsSync(agents) ? readdirSync(agents) : []) {
  const file = join(agents, agent, 'agent', 'openclaw-agent.sqlite')
  if (!existsSync(file)) continue
  const db = new DatabaseSync(file, { readOnly: true })
  for (const row of db.prepare('select session_id, seq, event_json, event_zstd from transcript_events order by session_id, seq').all()) {
    let json = row.event_json
    if (!json && row.event_zstd) json = zlib.zstdDecompressSync(Buffer.from(row.event_zstd)).toString('utf8')
    if (json) process.stdout.write(`${JSON.stringify({ agent, session: row.session_id, seq: row.seq, event: JSON.parse(json) })}\n`)
  }
  db.close()
}

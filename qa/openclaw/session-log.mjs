// node session-log.mjs <stateDir>: OpenClaw's session log (its SQLite session store,
// <stateDir>/agents/<agent>/agent/openclaw-agent.sqlite) as JSON lines
// `{ agent, session, seq, event }`, transcript events in order. Runs on the Node OpenClaw runs on
// (node:sqlite; from 2026.9.x large events are stored zstd-compressed).
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import zlib from 'node:zlib'

const agents = join(process.argv[2], 'agents')
for (const agent of existsSync(agents) ? readdirSync(agents) : []) {
  const file = join(agents, agent, 'agent', 'openclaw-agent.sqlite')
  if (!existsSync(file)) continue
  const db = new DatabaseSync(file, { readOnly: true })
  // `event_zstd` (large events compressed) exists from 2026.9.x; 2026.8.x stores every event as JSON.
  const columns = new Set(db.prepare('pragma table_info(transcript_events)').all().map((c) => c.name))
  const zstd = columns.has('event_zstd') ? 'event_zstd' : 'null as event_zstd'
  for (const row of db.prepare(`select session_id, seq, event_json, ${zstd} from transcript_events order by session_id, seq`).all()) {
    let json = row.event_json
    if (!json && row.event_zstd) json = zlib.zstdDecompressSync(Buffer.from(row.event_zstd)).toString('utf8')
    if (json) process.stdout.write(`${JSON.stringify({ agent, session: row.session_id, seq: row.seq, event: JSON.parse(json) })}\n`)
  }
  db.close()
}

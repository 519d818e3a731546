// JSONL session log: one line per model request, tool call and tool result (plus session events
// and the run's start and end), written as the run goes so a crashed run still leaves its log.

import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

export type LogType =
  | 'run.start'
  | 'model.request'
  | 'tool.call'
  | 'tool.result'
  | 'session.event'
  | 'catalog.change'
  | 'run.end';

export interface LogLine {
  seq: number;
  ts: string;
  runId: string;
  lane: string;
  type: LogType;
  [field: string]: unknown;
}

export class SessionLog {
  private fd: number | null;
  private seq = 0;
  readonly lines: LogLine[] = [];

  constructor(readonly path: string, private readonly runId: string, private readonly lane: string) {
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, 'w');
  }

  write(type: LogType, fields: Record<string, unknown>): LogLine {
    const line: LogLine = { seq: ++this.seq, ts: new Date().toISOString(), runId: this.runId, lane: this.lane, type, ...fields };
    this.lines.push(line);
    if (this.fd !== null) writeSync(this.fd, `${JSON.stringify(line)}\n`);
    return line;
  }

  close(): void {
    if (this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
  }

  /** Reads a log back from disk: assertions run on what was written, not on memory. */
  static read(path: string): LogLine[] {
    return readFileSync(path, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line, i) => {
        const parsed = JSON.parse(line) as LogLine;
        if (typeof parsed.type !== 'string' || typeof parsed.runId !== 'string') throw new Error(`${path}:${i + 1}: not a session log line`);
        return parsed;
      });
  }
}

// `pnpm qa [--tools 36|500|5000] [--parallel N] [--log-dir DIR] [--json]`: runs the gateway
// scenario, prints the lane table and the checks, exits 1 if anything failed.

import { parseArgs } from 'node:util';
import { SUPPORTED_SIZES } from './fake-plugin.mjs';
import { runQa } from './scenario.mjs';
import { formatReport } from './table.mjs';

function usage(message: string): never {
  process.stderr.write(`${message}\nusage: pnpm qa [--tools ${SUPPORTED_SIZES.join('|')}] [--parallel N] [--log-dir DIR] [--json]\n`);
  process.exit(2);
}

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        tools: { type: 'string', default: '36' },
        parallel: { type: 'string', default: '20' },
        'log-dir': { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    }));
  } catch (err) {
    usage((err as Error).message);
  }
  const tools = Number(values.tools);
  if (!(SUPPORTED_SIZES as readonly number[]).includes(tools)) usage(`--tools must be one of ${SUPPORTED_SIZES.join(', ')}`);
  const parallel = Number(values.parallel);
  if (!Number.isInteger(parallel) || parallel < 1 || parallel > 200) usage('--parallel must be an integer from 1 to 200');
  const report = await runQa({ tools, parallel, logRoot: values['log-dir'] });
  process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatReport(report)}\n`);
  process.exitCode = report.ok ? 0 : 1;
}

main().catch((err) => {
  process.stderr.write(`qa: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
});

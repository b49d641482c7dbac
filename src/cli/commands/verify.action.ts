import { ReinError } from '../../host/host-errors.js';
import { describeChain, verifyStreamChain } from '../../session/verify-session.js';
import { printJson } from '../cli-context.js';
import { printText } from '../print-text.js';
import { withStore } from './sessions.action.js';
import type { VerifyOptions } from './verify.flags.js';
import type { ChainReport } from '../../../stores/chain-check.js';

const codeOf = (error: unknown): string | undefined => (error as { code?: unknown }).code as string | undefined;

/**
 * The body of `rein verify`: one line per stream (`--json`: its `ChainReport`). A chain that fails is the command's
 * error (`CHAIN_BROKEN` exit 4, `CHAIN_UNAUTHENTICATED` exit 5); with `--all`, every stream is checked first and the
 * worst failure ends the command (a broken chain before an unauthenticated one).
 */
export const verifyCommand = (id: string | undefined, options: VerifyOptions): Promise<void> =>
  withStore(options, 'read-only', async (store) => {
    if ((id === undefined) === (options.all !== true)) throw new ReinError('USAGE', 'rein verify takes a session id, or --all');
    const streams = id !== undefined ? [id] : store.streamNames ? await store.streamNames() : (await store.streams()).map((info) => info.stream);
    const failures: Array<{ stream: string; error: unknown }> = [];
    for (const stream of streams) {
      let report: ChainReport;
      try {
        report = await verifyStreamChain(store, stream);
      } catch (error) {
        const code = codeOf(error) ?? 'ERROR';
        // `--json` prints the report of a chain that fails too (its status, the first record concerned and why).
        if (options.json) printJson((error as { report?: ChainReport }).report ?? { stream, error: { code, message: (error as Error).message } });
        if (id !== undefined) throw error;
        failures.push({ stream, error });
        if (!options.json) printText(`${stream}: ${code}: ${(error as Error).message}\n`);
        continue;
      }
      if (options.json) printJson(report);
      else printText(`${stream}: ${describeChain(report)}\n`);
    }
    if (id === undefined && !options.json) printText(`${streams.length} streams, ${failures.length} not verified\n`);
    const worst = failures.find((failure) => codeOf(failure.error) === 'CHAIN_BROKEN') ?? failures.find((failure) => codeOf(failure.error) === 'CHAIN_UNAUTHENTICATED') ?? failures[0];
    if (worst !== undefined) throw worst.error;
  });

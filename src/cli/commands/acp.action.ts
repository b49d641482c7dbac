import { Readable } from 'node:stream';
import { ndJsonStream } from '@agentclientprotocol/sdk';
import { createAcpAgent } from '../../acp/acp-agent.js';
import { budgetsOf } from '../budget-options.js';
import { permissionsOf, sandboxOf } from '../permission-options.js';
import { visibleLimitOf } from '../capability-options.js';
import type { AcpCommandOptions } from './acp.flags.js';

/**
 * The body of `rein acp` (see `registerAcp`): stdout carries the protocol and nothing else — anything else written
 * there (a library's stray `console.log`) goes to stderr instead. Runs until the editor closes stdin; then running
 * turns are interrupted (resumable) and the stores closed.
 */
export const acpCommand = async (options: AcpCommandOptions): Promise<void> => {
  // A bad flag is a usage error before the protocol starts.
  budgetsOf(options);
  permissionsOf(options);
  sandboxOf(options);
  visibleLimitOf(options);
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => (process.stderr.write as (...args: unknown[]) => boolean)(chunk, ...rest)) as typeof process.stdout.write;
  const output = new WritableStream<Uint8Array>({
    write: (chunk) =>
      new Promise<void>((resolve, reject) => {
        write(chunk, (error) => (error ? reject(error) : resolve()));
      }),
  });
  const input = Readable.toWeb(process.stdin) as unknown as ReadableStream<Uint8Array>;
  const agent = createAcpAgent(options);
  const connection = agent.app.connect(ndJsonStream(output, input));
  const stop = () => connection.close();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  try {
    await connection.closed;
  } finally {
    await agent.close();
    process.stdout.write = write as typeof process.stdout.write;
  }
};



import type { Command } from 'commander';
import { ReinError } from '../../host/host-errors.js';
import { createMemoryGovernance, type MemoryGovernance } from '../../memory/memory-governance.js';
import { openStore, printJson, workspaceOf, type CommonOptions } from '../cli-context.js';
import { candidateLines, healthLine, recordLine, showLines } from '../memory-render.js';
import { addCommonOptions } from './run.command.js';

const scopeLevels = ['user', 'workspace', 'repo', 'branch'] as const;

/**
 * Run `work` against the workspace's memory governance. Reading commands open the store read-only (copies, never
 * a lock). Writing ones write only the governance stream (let go right after each write) and read session logs
 * through a read-only store, so they work while other processes run sessions.
 */
const withGovernance = async <T>(options: CommonOptions, mode: 'read' | 'write', work: (governance: MemoryGovernance) => Promise<T>): Promise<T> => {
  const workspace = await workspaceOf(options);
  const sessions = await openStore(options, workspace, 'read-only');
  const store = mode === 'write' ? await openStore(options, workspace, 'write') : sessions;
  try {
    return await work(createMemoryGovernance({ store, sessions }));
  } finally {
    if (store !== sessions) await store.close();
    await sessions.close();
  }
};

const print = (lines: readonly string[]): void => {
  process.stdout.write(lines.map((line) => `${line}\n`).join(''));
};

/** `rein memory list | show | review | approve | reject | revoke | health`: the human side of memory governance. */
export const registerMemory = (program: Command): void => {
  const memory = program.command('memory').description('review, approve, reject and revoke governed long-term memory, and check its health');

  addCommonOptions(memory.command('list').description('list the store records (active ones unless --all)').option('--all', 'include deprecated, revoked and expired records')).action((options: CommonOptions & { all?: boolean }) =>
    withGovernance(options, 'read', async (governance) => {
      const records = await governance.list({ all: Boolean(options.all) });
      if (options.json) return records.forEach(printJson);
      print(records.length === 0 ? ['no memory records'] : records.map(recordLine));
    }),
  );

  addCommonOptions(memory.command('show').description('one record or candidate, with its audit trail').argument('<id>', 'record or candidate id')).action((id: string, options: CommonOptions) =>
    withGovernance(options, 'read', async (governance) => {
      const found = await governance.show(id);
      if (options.json) return printJson(found);
      print(showLines(found));
    }),
  );

  addCommonOptions(memory.command('review').description('candidates waiting for a person or for more evidence')).action((options: CommonOptions) =>
    withGovernance(options, 'read', async (governance) => {
      const candidates = await governance.review();
      if (options.json) return candidates.forEach(printJson);
      print(candidates.length === 0 ? ['nothing to review'] : candidates.flatMap(candidateLines));
    }),
  );

  addCommonOptions(
    memory
      .command('approve')
      .description('approve a candidate and promote it into the store (its source turns must have reached MutationReady)')
      .argument('<candidateId>', 'candidate id')
      .option('--content <text>', 'store a narrower, more accurate statement instead')
      .option('--scope <level>', `store it at this scope (${scopeLevels.join(', ')})`),
  ).action((candidateId: string, options: CommonOptions & { content?: string; scope?: string }) => {
    const scope = options.scope;
    if (scope !== undefined && !(scopeLevels as readonly string[]).includes(scope)) throw new ReinError('USAGE', `--scope must be one of ${scopeLevels.join(', ')}`);
    return withGovernance(options, 'write', async (governance) => {
      const { decision, record } = await governance.approve(candidateId, { ...(options.content ? { content: options.content } : {}), ...(scope ? { scope: scope as (typeof scopeLevels)[number] } : {}) });
      if (options.json) return printJson({ candidateId, recordId: record.recordId, record, decision: { outcome: decision.outcome, reason: decision.reason, adjustments: decision.adjustments, risks: decision.risks, gate: decision.gate } });
      print([`promoted ${candidateId} as ${record.recordId}: v${record.version}, ${record.scope.level} scope, ${record.confidence} confidence, ${record.authority}${record.supersedes ? `; supersedes ${record.supersedes.join(', ')}` : ''}`]);
    });
  });

  addCommonOptions(memory.command('reject').description('reject a candidate for good').argument('<candidateId>', 'candidate id').requiredOption('--reason <text>', 'why (kept in the audit trail)')).action(
    (candidateId: string, options: CommonOptions & { reason: string }) =>
      withGovernance(options, 'write', async (governance) => {
        await governance.reject(candidateId, options.reason);
        if (options.json) return printJson({ candidateId, status: 'rejected', reason: options.reason });
        print([`rejected ${candidateId}`]);
      }),
  );

  addCommonOptions(memory.command('revoke').description('revoke a store record ("forget that"); it stays, revoked, for audit').argument('<recordId>', 'record id').requiredOption('--reason <text>', 'why (kept in the audit trail)')).action(
    (recordId: string, options: CommonOptions & { reason: string }) =>
      withGovernance(options, 'write', async (governance) => {
        await governance.revoke(recordId, options.reason);
        if (options.json) return printJson({ recordId, status: 'revoked', reason: options.reason });
        print([`revoked ${recordId}`]);
      }),
  );

  addCommonOptions(memory.command('health').description('expired, due for review, too broad, sourceless and conflicting active records')).action((options: CommonOptions) =>
    withGovernance(options, 'read', async (governance) => {
      const findings = await governance.health();
      if (options.json) return findings.forEach(printJson);
      print(findings.length === 0 ? ['healthy: no findings'] : findings.map(healthLine));
    }),
  );
};

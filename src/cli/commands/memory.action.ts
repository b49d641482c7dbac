import { ReinError } from '../../host/host-errors.js';
import { createMemoryGovernance, type MemoryGovernance } from '../../memory/memory-governance.js';
import { openStore, printJson, workspaceOf, type CommonOptions } from '../cli-context.js';
import { printText } from '../print-text.js';
import { candidateLines, healthLine, recordLine, showLines } from '../memory-render.js';
import { maxMemoryContent } from '../../memory/governance-policy.js';
import { scopeLevels } from './memory.flags.js';

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
  printText(lines.map((line) => `${line}\n`).join(''));
};

/** `rein memory list`. */
export const listCommand = (options: CommonOptions & { all?: boolean }): Promise<void> =>
  withGovernance(options, 'read', async (governance) => {
    const records = await governance.list({ all: Boolean(options.all) });
    if (options.json) return records.forEach(printJson);
    print(records.length === 0 ? ['no memory records'] : records.map(recordLine));
  });

/** `rein memory show`. */
export const showCommand = (id: string, options: CommonOptions): Promise<void> =>
  withGovernance(options, 'read', async (governance) => {
    const found = await governance.show(id);
    if (options.json) return printJson(found);
    print(showLines(found));
  });

/** `rein memory review`. */
export const reviewCommand = (options: CommonOptions): Promise<void> =>
  withGovernance(options, 'read', async (governance) => {
    const candidates = await governance.review();
    if (options.json) return candidates.forEach(printJson);
    print(candidates.length === 0 ? ['nothing to review'] : candidates.flatMap(candidateLines));
  });

/** `rein memory approve`. */
export const approveCommand = (candidateId: string, options: CommonOptions & { content?: string; scope?: string }): Promise<void> => {
  const scope = options.scope;
  if (scope !== undefined && !(scopeLevels as readonly string[]).includes(scope)) throw new ReinError('USAGE', `--scope must be one of ${scopeLevels.join(', ')}`);
  const content = options.content?.trim();
  if (content !== undefined && (content === '' || content.length > maxMemoryContent)) throw new ReinError('USAGE', `--content must be 1-${maxMemoryContent} characters`);
  return withGovernance(options, 'write', async (governance) => {
    const { decision, record } = await governance.approve(candidateId, { ...(options.content !== undefined ? { content: options.content } : {}), ...(scope ? { scope: scope as (typeof scopeLevels)[number] } : {}) });
    if (options.json) return printJson({ candidateId, recordId: record.recordId, record, decision: { outcome: decision.outcome, reason: decision.reason, adjustments: decision.adjustments, risks: decision.risks, gate: decision.gate } });
    print([`promoted ${candidateId} as ${record.recordId}: v${record.version}, ${record.scope.level} scope, ${record.confidence} confidence, ${record.authority}${record.supersedes ? `; supersedes ${record.supersedes.join(', ')}` : ''}`]);
  });
};

/** `rein memory reject`. */
export const rejectCommand = (candidateId: string, options: CommonOptions & { reason: string }): Promise<void> =>
  withGovernance(options, 'write', async (governance) => {
    await governance.reject(candidateId, options.reason);
    if (options.json) return printJson({ candidateId, status: 'rejected', reason: options.reason });
    print([`rejected ${candidateId}`]);
  });

/** `rein memory revoke`. */
export const revokeCommand = (recordId: string, options: CommonOptions & { reason: string }): Promise<void> =>
  withGovernance(options, 'write', async (governance) => {
    await governance.revoke(recordId, options.reason);
    if (options.json) return printJson({ recordId, status: 'revoked', reason: options.reason });
    print([`revoked ${recordId}`]);
  });

/** `rein memory health`. */
export const healthCommand = (options: CommonOptions): Promise<void> =>
  withGovernance(options, 'read', async (governance) => {
    const findings = await governance.health();
    if (options.json) return findings.forEach(printJson);
    print(findings.length === 0 ? ['healthy: no findings'] : findings.map(healthLine));
  });

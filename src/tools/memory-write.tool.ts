import * as z from 'zod';
import { MemoryKind } from '../../models/memory.records.js';
import { defineTool, readOnlyAnnotations, toolFailure } from './tool.js';
import { lazySchema } from '../../models/lazy-schema.js';

export const MemoryWriteParameters = lazySchema(() => z
  .object({
    content: z.string().min(1).max(2_000).describe('One precise statement, as narrow as what you observed'),
    kind: MemoryKind,
    scope: z.enum(['task', 'branch', 'repo', 'workspace', 'user']).optional().describe('Where it holds (default repo)'),
    topic: z.string().min(1).max(60).optional().describe('E.g. test-command; memories on one topic are checked for conflicts'),
    evidence: z.array(z.string().min(1)).max(20).optional().describe('Ids of earlier calls in this session that support it'),
    ttl_days: z.number().int().min(1).max(365).optional().describe('Days to keep it'),
    task_type: z.string().min(1).max(60).optional().describe('Kind of task, e.g. test-fix'),
  })
  .strict());
export type MemoryWriteParameters = z.infer<typeof MemoryWriteParameters>;

/**
 * `memory_write`: propose a memory candidate. It never writes memory: the candidate enters this session's ledger
 * (`memory.proposed`, status `pending`, confidence `low`) and governance decides when the session ends — risky
 * content (permissions, credentials, procedural rules, user-level scope) waits for a person. It is read-only in the
 * permission sense: it changes nothing outside the session's own log, so it runs without asking.
 */
export const memoryWriteTool = defineTool<MemoryWriteParameters>({
  name: 'memory_write',
  description: 'Propose a memory for future sessions in this repository; it stays pending until governance (or a person) approves it.',
  parameters: MemoryWriteParameters,
  annotations: readOnlyAnnotations,
  risk: 'read',
  sideEffect: 'none',
  resumePolicy: 'rerun-after-check',
  async execute(args, context) {
    if (!context.memory) return toolFailure('NotFound', 'memory is not enabled in this harness', 'memory_disabled');
    const proposed = context.memory.propose({
      content: args.content,
      kind: args.kind,
      ...(args.scope ? { scope: args.scope } : {}),
      ...(args.topic ? { topic: args.topic } : {}),
      ...(args.evidence ? { evidence: args.evidence } : {}),
      ...(args.ttl_days ? { ttlDays: args.ttl_days } : {}),
      ...(args.task_type ? { taskType: args.task_type } : {}),
    });
    if (!proposed.ok) return toolFailure('InvalidInput', proposed.message, 'invalid_memory_candidate');
    const { candidate } = proposed;
    return {
      ok: true,
      output: `proposed memory candidate ${candidate.candidateId} (${candidate.kind}, ${candidate.scope.level} scope, source ${candidate.source.type}): pending — governance reviews it when this session ends; it is not memory yet and changes nothing now`,
      data: { candidateId: candidate.candidateId },
    };
  },
});

import type { MemoryProposed } from '../../models/memory.records.js';
import { maxMemoryContent } from './governance-policy.js';
import { scopeKeyOf, type MemoryScopeKeys } from './memory-scope.js';
import type { MemoryProposalRequest } from '../tools/tool-memory.js';

const day = 24 * 60 * 60 * 1000;

const slug = (topic: string): string => topic.trim().toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60);

/**
 * Turn a `memory_write` proposal into a candidate. The runtime fills in what the model may not choose: the id, the
 * scope key (from the session's boundaries), the sources (the model reply that made the call, and the results of
 * the calls it cites as evidence — source `tool_output` — or none, `agent_reflection`), the conflict key
 * (`<level>:<key>:<topic>`), `createdBy: model` and confidence `low`. A model-correctable problem (empty or
 * over-long content, evidence that names no call of this session) is a failure message. Pure apart from the id.
 */
export const proposalOf = (input: {
  request: MemoryProposalRequest;
  sessionId: string;
  scope: MemoryScopeKeys;
  now: number;
  newCandidateId: () => string;
  /** The model reply that proposed this call. */
  call: { modelRecordId: string } | undefined;
  /** The `tool.settled` record id of an earlier call of this agent, by call id. */
  evidence: (callId: string) => string | undefined;
}): { ok: true; candidate: MemoryProposed } | { ok: false; message: string } => {
  const { request } = input;
  const content = request.content.trim();
  if (content === '' || content.length > maxMemoryContent) return { ok: false, message: `content must be 1-${maxMemoryContent} characters` };
  if (!input.call) return { ok: false, message: 'memory_write must be called from a model turn' };
  const cited = [...new Set(request.evidence ?? [])];
  const evidence = cited.map((callId) => ({ callId, recordId: input.evidence(callId) }));
  const unknown = evidence.filter((entry) => entry.recordId === undefined).map((entry) => entry.callId);
  if (unknown.length > 0) return { ok: false, message: `evidence must name earlier tool calls of this session that have a result; unknown: ${unknown.join(', ')}` };
  const level = request.scope ?? 'repo';
  const key = scopeKeyOf(level, input.scope, input.sessionId);
  const topic = request.topic ? slug(request.topic) : '';
  return {
    ok: true,
    candidate: {
      candidateId: input.newCandidateId(),
      content,
      kind: request.kind,
      scope: { level, key },
      source: { type: evidence.length > 0 ? 'tool_output' : 'agent_reflection', eventIds: [input.call.modelRecordId, ...evidence.map((entry) => entry.recordId!)] },
      confidence: 'low',
      ...(request.ttlDays === undefined ? {} : { ttl: { expiresAt: input.now + request.ttlDays * day } }),
      conflictKeys: topic && level !== 'task' ? [`${level}:${key}:${topic}`] : [],
      createdBy: 'model',
      ...(request.taskType ? { taskType: request.taskType } : {}),
    },
  };
};

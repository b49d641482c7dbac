import type { RecordEnvelope } from '../../models/envelope.js';
import type { ModelResponded } from '../../models/model.records.js';
import type { MemoryProposed } from '../../models/memory.records.js';
import type { VerificationRecorded } from '../../models/verification.records.js';
import type * as z from 'zod';
import type { TurnBlocked, TurnMutationReady } from '../../models/turn.records.js';
import { flattenRecords } from '../host/step-record.js';

/** Where a tool turn of a session got to, as its typestate recorded it (`turn.mutation-ready` / `turn.blocked`). */
export type TurnStatus = { status: 'mutation-ready' } | { status: 'blocked'; classes: readonly string[] };

/** What the MutationReady gate needs from a session's log. */
export interface TurnEvidence {
  /** Turn id (the model call's effect id) → the typestate's verdict; a turn with neither record is still open. */
  turns: ReadonlyMap<string, TurnStatus>;
  /** Record id → the tool turn it belongs to (tool records, verifications, memory proposals of a call). */
  recordTurns: ReadonlyMap<string, string>;
  /** Candidate id → its `memory.proposed` record. */
  proposals: ReadonlyMap<string, { record: RecordEnvelope; data: MemoryProposed }>;
  /** The root agent's `session.ended` was recorded: an open turn will never close. */
  ended: boolean;
  /** `verification.recorded` id → whether it is a passing run (status `passed` with exit code 0 on record). */
  verifications: ReadonlyMap<string, boolean>;
}

const callIdOf = (record: RecordEnvelope): string | undefined => {
  const data = record.data as { callId?: unknown } | undefined;
  if (typeof data?.callId === 'string') return data.callId;
  return record.corr;
};

/**
 * Read the typestate's evidence out of a session's records, in one pass: which turns reached MutationReady or were
 * blocked, and which tool turn each call-linked record belongs to (a call belongs to the latest model reply of its
 * actor that proposed it). Nothing is re-derived: the verdicts are the turn machine's own witness records. Pure.
 */
export const turnEvidenceOf = (records: Iterable<RecordEnvelope>): TurnEvidence => {
  const turns = new Map<string, TurnStatus>();
  const recordTurns = new Map<string, string>();
  const proposals = new Map<string, { record: RecordEnvelope; data: MemoryProposed }>();
  const callTurns = new Map<string, string>();
  const verifications = new Map<string, boolean>();
  let ended = false;
  for (const record of flattenRecords(records)) {
    switch (record.type) {
      case 'model.responded': {
        const data = record.data as ModelResponded;
        if (data.toolCalls.length === 0) break;
        recordTurns.set(record.id, data.effectId);
        for (const call of data.toolCalls) callTurns.set(`${record.actor}\u0000${call.callId}`, data.effectId);
        continue;
      }
      case 'turn.mutation-ready':
        turns.set((record.data as z.infer<typeof TurnMutationReady>).turnId, { status: 'mutation-ready' });
        break;
      case 'turn.blocked': {
        const data = record.data as z.infer<typeof TurnBlocked>;
        turns.set(data.turnId, { status: 'blocked', classes: [...new Set(data.findings.map((finding) => finding.class))] });
        break;
      }
      case 'memory.proposed': {
        const data = record.data as MemoryProposed;
        proposals.set(data.candidateId, { record, data });
        break;
      }
      case 'session.ended':
        if (!record.actor.includes('/')) ended = true;
        break;
      case 'verification.recorded': {
        const data = record.data as VerificationRecorded;
        verifications.set(record.id, data.status === 'passed' && data.exitCode === 0);
        break;
      }
      default:
    }
    const callId = callIdOf(record);
    const turn = callId === undefined ? undefined : callTurns.get(`${record.actor}\u0000${callId}`);
    if (turn !== undefined) recordTurns.set(record.id, turn);
  }
  return { turns, recordTurns, proposals, ended, verifications };
};

/** The tool turns a candidate came from: its proposal's own call (memory_write) and every source record's turn. */
export const sourceTurnsOf = (evidence: TurnEvidence, candidateId: string, eventIds: readonly string[]): string[] => {
  const found = new Set<string>();
  const proposal = evidence.proposals.get(candidateId);
  const own = proposal ? evidence.recordTurns.get(proposal.record.id) : undefined;
  if (own !== undefined) found.add(own);
  for (const id of eventIds) {
    const turn = evidence.recordTurns.get(id);
    if (turn !== undefined) found.add(turn);
  }
  return [...found].sort();
};

/**
 * The sources of a verified observation that are not a passing run: a source that is no verification at all, a
 * failed one, or one with no exit code on record (a claim). Empty for any other kind of candidate.
 */
export const unverifiedSourcesOf = (evidence: TurnEvidence, candidate: Pick<MemoryProposed, 'source'>): string[] =>
  candidate.source.type !== 'verified_observation' ? [] : candidate.source.eventIds.filter((id) => evidence.verifications.get(id) !== true);

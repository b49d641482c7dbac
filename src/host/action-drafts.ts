/*
 * The records a machine action derives: `requestEffect` is an `effect.requested` intent, `emitRecord` the record it
 * names. Shared by the host's interpreter (pure-tree.ts). Split from pure-tree.ts (issue 31).
 */
import type { EmitRecordParams, RequestEffectParams } from '../../machines/session.machine.js';
import type { DerivedDraft } from './step-record.js';

/** The draft a machine action of `path` derives, or undefined for an action that derives none. */
export const draftOfAction = (path: string, type: string, params: unknown): DerivedDraft | undefined => {
  if (type === 'requestEffect') {
    const request = params as RequestEffectParams;
    const callId = typeof request.args.callId === 'string' ? request.args.callId : undefined;
    return { type: 'effect.requested', actor: path, data: { effectId: request.effectId, kind: request.kind, args: request.args }, ...(callId ? { corr: callId } : {}) };
  }
  if (type === 'emitRecord') {
    const emitted = params as EmitRecordParams & { corr?: string };
    return { type: emitted.type, actor: path, data: emitted.data, ...(emitted.corr ? { corr: emitted.corr } : {}) };
  }
  return undefined;
};

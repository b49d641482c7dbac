/*
 * The records a machine action derives: `requestEffect` is an `effect.requested` intent, `emitRecord` the record it
 * names. Shared by the host's interpreter (pure-tree.ts). Split from pure-tree.ts (issue 31).
 */
import type { EmitRecordParams, RequestEffectParams } from '../../machines/session.machine.js';
import type { DerivedDraft } from './step-record.js';

/** The draft a machine action of `path` derives, or undefined for an action that derives none. */
export const draftOfAction = (path: string, type: string, params: unknown): DerivedDraft | undefined => {
  // Each draft is a literal and then its `corr`, where there is one: the same keys in the same order as a trailing
  // conditional spread, without building and spreading an object per action.
  if (type === 'requestEffect') {
    const request = params as RequestEffectParams;
    const draft: DerivedDraft = { type: 'effect.requested', actor: path, data: { effectId: request.effectId, kind: request.kind, args: request.args } };
    if (typeof request.args.callId === 'string' && request.args.callId) draft.corr = request.args.callId;
    return draft;
  }
  if (type === 'emitRecord') {
    const emitted = params as EmitRecordParams & { corr?: string };
    const draft: DerivedDraft = { type: emitted.type, actor: path, data: emitted.data };
    if (emitted.corr) draft.corr = emitted.corr;
    return draft;
  }
  return undefined;
};

import type { RecordEnvelope } from '../../models/envelope.js';
import type { EffectResolved } from '../../models/effect.records.js';
import type { WorkspaceCaptured } from '../../models/workspace.records.js';
import type { EventStore } from '../../stores/event-store.js';
import type { Workspace } from '../tools/workspace.js';
import { readSessionRecords } from '../session/read-session.js';
import { CaptureFilter, type CaptureOptions } from './capture-rules.js';
import { loggedTree } from './tree-manifest.js';
import { WorkspaceCapture, type KnownTree } from './workspace-capture.js';

/** The capture settings a harness gives its sessions. */
export interface CaptureServices {
  options: CaptureOptions;
  /** `scan`: never use inotify (tests and benchmarks compare the two). */
  detector?: 'auto' | 'scan';
}

/**
 * The tree a session's log holds, with the tool calls an earlier run left in doubt since its last workspace record
 * (resume resolved them: `effect.resolved`), to which changes found now may belong.
 */
export const knownTreeOf = async (store: Pick<EventStore, 'readBlob'>, sessionId: string, records: readonly RecordEnvelope[]): Promise<KnownTree | undefined> => {
  const logged = await loggedTree(records, (ref) => store.readBlob(sessionId, ref));
  if (!logged) return undefined;
  let last = 0;
  for (const record of records) if (record.type.startsWith('workspace.')) last = record.seq;
  const inDoubt = records.filter((record) => record.seq > last && record.type === 'effect.resolved' && (record.data as EffectResolved).kind === 'executeTool').map((record) => (record.data as EffectResolved).effectId);
  const captured = records.find((record) => record.type === 'workspace.captured');
  return { tree: logged.tree, inDoubt, never: (captured?.data as WorkspaceCaptured | undefined)?.rules.never ?? [] };
};

/** The capture of one session's workspace, or undefined when capture is off. */
export const sessionCaptureOf = (services: { store: EventStore; workspace: Workspace; capture?: CaptureServices }, sessionId: string): WorkspaceCapture | undefined => {
  const settings = services.capture;
  if (!settings || settings.options.enabled === false || sessionId === '') return undefined;
  return new WorkspaceCapture({
    root: services.workspace.root,
    filter: new CaptureFilter(services.workspace.root, settings.options, services.workspace.protectedList()),
    blobs: services.store.blobs,
    known: async () => knownTreeOf(services.store, sessionId, await readSessionRecords(services.store, sessionId)),
    ...(settings.detector ? { detector: settings.detector } : {}),
  });
};

import type { RecordEnvelope } from '../../models/envelope.js';
import type { TreeEntry, WorkspaceCaptured, WorkspaceChanged } from '../../models/workspace.records.js';
import { ReinError } from '../host/host-errors.js';
import { WorkspaceTree } from './workspace-tree.js';
import { loadBlake3 } from '../util/blake3.js';

/** A tree's listing as the blob `workspace.captured` names: `{"entries":[[path, entry], …]}`, sorted by path. */
export const manifestBytes = (list: ReadonlyArray<readonly [string, TreeEntry]>): Uint8Array => Buffer.from(JSON.stringify({ entries: list }), 'utf8');

/** The tree a manifest blob lists. */
export const treeOfManifest = (bytes: Uint8Array): WorkspaceTree => {
  const parsed = JSON.parse(Buffer.from(bytes).toString('utf8')) as { entries?: Array<[string, TreeEntry]> };
  if (!Array.isArray(parsed.entries)) throw new ReinError('SESSION_INVALID', 'a workspace manifest blob lists no entries');
  return WorkspaceTree.of(parsed.entries);
};

/** Reads a blob the session's records name (`EventStore.readBlob` bound to its stream). */
export type BlobReader = (ref: string) => Promise<Uint8Array>;

/** The workspace tree a session's log holds at a seq, and where its capture began. */
export interface LoggedTree {
  tree: WorkspaceTree;
  /** The seq of the session's `workspace.captured`. */
  capturedSeq: number;
}

/**
 * The tree as the log holds it once record `atSeq` (default: the last) is durable: the baseline `workspace.captured`
 * lists, with every `workspace.changed` up to `atSeq` applied in order. Before its first capture the workspace is known
 * only as that capture found it, so a seq before it gives the baseline. Undefined when the session never captured.
 */
export const loggedTree = async (records: readonly RecordEnvelope[], read: BlobReader, atSeq = Number.POSITIVE_INFINITY): Promise<LoggedTree | undefined> => {
  const captured = records.find((record) => record.type === 'workspace.captured');
  if (!captured) return undefined;
  await loadBlake3();
  const tree = treeOfManifest(await read((captured.data as WorkspaceCaptured).manifest));
  for (const record of records) {
    if (record.seq > atSeq) break;
    if (record.seq > captured.seq && record.type === 'workspace.changed') tree.apply((record.data as WorkspaceChanged).changes);
  }
  return { tree, capturedSeq: captured.seq };
};

import { createBlake3, loadBlake3 } from '../util/blake3.js';
import type { CaptureFilter } from './capture-rules.js';
import { ChangeAccumulator, readDirectory } from './tree-reader.js';
import { WorkspaceTree } from './workspace-tree.js';

/** The workspace as it is on disk now, through `filter`, with the bytes of every new content (by ref) when asked. */
export const scanWorkspace = async (root: string, filter: CaptureFilter, options: { keep?: (ref: string) => boolean } = {}): Promise<{ tree: WorkspaceTree; bytes: Map<string, Uint8Array> }> => {
  await loadBlake3();
  const tree = new WorkspaceTree();
  const bytes = new Map<string, Uint8Array>();
  const keep = options.keep;
  await readDirectory(
    {
      root,
      tree,
      metas: new Map(),
      filter,
      hasher: await createBlake3(),
      ...(keep
        ? {
            onBytes: (entry, content) => {
              if (entry.type === 'file' && keep(entry.content)) bytes.set(entry.content, content);
            },
          }
        : {}),
    },
    '',
    new ChangeAccumulator(false),
    true,
  );
  return { tree, bytes };
};

import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/** A blob ref: `artifact://blake3/<64 hex>`. */
const ContentRef = lazySchema(() => z.string().regex(/^artifact:\/\/blake3\/[0-9a-f]{64}$/, 'an artifact://blake3/<64 hex> ref'));
/** A BLAKE3 digest as 64 lower-case hex characters. */
export const TreeDigest = lazySchema(() => z.string().regex(/^[0-9a-f]{64}$/, '64 hex characters'));

/** Permission bits (`mode & 0o7777`). */
const Mode = lazySchema(() => z.number().int().min(0).max(0o7777));

/**
 * One entry of the workspace tree as rein captured it. A file's `content` names its bytes in the blob store (its
 * BLAKE3); a file above the capture's size cap is known by that digest and its size only (`unrestorable`: its bytes
 * were not stored, so no rewind can bring them back). Symlinks are recorded by their target, never followed.
 */
export const TreeEntry = lazySchema(() => z.discriminatedUnion('type', [
  z.object({ type: z.literal('file'), mode: Mode, size: z.number().int().min(0), content: ContentRef, unrestorable: z.literal(true).optional() }).strict(),
  z.object({ type: z.literal('symlink'), target: z.string() }).strict(),
  z.object({ type: z.literal('dir'), mode: Mode }).strict(),
]));
export type TreeEntry = z.infer<typeof TreeEntry>;

/**
 * One path's change: its entry before and after (absent: the path did not exist). A rename is the old path's
 * deletion (`to`) and the new path's creation (`from`) with the same content.
 */
export const PathChange = lazySchema(() => z
  .object({
    path: z.string().min(1),
    before: TreeEntry.optional(),
    after: TreeEntry.optional(),
    from: z.string().min(1).optional(),
    to: z.string().min(1).optional(),
  })
  .strict());
export type PathChange = z.infer<typeof PathChange>;

/** What the capture leaves out and where it stops storing bytes (recorded with the baseline). */
export const CaptureRules = lazySchema(() => z
  .object({
    gitignore: z.boolean(),
    exclude: z.array(z.string()),
    include: z.array(z.string()),
    maxFileBytes: z.number().int().min(0),
    /** Workspace-relative paths never captured (rein's own: the store, its configuration, the protected paths). */
    never: z.array(z.string()),
  })
  .strict());
export type CaptureRules = z.infer<typeof CaptureRules>;

/**
 * effect (fact) · the workspace as rein first captured it for this session (at its first call that may change
 * files): the tree's digest, a blob listing every entry (`manifest`), counts, and the rules that chose the files.
 * Every `workspace.changed` after it is a change to this tree.
 */
export const WorkspaceCaptured = lazySchema(() => z
  .object({
    tree: TreeDigest,
    manifest: ContentRef,
    files: z.number().int().min(0),
    dirs: z.number().int().min(0),
    symlinks: z.number().int().min(0),
    bytes: z.number().int().min(0),
    unrestorable: z.number().int().min(0),
    rules: CaptureRules,
    /**
     * How changes are found between two captures: file-system notifications (a tree of at most 1,000 entries is scanned
     * instead, cheaper than waiting for them), or a scan of the tree's metadata.
     */
    detector: z.enum(['inotify', 'scan']),
  })
  .strict());
export type WorkspaceCaptured = z.infer<typeof WorkspaceCaptured>;

/**
 * Who made a change: a tool call (`call`: everything that ran while it did — its hooks, its command and what that
 * started); the session between two calls (`between`: a background command, a session hook, or an edit made while
 * the session ran); `outside` rein (found when the capture started again or before a rewind: made while rein was not
 * running this session, by another session or by a person); a `rewind`.
 */
export const ChangeSource = lazySchema(() => z.enum(['call', 'between', 'outside', 'rewind']));
export type ChangeSource = z.infer<typeof ChangeSource>;

/**
 * effect (fact) · the workspace changed: each path's entry before and after, and the tree's digest after. Written in
 * the same batch as the call it is attributed to (before its settlement), only when something changed.
 */
export const WorkspaceChanged = lazySchema(() => z
  .object({
    source: ChangeSource,
    effectId: z.string().min(1).optional(),
    callId: z.string().min(1).optional(),
    tool: z.string().min(1).optional(),
    /** For `outside`: the in-doubt calls an earlier run was making when it stopped (they may have made these changes). */
    inDoubt: z.array(z.string().min(1)).optional(),
    /** For `rewind`: the seq the workspace was restored to. */
    toSeq: z.number().int().min(0).optional(),
    /** Empty only for a rewind that changed nothing in the end (every folder it would remove was kept). */
    changes: z.array(PathChange),
    tree: TreeDigest,
  })
  .strict());
export type WorkspaceChanged = z.infer<typeof WorkspaceChanged>;

/**
 * effect (fact) · a rewind of the workspace is about to start (synced before any file is touched): where to, the
 * plan (a blob listing each path's target entry, absent: remove it), the trees before and after. A crash leaves it
 * without its `workspace.changed` (`source: rewind`, caused by this record); the next `rein rewind` or `rein resume`
 * of the session carries the plan out and writes that record.
 */
export const WorkspaceRewindStarted = lazySchema(() => z
  .object({
    toSeq: z.number().int().min(0),
    plan: ContentRef,
    paths: z.number().int().min(0),
    from: TreeDigest,
    to: TreeDigest,
    /** Paths changed outside rein that the rewind overwrites (only with `force`). */
    overwritten: z.array(z.string()).optional(),
    /** Paths whose target content was never stored (above the size cap): left as they are. */
    unrestorable: z.array(z.string()).optional(),
  })
  .strict());
export type WorkspaceRewindStarted = z.infer<typeof WorkspaceRewindStarted>;

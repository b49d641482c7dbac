import { z } from 'zod';
import { RECORD_TYPE_PATTERN, STREAM_NAME_PATTERN } from './envelope-rules.js';

/** Stream (session branch) names: safe as a directory name on every platform. */
export const StreamName = z
  .string()
  .regex(STREAM_NAME_PATTERN, 'stream names are 1-128 characters of [A-Za-z0-9._-], starting alphanumeric');
export type StreamName = z.infer<typeof StreamName>;

/** An actor path such as `root` or `root/child-2/turn-1`. */
export const ActorPath = z.string().min(1);
export type ActorPath = z.infer<typeof ActorPath>;

/**
 * The envelope every stored record shares (DESIGN §3).
 * `seq` starts at 1 and rises by 1 with no gaps within a stream; `v` is the schema version of `type`;
 * `at` is wall-clock epoch milliseconds written by the runtime (never read by a machine);
 * `cause` is the id of the record that caused this one; `corr` groups one tool call's or one delegation's records.
 */
export const RecordEnvelope = z.object({
  stream: StreamName,
  seq: z.number().int().min(1),
  id: z.string().min(1),
  type: z.string().regex(RECORD_TYPE_PATTERN, 'record types are <noun>.<verb> in lower case'),
  v: z.number().int().min(1),
  at: z.number(),
  actor: ActorPath,
  cause: z.string().optional(),
  corr: z.string().optional(),
  data: z.unknown(),
});
export type RecordEnvelope = z.infer<typeof RecordEnvelope>;

/** What a writer hands to `EventStore.append`: the store assigns `stream` and `seq`. */
export type RecordDraft = Omit<RecordEnvelope, 'stream' | 'seq'>;

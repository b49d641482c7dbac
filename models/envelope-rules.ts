/*
 * The envelope's string rules as plain patterns, so the store can check every appended record (and every stream
 * name) without loading a schema library; `envelope.ts` builds its zod schemas from the same patterns.
 */

/** Stream (session branch) names: 1-128 characters of `[A-Za-z0-9._-]`, starting alphanumeric (safe as a directory name). */
export const STREAM_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Record types: `<noun>.<verb>` in lower case (`tool.settled`, `turn.join-closed`). */
export const RECORD_TYPE_PATTERN = /^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/;

/** True when `value` is a valid stream name. */
export const isStreamName = (value: unknown): value is string => typeof value === 'string' && STREAM_NAME_PATTERN.test(value);

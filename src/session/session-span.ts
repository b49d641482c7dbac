import type { RecordEnvelope } from '../../models/envelope.js';

/** When a session's own work began and last moved: what its time (a list's TIME, `rein compare`'s) counts. */
export interface SessionSpan {
  firstAt: number;
  lastAt: number;
}

/**
 * A record a rewind appends to a session, ended or not: its look for changes made outside rein, its start and its end.
 * They are about the workspace, after the fact; the session did not run then.
 */
export const isRewindRecord = (record: Pick<RecordEnvelope, 'type' | 'data'>): boolean => {
  if (record.type === 'workspace.rewind-started') return true;
  if (record.type !== 'workspace.changed') return false;
  const source = (record.data as { source?: unknown } | undefined)?.source;
  return source === 'outside' || source === 'rewind';
};

/**
 * Fold one record (in seq order) into a session's span: it starts at the session's first record — a fork's (or a
 * new attempt's) own `session.forked`, not the parent's first record it copies — and ends at the last record that is
 * not a rewind's (a rewind of an ended session, or a refused one's look, does not stretch its time). `firstAt` 0:
 * nothing folded yet.
 */
export const foldSpan = (span: SessionSpan, record: Pick<RecordEnvelope, 'type' | 'data' | 'at'>): void => {
  if (span.firstAt === 0 || record.type === 'session.forked') {
    span.firstAt = record.at;
    span.lastAt = record.at;
    return;
  }
  if (!isRewindRecord(record)) span.lastAt = Math.max(span.lastAt, record.at);
};

/** The span of a session's records (in seq order); 0..0 for none. */
export const spanOf = (records: readonly Pick<RecordEnvelope, 'type' | 'data' | 'at'>[]): SessionSpan => {
  const span: SessionSpan = { firstAt: 0, lastAt: 0 };
  for (const record of records) foldSpan(span, record);
  return span;
};

/** How long a session ran, by its span. */
export const spanMs = (span: SessionSpan): number => Math.max(0, span.lastAt - span.firstAt);

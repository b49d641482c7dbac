import type { RecordEnvelope } from '../../models/envelope.js';
import { isDerivedType, recordClassOf } from '../../models/records.js';
import { SessionCreated } from '../../models/session.records.js';
import { ActorTree } from './actor-tree.js';
import { canonicalEqual } from './canonical-equal.js';
import { DivergenceError, ReinError } from './host-errors.js';
import type { DerivedDraft } from './step-collector.js';

/** What a verified replay reports. */
/**
 * What a verified replay checked — the same three counts everywhere (`rein.replaySession`, `rein replay`, its
 * `--json`, resume's report): `verified` records read and checked, of which `inputs` were re-applied and
 * `regenerated` derived records were regenerated and found equal (the rest are facts, which replay skips).
 */
export interface ReplayResult {
  stream: string;
  /** Records read and checked (the whole log, or the tail after a snapshot). */
  verified: number;
  /** Input records re-applied. */
  inputs: number;
  /** Derived records regenerated and found equal to the stored ones. */
  regenerated: number;
  head: number;
  /** The rebuilt tree, positioned after the last record. */
  tree: ActorTree | undefined;
}

interface Expected {
  draft: DerivedDraft;
  cause: string;
}

const describe = (record: RecordEnvelope) => ({ type: record.type, actor: record.actor, cause: record.cause, corr: record.corr, data: record.data });

const sameRecord = (stored: RecordEnvelope, expected: Expected): boolean =>
  stored.type === expected.draft.type &&
  stored.actor === expected.draft.actor &&
  stored.cause === expected.cause &&
  stored.corr === expected.draft.corr &&
  canonicalEqual(stored.data, expected.draft.data);

/**
 * Re-apply the input records of a session to a fresh actor tree (no effect executor, no model, no tools),
 * regenerate its transition and derived effect records and compare them, in order, with the stored ones.
 * Throws `DivergenceError` naming the first stored seq that differs (or where a regenerated record is missing).
 * Facts written by the runtime while executing effects are not regenerated and are skipped. With `tree`, replay
 * continues from an already rebuilt tree (a restored snapshot) instead of expecting `session.created`.
 */
export const verifyRecords = (
  stream: string,
  records: readonly RecordEnvelope[],
  options: { inspect?: (event: unknown) => void; tree?: ActorTree } = {},
): ReplayResult => {
  let tree: ActorTree | undefined = options.tree;
  let expected: Expected[] = [];
  let cursor = 0;
  let inputs = 0;
  let regenerated = 0;
  let head = 0;

  const assertDrained = (seq: number) => {
    const missing = expected[cursor];
    if (missing) {
      throw new DivergenceError({ stream, seq, expected: { ...missing.draft, cause: missing.cause }, actual: undefined, detail: `replay produced ${missing.draft.type} for ${missing.draft.actor} but the log has no such record` });
    }
  };

  for (const record of records) {
    head = record.seq;
    const recordClass = recordClassOf(record.type);
    if (recordClass === 'input') {
      assertDrained(record.seq);
      inputs++;
      let drafts: DerivedDraft[];
      if (record.type === 'session.created') {
        if (tree) throw new ReinError('SESSION_INVALID', `${stream} has a second session.created at seq ${record.seq}`);
        const created = SessionCreated.parse(record.data);
        const made = ActorTree.create(created, options.inspect ? { inspect: options.inspect } : {});
        tree = made.tree;
        drafts = made.drafts;
      } else {
        if (!tree) throw new ReinError('SESSION_INVALID', `${stream} has ${record.type} at seq ${record.seq} before session.created`);
        drafts = tree.apply(record);
      }
      expected = drafts.map((draft) => ({ draft, cause: record.id }));
      cursor = 0;
      continue;
    }
    if (!isDerivedType(record.type)) continue;
    const next = expected[cursor];
    if (!next || !sameRecord(record, next)) {
      throw new DivergenceError({
        stream,
        seq: record.seq,
        expected: next ? { ...next.draft, cause: next.cause } : undefined,
        actual: describe(record),
        detail: next ? `expected ${next.draft.type} for ${next.draft.actor}, found ${record.type} for ${record.actor} with different content` : `the log has ${record.type} that replay did not produce`,
      });
    }
    cursor++;
    regenerated++;
  }
  assertDrained(head + 1);
  return { stream, verified: records.length, inputs, regenerated, head, tree };
};

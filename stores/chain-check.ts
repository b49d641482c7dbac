import type { RecordEnvelope } from '../models/envelope.js';
import { ChainKey, LINK_BYTES, loadChainHashing } from './chain-crypto.js';
import { envelopeDigest } from './chain-canon.js';
import { CHAIN_ORIGIN, sealTag, type StreamSeal } from './chain.js';
import type { ChainReport } from './chain-report.js';
import { ChainError, CorruptRecordError } from './store-errors.js';

export type { ChainReport, ChainStatus } from './chain-report.js';

/** What `checkChain` walks. */
export interface ChainCheckInput {
  stream: string;
  head: number;
  /** The records from seq 1 to `head`, in order, in pages, each with its stored chain field (undefined: none). */
  pages: AsyncIterable<ReadonlyArray<{ record: RecordEnvelope; field: Uint8Array | undefined }>>;
  /** This machine's key; undefined when it has none (the chain can then only be found intact, never authenticated). */
  key: ChainKey | undefined;
  seal: StreamSeal | undefined;
  /**
   * The store writes the seal with every append (memory, PostgreSQL): a chained stream without one lost it to an edit.
   * A LevelDB stream is sealed at a clean close, so a crash leaves its seal behind its head (or absent).
   */
  sealedOnAppend: boolean;
}

const range = (from: number, to: number): string => (from === to ? `record ${from}` : `records ${from}..${to}`);

/**
 * Walks a stream's records with their chain fields and says whether the chain vouches for them (see `ChainStatus`),
 * naming the first record that fails. A record that cannot be read raises its `CorruptRecordError` (`STORE_CORRUPT_RECORD`).
 */
export async function checkChain(input: ChainCheckInput): Promise<ChainReport> {
  await loadChainHashing();
  const { stream, head, key } = input;
  const report: ChainReport = { stream, head, status: 'authenticated', ...(key === undefined ? {} : { keyId: key.id }) };
  let predecessor = CHAIN_ORIGIN;
  let expected = 1;
  let brokenAt: { seq: number; problem: string } | undefined;
  let unauthenticatedAt: { seq: number; problem: string } | undefined;
  let sealPredecessor: Uint8Array | undefined = input.seal?.head === 0 ? CHAIN_ORIGIN : undefined;
  for await (const page of input.pages) {
    for (const { record, field } of page) {
      const seq = record.seq;
      if (seq !== expected) throw new CorruptRecordError(stream, expected, 'record is missing');
      expected++;
      const digest = envelopeDigest(predecessor, record);
      if (field === undefined) {
        if (report.chainedFrom !== undefined) brokenAt ??= { seq, problem: `record ${seq} carries no chain field, though the chain starts at ${report.chainedFrom}: it was written or replaced without the chain` };
        predecessor = digest;
      } else {
        report.chainedFrom ??= seq;
        if (!Buffer.from(field.subarray(0, LINK_BYTES)).equals(digest.subarray(0, LINK_BYTES))) {
          const before = seq === report.chainedFrom && seq > 1 ? `, or one of ${range(1, seq - 1)} written before the chain (which the chain covers from ${seq} on), was changed` : ' was changed, or a record was inserted, deleted or moved here';
          brokenAt ??= { seq, problem: `record ${seq} is not the record the chain recorded after ${seq - 1}: it${before}` };
        } else if (unauthenticatedAt === undefined && brokenAt === undefined) {
          if (key === undefined) unauthenticatedAt = { seq, problem: `this machine has no chain key, so the chain (intact) cannot be authenticated` };
          else if (!ChainKey.same(field.subarray(LINK_BYTES), key.mac(digest))) {
            unauthenticatedAt = {
              seq,
              problem:
                seq === report.chainedFrom
                  ? `the chain is intact but not authenticated by this machine's key (${key.id}) from record ${seq} on: the log was written under another key (copied from another machine) or rewritten without the key`
                  : `${range(report.chainedFrom, seq - 1)} are authenticated by this machine's key (${key.id}) but record ${seq} is not: it was changed, inserted, deleted or moved by someone without the key`,
            };
          }
        }
        predecessor = field;
      }
      if (seq === input.seal?.head) sealPredecessor = predecessor;
    }
  }
  if (brokenAt === undefined && expected - 1 < head) brokenAt = { seq: expected, problem: `record ${expected} is missing` };
  const chained = report.chainedFrom !== undefined;
  if (brokenAt === undefined && chained) {
    const sealed = checkSeal(input, sealPredecessor);
    if (sealed.broken !== undefined) brokenAt = sealed.broken;
    else if (sealed.unauthenticated !== undefined) unauthenticatedAt ??= sealed.unauthenticated;
    else if (sealed.head !== undefined) report.sealedHead = sealed.head;
  }
  const failure = brokenAt !== undefined && (unauthenticatedAt === undefined || brokenAt.seq <= unauthenticatedAt.seq) ? brokenAt : (unauthenticatedAt ?? brokenAt);
  if (brokenAt !== undefined) report.status = 'broken';
  else if (unauthenticatedAt !== undefined) report.status = 'unauthenticated';
  else if (!chained && head > 0) {
    report.status = 'unchained';
    report.seq = 1;
    report.problem = `no record carries the chain: the log was written before it (or stripped of it), so nothing vouches for it; the next append by this build starts the chain`;
    return report;
  }
  if (failure !== undefined) {
    report.seq = failure.seq;
    report.problem = brokenAt !== undefined && failure !== brokenAt ? `${failure.problem}; and the chain breaks at record ${brokenAt.seq}: ${brokenAt.problem}` : failure.problem;
  }
  return report;
}

/** The seal's verdict: the head it vouches for, or what is wrong with it. */
function checkSeal(input: ChainCheckInput, predecessor: Uint8Array | undefined): { head?: number; broken?: { seq: number; problem: string }; unauthenticated?: { seq: number; problem: string } } {
  const { seal, key, stream, head } = input;
  if (seal === undefined) return input.sealedOnAppend ? { unauthenticated: { seq: head, problem: `the stream's seal is missing: it was removed, so records cut off the end would go unnoticed` } } : {};
  if (seal.head > head) {
    return { broken: { seq: head + 1, problem: `the stream was sealed at record ${seal.head} but now ends at ${head}: ${range(head + 1, seal.head)} were cut off` } };
  }
  if (key === undefined || predecessor === undefined) return {};
  if (!ChainKey.same(seal.tag, sealTag(key, stream, seal.head, predecessor))) {
    return { unauthenticated: { seq: Math.max(1, seal.head), problem: `the stream's seal (at record ${seal.head}) is not authenticated by this machine's key (${key.id}): it was altered or written elsewhere` } };
  }
  if (input.sealedOnAppend && seal.head !== head) return { broken: { seq: seal.head + 1, problem: `the stream's seal is at record ${seal.head} but the stream goes on to ${head}: records were added without the store` } };
  return { head: seal.head };
}

/**
 * Throws the report's `ChainError` unless the chain is authenticated: `CHAIN_BROKEN` for a broken chain,
 * `CHAIN_UNAUTHENTICATED` for an intact one this machine's key did not write (or a stream written before the chain).
 */
export function assertAuthenticated(report: ChainReport): void {
  if (report.status === 'authenticated') return;
  throw new ChainError(report.status === 'broken' ? 'CHAIN_BROKEN' : 'CHAIN_UNAUTHENTICATED', report.stream, report.seq, report.problem ?? report.status, { report });
}

import fc from 'fast-check';
import { combineLatest, filter, firstValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { RecordDraft } from '../../models/envelope.js';
import { createMemoryEventStore } from '../../stores/memory-event-store.js';
import { GovernanceLog } from '../../src/memory/governance-log.js';
import { memoryStream } from '../../src/memory/memory-stream.js';
import { memoryHints } from '../../src/projections/memory-hints.js';
import { memoryProjection } from '../../src/projections/memory.view.js';
import { rebuildView, tailView } from '../../src/projections/projection.js';
import { propertyRuns } from '../support/temp-dir.js';

const candidateId = fc.constantFrom('s-1:c-1', 's-1:c-2', 's-2:c-1');
const recordId = fc.constantFrom('m1', 'm2', 'm3');
const key = 'repo:/r:test-command';
const content = fc.constantFrom('uses npm test', 'uses pnpm test');
const proposal = fc.record({
  candidateId,
  content,
  kind: fc.constantFrom('project_fact', 'user_preference'),
  scope: fc.record({ level: fc.constantFrom('repo', 'user', 'task'), key: fc.constantFrom('/r', 'other') }),
  source: fc.record({ type: fc.constantFrom('explicit_user', 'verified_observation', 'tool_output'), eventIds: fc.constant(['e1']) }),
  confidence: fc.constant('low'),
  conflictKeys: fc.constantFrom([key], []),
  createdBy: fc.constantFrom('runtime', 'model'),
});

/** What a session stream holds of memory: its candidates (amid other records). */
const sessionRecord = fc.oneof(
  fc.record({ type: fc.constant('memory.proposed'), data: proposal }),
  fc.record({ type: fc.constant('user.message'), data: fc.record({ text: fc.constantFrom('hi', 'from now on use npm') }) }),
);

/** What the governance stream holds: submissions, reviews, promotions and the lifecycle. */
const governanceRecord = fc.oneof(
  fc.record({ type: fc.constant('memory.submitted'), data: fc.record({ sessionId: fc.constantFrom('s-1', 's-2'), proposalId: fc.constant('p1'), proposedAt: fc.constant(1), candidate: proposal }) }),
  fc.record({ type: fc.constant('memory.reviewed'), data: fc.record({ candidateId, outcome: fc.constantFrom('approved', 'needs_review', 'rejected', 'waiting', 'downgraded'), reviewer: fc.constantFrom('governance', 'user'), reason: fc.constant('checked'), confidence: fc.constantFrom('low', 'medium') }) }),
  fc.record({ type: fc.constant('memory.promoted'), data: fc.record({ recordId, candidateId, content, kind: fc.constant('project_fact'), scope: fc.record({ level: fc.constantFrom('repo', 'user'), key: fc.constant('/r') }), confidence: fc.constantFrom('medium', 'high'), authority: fc.constantFrom('hint', 'default'), sourceRefs: fc.constant(['s-1#e1']), version: fc.constant(1), supersedes: fc.option(fc.array(recordId, { maxLength: 2 }), { nil: undefined }), approvedAt: fc.constant(1), expiresAt: fc.option(fc.constantFrom(50, 5_000), { nil: undefined }), conflictKeys: fc.constant([key]), corroboratedBy: fc.option(fc.array(candidateId, { maxLength: 2 }), { nil: undefined }) }, { requiredKeys: ['recordId', 'candidateId', 'content', 'kind', 'scope', 'confidence', 'authority', 'sourceRefs', 'version', 'approvedAt', 'conflictKeys'] }) }),
  fc.record({ type: fc.constant('memory.rejected'), data: fc.record({ candidateId, reason: fc.constant('no'), by: fc.constant('user') }) }),
  fc.record({ type: fc.constant('memory.revoked'), data: fc.record({ recordId, reason: fc.constant('forget it'), by: fc.constant('user') }) }),
  fc.record({ type: fc.constant('memory.expired'), data: fc.record({ recordId, reason: fc.constant('ttl') }) }),
);

const draft = (entry: { type: string; data: unknown }, index: number): RecordDraft => ({ id: `x${index}`, type: entry.type, v: 1, at: index, actor: 'root', data: entry.data });

describe('the memory views over the governance stream and the session stream', () => {
  it('live (tailed session + incrementally read governance) equals rebuilt, and so do the hints and the session facts', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(sessionRecord, { minLength: 1, maxLength: 12 }), fc.array(governanceRecord, { maxLength: 20 }), fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 6 }), async (session, governance, sizes) => {
        const store = createMemoryEventStore();
        const log = new GovernanceLog(store);
        const session$ = tailView(store, 's-1', memoryProjection);
        const live = firstValueFrom(combineLatest({ session: session$, governance: log.view$ }).pipe(filter((views) => views.session.seq === session.length && views.governance.seq === governance.length)));
        // Interleave: a batch for the session, a batch for the governance stream (another writer), a refresh.
        let sessionHead = 0;
        let governanceHead = 0;
        for (let round = 0; sessionHead < session.length || governanceHead < governance.length; round++) {
          const size = sizes[round % sizes.length]!;
          const sessionBatch = session.slice(sessionHead, sessionHead + size).map((entry, index) => draft(entry, sessionHead + index));
          if (sessionBatch.length > 0) await store.append('s-1', sessionBatch, { expectedSeq: sessionHead });
          sessionHead += sessionBatch.length;
          const governanceBatch = governance.slice(governanceHead, governanceHead + size).map((entry, index) => draft(entry, governanceHead + index));
          if (governanceBatch.length > 0) await store.append(memoryStream, governanceBatch, { expectedSeq: governanceHead });
          governanceHead += governanceBatch.length;
          if (round % 2 === 0) await log.refresh();
        }
        await log.refresh();
        const views = await live;
        const rebuilt = { session: rebuildView(memoryProjection, await store.read('s-1')), governance: rebuildView(memoryProjection, await store.read(memoryStream)) };
        expect(views).toEqual(rebuilt);
        const query = { workspace: '/r', now: 100, minConfidence: 'low' as const };
        expect(memoryHints(views.governance, query, views.session)).toEqual(memoryHints(rebuilt.governance, query, rebuilt.session));
      }),
      { numRuns: propertyRuns(60) },
    );
  });
});

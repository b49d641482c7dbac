/**
 * Type-level proof of the typestate: `JoinClosed` and `MutationReady` have no public constructor. Each
 * `@ts-expect-error` below must stay an error; if a literal ever type-checks as one of them, `tsc -p tests` fails
 * on the unused directive.
 */
import type { JoinClosed } from '../../../machines/typestate/join.js';
import type { MutationReady } from '../../../machines/typestate/mutation.js';
import { checkMutationReady } from '../../../machines/typestate/mutation.js';
import { closeJoin } from '../../../machines/typestate/join.js';
import { baseCallSpec } from '../turn.fixtures.js';

// @ts-expect-error a literal with the right fields is not a JoinClosed
export const forgedJoin: JoinClosed = { turnId: 't', joinDigest: 'b3:x' };

// @ts-expect-error a literal with the right fields is not a MutationReady
export const forgedReady: MutationReady = { turnId: 't', joinDigest: 'b3:x', mutationPolicyDigest: 'b3:p' };

// @ts-expect-error MutationReady cannot be checked from an unclosed join
export const skipped = checkMutationReady({ join: { turnId: 't', joinDigest: 'b3:x' }, callSpec: baseCallSpec(), activeMutationPolicyDigest: 'b3:policy', requiredClaims: [], rows: [], findings: [] });

const outcome = closeJoin({ turnId: 't', callSpec: baseCallSpec(), stopReason: 'tool_use', requests: [], results: [], uses: [] });
export const ready = outcome.ok
  ? checkMutationReady({ join: outcome.value, callSpec: baseCallSpec(), activeMutationPolicyDigest: 'b3:policy', requiredClaims: [], rows: [], findings: [] })
  : undefined;

// @ts-expect-error a JoinClosed is not a MutationReady
export const confused: MutationReady | undefined = outcome.ok ? outcome.value : undefined;

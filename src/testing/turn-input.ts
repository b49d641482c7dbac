import type { CallSpec } from '../../models/call-spec.js';
import type { TurnInput } from '../../machines/turn.machine.js';

/**
 * A CallSpec that admits `read`, `write` and `bash` (JSON tool calls, parallel calls allowed, truncation with an
 * artifact, completing allowed), with any field overridden: the contract a test turn runs under.
 */
export const sampleCallSpec = (overrides: Partial<CallSpec> = {}): CallSpec => ({
  callId: 'root:e1',
  modelRef: { provider: 'scripted', model: 'script' },
  actionMode: 'json',
  executionPattern: 'chain',
  toolChoice: 'auto',
  toolPolicy: { allow: ['read', 'write', 'bash'], schemaDigests: { read: 'b3:r', write: 'b3:w', bash: 'b3:b' } },
  toolCatalogDigest: 'b3:catalog',
  parallelPolicy: { allowed: true, maxBranches: 4, strictOrder: false },
  toolResponseTruncationPolicy: { maxChars: 1000, marker: '[… truncated …]', artifactRequired: true },
  runtimeSandboxRef: 'sandbox:default',
  riskTier: 'moderate',
  mutationPolicyDigest: 'b3:policy',
  capabilityClaims: ['session.complete'],
  stopPolicy: { maxTurns: 10, checkpoints: [] },
  protocolStatePolicy: { handled: ['tool_use', 'end_turn', 'pause_turn'], continueOn: ['tool_use', 'pause_turn'] },
  ...overrides,
});

/**
 * The input of a turn actor (`turnMachine`) whose model proposed one call per name in `names` (default `read`,
 * `write`; a name outside the CallSpec's allow-list is a disallowed call), for model-checking the turn typestate.
 */
export const sampleTurnInput = (options: { names?: string[]; callSpec?: Partial<CallSpec>; stopReason?: string; activeMutationPolicyDigest?: string; requiredClaims?: string[] } = {}): TurnInput => {
  const names = options.names ?? ['read', 'write'];
  return {
    path: 'root/turn-1',
    turnId: 'root:e1',
    callSpec: sampleCallSpec(options.callSpec),
    stopReason: options.stopReason ?? 'tool_use',
    toolCalls: names.map((name, index) => ({ callId: `root:e1.${index}`, name, arguments: { path: `f${index}.txt` } })),
    activeMutationPolicyDigest: options.activeMutationPolicyDigest ?? 'b3:policy',
    requiredClaims: options.requiredClaims ?? ['session.complete'],
    shellTools: ['bash'],
  };
};

import type { CallSpec } from '../../models/turn.records.js';
import type { TurnInput } from '../../machines/turn.machine.js';

/** A CallSpec that admits the calls the fixtures make. */
export const baseCallSpec = (overrides: Partial<CallSpec> = {}): CallSpec => ({
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

/** A turn input with `calls` tool calls named `names`. */
export const turnInput = (options: { names?: string[]; callSpec?: Partial<CallSpec>; stopReason?: string; activeMutationPolicyDigest?: string; requiredClaims?: string[] } = {}): TurnInput => {
  const names = options.names ?? ['read', 'write'];
  return {
    path: 'root/turn-1',
    turnId: 'root:e1',
    callSpec: baseCallSpec(options.callSpec),
    stopReason: options.stopReason ?? 'tool_use',
    toolCalls: names.map((name, index) => ({ callId: `root:e1.${index}`, name, arguments: { path: `f${index}.txt` } })),
    activeMutationPolicyDigest: options.activeMutationPolicyDigest ?? 'b3:policy',
    requiredClaims: options.requiredClaims ?? ['session.complete'],
    shellTools: ['bash'],
  };
};

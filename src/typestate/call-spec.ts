import type { CallSpec } from '../../models/call-spec.js';
import type { ModelToolDescription } from '../../models/model-contract.js';
import type { DenialSource } from '../../models/permission.records.js';
import { digestOf, sharedDigestOf } from '../../machines/typestate/digest.js';
import { shareCanonical } from '../../machines/typestate/canonical-json.js';
import type { PermissionPolicy } from '../policy/permission-policy.js';
import { sandboxProfileOf, type SandboxPolicy } from '../policy/sandbox-policy.js';

/** Everything a session's CallSpecs are computed from. */
export interface CallSpecPolicy {
  provider: string;
  model: string;
  /** The tools the model sees (the turn's allow-list). */
  tools: readonly ModelToolDescription[];
  /** Every registered tool (the discoverable inventory). */
  catalog: readonly ModelToolDescription[];
  /** The agent's tools the policy hides this turn, by who hides them (a call to one is a denial, not an unknown tool). */
  hidden?: Readonly<Record<string, DenialSource>>;
  parallelTools: number;
  /** Most tool calls of one turn that run (default `defaultMaxParallelToolCalls`); the rest are refused unrun. */
  maxBranches?: number;
  observationLimit: number;
  sandbox: SandboxPolicy;
  permissions: PermissionPolicy;
  maxTurns: number;
  /** The guardrail stages that have guardrails, with the guardrails' ids (absent or empty: no guardrail policy). */
  guardrails?: { stages: Array<'pre_flight' | 'input' | 'output'>; ids: string[] };
}

/**
 * Most tool calls of one model turn that run by default. The calls past the limit are refused unrun (model-visible
 * `Denied` results) and do not count as branches; more branches than the limit at the join is a
 * `tool.parallel_policy_violation`.
 */
export const defaultMaxParallelToolCalls = 32;

/** The claims a turn's CallSpec grants; completing a session needs `session.complete`. */
export const grantedClaims: readonly string[] = ['session.complete'];

/** The instruction-linked policy a mutation must run under: permission mode and rules, and the sandbox. */
export const mutationPolicyDigestOf = (permissions: PermissionPolicy, sandbox: SandboxPolicy): string =>
  digestOf({ permissions: { mode: permissions.mode, rules: permissions.rules, approveAll: permissions.approveAll }, sandbox });

const describeTool = (tool: ModelToolDescription) => ({ name: tool.name, schema: sharedDigestOf(tool.inputSchema) });

/**
 * Build a session's CallSpec factory: the digests are computed once; each model call gets a spec stamped with its
 * call id. The provider streams structured tool-use blocks (`json` action mode), results may arrive out of request
 * order when an approval intervenes (so the transport order is not strict), and truncation always keeps an artifact.
 */
export const createCallSpecFactory = (policy: CallSpecPolicy): ((callId: string) => CallSpec) => {
  const schemaDigests = Object.fromEntries(policy.tools.map((tool) => [tool.name, sharedDigestOf(tool.inputSchema)]));
  const base: Omit<CallSpec, 'callId'> = {
    modelRef: { provider: policy.provider, model: policy.model },
    actionMode: 'json',
    executionPattern: 'chain',
    toolChoice: 'auto',
    toolPolicy: { allow: policy.tools.map((tool) => tool.name), schemaDigests, ...(policy.hidden && Object.keys(policy.hidden).length > 0 ? { hidden: { ...policy.hidden } } : {}) },
    toolCatalogDigest: digestOf(policy.catalog.map(describeTool)),
    parallelPolicy: { allowed: policy.parallelTools > 1, maxBranches: policy.maxBranches ?? defaultMaxParallelToolCalls, strictOrder: false },
    toolResponseTruncationPolicy: { maxChars: policy.observationLimit, marker: '[… truncated', artifactRequired: true },
    runtimeSandboxRef: sandboxProfileOf(policy.sandbox),
    riskTier: policy.permissions.mode === 'plan' ? 'low' : policy.permissions.approveAll ? 'high' : 'moderate',
    mutationPolicyDigest: mutationPolicyDigestOf(policy.permissions, policy.sandbox),
    capabilityClaims: [...grantedClaims],
    stopPolicy: { maxTurns: policy.maxTurns, checkpoints: [] },
    protocolStatePolicy: { handled: ['tool_use', 'end_turn', 'pause_turn', 'max_tokens', 'stop_sequence'], continueOn: ['tool_use', 'pause_turn'] },
    ...(policy.guardrails && policy.guardrails.stages.length > 0 ? { guardrailStages: [...policy.guardrails.stages], guardrailStagePolicyDigest: digestOf(policy.guardrails) } : {}),
  };
  // Every spec of the factory holds the same members: frozen with their canonical JSON, so a turn's CallSpec digest
  // serialises only the call id and the members' remembered text (a thousand children's turns digest their specs).
  for (const member of Object.values(base)) shareCanonical(member);
  const baseDigest = digestOf(base);
  return (callId) => {
    const spec = { callId, ...base };
    specBases.set(spec, baseDigest);
    return spec;
  };
};

/** The digest of the members (all but `callId`) of each spec a factory made, by identity. */
const specBases = new WeakMap<object, string>();

/**
 * The digest of a CallSpec's members, all but its `callId` (`model.responded` v2 `callSpecBase`): the spec every child
 * of a delegation repeats is stored once per stream and named by it after that. Remembered for the specs a factory
 * made; computed for any other.
 */
export const callSpecBaseOf = (spec: CallSpec): string => {
  const known = specBases.get(spec);
  if (known !== undefined) return known;
  const { callId: _callId, ...members } = spec;
  return digestOf(members);
};

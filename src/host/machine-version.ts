import { createHash } from 'node:crypto';
import { delegationMachine, delegationMachineVersion } from '../../machines/delegation.machine.js';
import { sessionMachine, sessionMachineVersion } from '../../machines/session.machine.js';

const structureOf = (machine: { root: { definition: unknown } }): string => JSON.stringify(machine.root.definition, (_key, value: unknown) => (typeof value === 'function' ? undefined : value));

/**
 * The version stamped on snapshots: the declared versions of the session machine and of the delegation machine it
 * spawns (both persist inside the tree's snapshot) plus a digest of their state structures, so a structural change
 * invalidates old snapshots even if someone forgot to bump a number. Computed on first call (walking both machines'
 * definitions at import cost every `import('rein')` ~10 ms; issue 31), then the same string.
 */
export const machineVersion = (): string => (version ??= versionOf());

let version: string | undefined;

const versionOf = (): string => {
  const digest = createHash('sha256').update(structureOf(sessionMachine)).update(structureOf(delegationMachine)).digest('hex').slice(0, 12);
  return `session@${sessionMachineVersion}+delegation@${delegationMachineVersion}+${digest}`;
};

import { createHash } from 'node:crypto';
import { sessionMachine, sessionMachineVersion } from '../../machines/session.machine.js';

/**
 * The version stamped on snapshots: the machine's declared version plus a digest of its state structure, so a
 * structural change invalidates old snapshots even if someone forgot to bump the number.
 */
export const machineVersion: string = (() => {
  const structure = JSON.stringify(sessionMachine.root.definition, (key, value: unknown) => (typeof value === 'function' ? undefined : value));
  return `session@${sessionMachineVersion}+${createHash('sha256').update(structure).digest('hex').slice(0, 12)}`;
})();

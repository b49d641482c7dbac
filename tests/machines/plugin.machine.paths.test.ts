import { describe, expect, it } from 'vitest';
import type { SnapshotFrom } from 'xstate';
import { checkMachine } from 'rein/testing';
import { pluginMachine, type PluginEvent } from '../../machines/plugin.machine.js';

type Snapshot = SnapshotFrom<typeof pluginMachine>;

const working = ['loaded', 'configured', 'started', 'ready', 'stopping'];

/** Every event the host can send, in every state: out-of-order ones included (they must change nothing). */
const events = (): PluginEvent[] => [
  { type: 'plugin.refused', reason: 'untrusted' },
  { type: 'plugin.loaded' },
  { type: 'plugin.configured' },
  { type: 'plugin.started' },
  { type: 'plugin.registered', contributions: ['demo__echo', 'demo:guard'] },
  { type: 'plugin.failed', phase: 'start', message: 'setup threw' },
  { type: 'plugin.stop' },
  { type: 'plugin.stopped' },
];

const stateOf = (snapshot: Snapshot): string => String(snapshot.value);

describe('plugin.machine model check', () => {
  const result = checkMachine({
    machine: pluginMachine,
    input: { pluginId: 'demo' },
    events,
    stateInvariants: {
      'contributions exist only while ready or stopping': (snapshot) => snapshot.context.contributions.length === 0 || ['ready', 'stopping'].includes(stateOf(snapshot)),
      'ready has its contributions': (snapshot) => !snapshot.matches('ready') || snapshot.context.contributions.length === 2,
      'failed and stopped hold nothing': (snapshot) => !(snapshot.matches('failed') || snapshot.matches('stopped')) || snapshot.context.contributions.length === 0,
      'failed and disabled say why': (snapshot) => !(snapshot.matches('failed') || snapshot.matches('disabled')) || snapshot.context.error !== null,
      'disabled never registered anything': (snapshot) => !snapshot.matches('disabled') || snapshot.context.revoked.length === 0,
      'the end states are final': (snapshot) => !['failed', 'stopped', 'disabled'].includes(stateOf(snapshot)) || snapshot.status === 'done',
    },
    transitionInvariants: {
      'a failure revokes everything that was registered': ({ from, to, event }) =>
        event.type !== 'plugin.failed' || !working.includes(stateOf(from)) || (to.matches('failed') && to.context.contributions.length === 0 && to.context.revoked.length === from.context.revoked.length + from.context.contributions.length),
      'every working phase can fail': ({ from, to, event }) => event.type !== 'plugin.failed' || !['discovered', ...working].includes(stateOf(from)) || to.matches('failed'),
      'stopping revokes on the way to stopped': ({ from, to }) => !(from.matches('stopping') && to.matches('stopped')) || (to.context.contributions.length === 0 && to.context.revoked.length === from.context.contributions.length),
      'refusal only before any code ran': ({ from, to }) => !to.matches('disabled') || from.matches('discovered') || from.matches('disabled'),
      'phases are not skipped': ({ from, to }) => {
        const order = ['discovered', 'loaded', 'configured', 'started', 'ready'];
        const a = order.indexOf(stateOf(from));
        const b = order.indexOf(stateOf(to));
        return a < 0 || b < 0 || b === a || b === a + 1;
      },
    },
  });

  it('holds every invariant on every reachable state and edge', () => {
    expect(result.violations).toEqual([]);
  });

  it('reaches every lifecycle state', () => {
    expect(result.stateValues).toEqual(['"configured"', '"disabled"', '"discovered"', '"failed"', '"loaded"', '"ready"', '"started"', '"stopped"', '"stopping"'].sort());
    expect({ states: result.states, transitions: result.transitions }).toMatchSnapshot();
  });
});

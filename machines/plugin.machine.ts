import { assign, setup } from 'xstate';
import type { PluginPhase } from '../models/plugin.records.js';
import { lazyValue } from '../models/lazy-schema.js';

/** Bumped whenever a change would make old snapshots of this machine restore into the wrong state. */
export const pluginMachineVersion = '1';

export interface PluginMachineInput {
  pluginId: string;
}

export interface PluginContext {
  pluginId: string;
  /** Full ids of the contributions registered for this plugin (only while `ready` or `stopping`). */
  contributions: string[];
  /** Contributions that were registered and then taken back when the plugin failed or stopped. */
  revoked: string[];
  /** Why the plugin is `disabled` or `failed`. */
  error: { phase: PluginPhase | 'policy'; message: string } | null;
}

/**
 * The events the plugin host sends as it works: each names what just finished. `plugin.failed` may arrive in any
 * working phase; `plugin.refused` only before anything of the plugin ran (policy, trust, a source not allowed here).
 */
export type PluginEvent =
  | { type: 'plugin.refused'; reason: string }
  | { type: 'plugin.loaded' }
  | { type: 'plugin.configured' }
  | { type: 'plugin.started' }
  | { type: 'plugin.registered'; contributions: string[] }
  | { type: 'plugin.failed'; phase: PluginPhase; message: string }
  | { type: 'plugin.stop' }
  | { type: 'plugin.stopped' };

/**
 * One plugin's lifecycle (the plugin host document's A3): discovered → loaded → configured → started → ready →
 * stopping → stopped, `disabled` when policy or trust refuses it before any of its code runs, and `failed` from any
 * working phase. Contributions exist only while `ready` (and `stopping`): failing or stopping revokes every one of
 * them, so a plugin that breaks never leaves half its capabilities behind. Pure: the host does the work and reports
 * each step as an event.
 */
export const pluginMachine = lazyValue(() => setup({
  types: { context: {} as PluginContext, events: {} as PluginEvent, input: {} as PluginMachineInput },
  actions: {
    fail: assign(({ context, event }) =>
      event.type === 'plugin.failed' ? { error: { phase: event.phase, message: event.message }, revoked: [...context.revoked, ...context.contributions], contributions: [] } : {},
    ),
    register: assign(({ event }) => (event.type === 'plugin.registered' ? { contributions: [...event.contributions] } : {})),
    revokeAll: assign(({ context }) => ({ revoked: [...context.revoked, ...context.contributions], contributions: [] })),
    refuse: assign(({ event }) => (event.type === 'plugin.refused' ? { error: { phase: 'policy' as const, message: event.reason } } : {})),
  },
}).createMachine({
  id: 'plugin',
  context: ({ input }) => ({ pluginId: input.pluginId, contributions: [], revoked: [], error: null }),
  initial: 'discovered',
  states: {
    discovered: {
      on: {
        'plugin.refused': { target: 'disabled', actions: 'refuse' },
        'plugin.loaded': 'loaded',
        'plugin.failed': { target: 'failed', actions: 'fail' },
      },
    },
    loaded: {
      on: {
        'plugin.configured': 'configured',
        'plugin.failed': { target: 'failed', actions: 'fail' },
        'plugin.stop': 'stopping',
      },
    },
    configured: {
      on: {
        'plugin.started': 'started',
        'plugin.failed': { target: 'failed', actions: 'fail' },
        'plugin.stop': 'stopping',
      },
    },
    started: {
      on: {
        'plugin.registered': { target: 'ready', actions: 'register' },
        'plugin.failed': { target: 'failed', actions: 'fail' },
        'plugin.stop': 'stopping',
      },
    },
    ready: {
      on: {
        'plugin.failed': { target: 'failed', actions: 'fail' },
        'plugin.stop': 'stopping',
      },
    },
    stopping: {
      on: {
        'plugin.stopped': { target: 'stopped', actions: 'revokeAll' },
        'plugin.failed': { target: 'failed', actions: 'fail' },
      },
    },
    stopped: { type: 'final' },
    failed: { type: 'final' },
    disabled: { type: 'final' },
  },
}));

export type PluginMachine = typeof pluginMachine;

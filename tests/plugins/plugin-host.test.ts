import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CapabilityRegistry } from '../../src/plugins/capability-registry.js';
import { definePlugin, type PluginContributions, type PluginManifest, type PluginSetupContext } from '../../src/plugins/plugin-contract.js';
import { PluginHost, type PluginSpec } from '../../src/plugins/plugin-host.js';
import { satisfies } from '../../src/plugins/semver.js';

const manifest = (overrides: Partial<PluginManifest> = {}): PluginManifest => ({
  id: 'demo',
  name: 'Demo',
  version: '1.0.0',
  contributes: { tools: ['echo', 'run_tests'], hooks: ['preToolUse'], providers: ['fake'], commands: ['hello'] },
  permissions: ['read', 'execute', 'model'],
  ...overrides,
});

const contributions = (): PluginContributions => ({
  tools: [{ name: 'echo', description: 'echo text', parameters: z.object({ text: z.string() }), risk: 'read', execute: async (input) => String(input.text) }],
  hooks: [{ id: 'guard', point: 'preToolUse', run: () => ({ decision: 'allow' }) }],
  providers: [{ id: 'fake', create: () => ({ name: 'fake', async *stream() {} }) }],
  commands: [{ name: 'hello', description: 'say hello', run: () => 0 }],
});

const hostWith = (options: { reserved?: string[]; policy?: ConstructorParameters<typeof PluginHost>[0]['policy'] } = {}) => {
  const registry = new CapabilityRegistry(new Set(options.reserved ?? ['read', 'bash']));
  return new PluginHost({ workspace: '/tmp/ws', registry, clock: () => 1, ...(options.policy ? { policy: options.policy } : {}) });
};

const load = (host: PluginHost, spec: Partial<PluginSpec> & { manifest?: unknown }) =>
  host.load({ source: 'host', plugin: definePlugin({ manifest: manifest(), setup: () => contributions() }), ...spec });

const types = (host: PluginHost) => host.journal().map((fact) => fact.type);

describe('plugin manifest validation (before any code runs)', () => {
  it('refuses a manifest without an id, with a bad version, or with an unknown hook point — and never calls setup', async () => {
    const host = hostWith();
    let setupCalls = 0;
    const setup = () => {
      setupCalls++;
      return {};
    };
    const cases: Array<[unknown, string]> = [
      [{ name: 'x', version: '1.0.0' }, 'id'],
      [{ ...manifest(), version: 'one' }, 'version'],
      [{ ...manifest(), contributes: { hooks: ['beforeEverything'] } }, 'contributes.hooks.0'],
      [{ ...manifest(), id: 'Bad_Id' }, 'id'],
      [{ ...manifest(), surprise: true }, '(root)'],
      [{ ...manifest(), requires: { hostVersion: 'soon' } }, 'requires.hostVersion'],
    ];
    for (const [declared, field] of cases) {
      const state = await host.load({ source: 'host', manifest: declared, plugin: definePlugin({ manifest: declared as PluginManifest, setup }) });
      expect(state.state, field).toBe('failed');
      expect(state.error?.code).toBe('PLUGIN_MANIFEST_INVALID');
      expect(state.error?.message).toContain(field);
    }
    expect(setupCalls).toBe(0);
    expect(types(host)).toEqual(cases.map(() => 'plugin.failed'));
    expect(host.journal().every((fact) => (fact.data as { phase: string }).phase === 'manifest')).toBe(true);
  });

  it('refuses a host version it does not satisfy, a permission policy denies, a test source outside tests, and an untrusted project plugin', async () => {
    const host = hostWith({ policy: { deniedPermissions: ['network'] } });
    expect((await load(host, { plugin: definePlugin({ manifest: manifest({ id: 'future', requires: { hostVersion: '^2.0.0' } }), setup: () => ({}) }) })).error?.code).toBe('PLUGIN_HOST_VERSION');
    const denied = await load(host, { plugin: definePlugin({ manifest: manifest({ id: 'net', permissions: ['network'] }), setup: () => contributions() }) });
    expect(denied.state).toBe('disabled');
    expect(denied.error?.code).toBe('PLUGIN_PERMISSION_DENIED');
    const test = await load(host, { source: 'test', plugin: definePlugin({ manifest: manifest({ id: 'fake' }), setup: () => contributions() }) });
    expect(test.state).toBe('disabled');
    const untrusted = await load(host, { source: 'project', plugin: definePlugin({ manifest: manifest({ id: 'proj' }), setup: () => contributions() }) });
    expect(untrusted.state).toBe('disabled');
    expect(untrusted.error?.code).toBe('PLUGIN_UNTRUSTED');
    expect(host.registry.toolNames()).toEqual([]);
    const trusted = await load(host, { source: 'project', trusted: true, plugin: definePlugin({ manifest: manifest({ id: 'proj2' }), setup: () => contributions() }) });
    expect(trusted.state).toBe('ready');
    const off = await load(host, { plugin: definePlugin({ manifest: manifest({ id: 'off', defaultEnabled: false }), setup: () => contributions() }) });
    expect(off.state).toBe('disabled');
    expect(host.registry.has('off')).toBe(false);
  });

  it('checks host versions with npm range semantics', () => {
    expect(satisfies('0.1.0', '^0.1.0')).toBe(true);
    expect(satisfies('0.2.0', '^0.1.0')).toBe(false);
    expect(satisfies('1.4.2', '>=1.2.0 <2')).toBe(true);
    expect(satisfies('1.4.2', '~1.3')).toBe(false);
    expect(satisfies('2.0.0-beta.1', '^1.0.0 || ^2.0.0')).toBe(false);
    expect(satisfies('1.0.0', '1.x')).toBe(true);
    expect(satisfies('3.0.0', '*')).toBe(true);
  });
});

describe('plugin lifecycle and registry', () => {
  it('loads, registers under namespaced ids with provenance, and records loaded then ready', async () => {
    const host = hostWith();
    const state = await load(host, {});
    expect(state.state).toBe('ready');
    expect(types(host)).toEqual(['plugin.loaded', 'plugin.ready']);
    expect(host.journal()[1]!.data).toEqual({ pluginId: 'demo', tools: ['demo__echo'], providers: ['demo__fake'], hooks: ['demo:guard'], guardrails: [], commands: ['hello'] });
    expect(host.registry.describeTools()).toEqual([{ id: 'demo__echo', displayName: 'echo', pluginId: 'demo', source: 'host', pluginVersion: '1.0.0', risk: 'read', readOnly: true, state: 'ready' }]);
    expect(host.registry.hookRegistrations().map((hook) => hook.id)).toEqual(['demo:guard']);
    expect(host.registry.provider('demo__fake')?.pluginId).toBe('demo');
  });

  it('gives two plugins with the same tool name distinct full ids', async () => {
    const host = hostWith();
    const runTests = (id: string) =>
      definePlugin({ manifest: manifest({ id, contributes: { tools: ['run_tests'] }, permissions: ['execute'] }), setup: () => ({ tools: [{ name: 'run_tests', description: 'tests', parameters: { type: 'object', properties: {} }, risk: 'execute', execute: async () => 'ok' }] }) });
    expect((await host.load({ source: 'host', plugin: runTests('a') })).state).toBe('ready');
    expect((await host.load({ source: 'host', plugin: runTests('b') })).state).toBe('ready');
    expect(host.registry.toolNames()).toEqual(['a__run_tests', 'b__run_tests']);
  });

  it('revokes every contribution when a plugin fails in any phase, and the others keep working', async () => {
    const host = hostWith();
    await load(host, { plugin: definePlugin({ manifest: manifest({ id: 'good' }), setup: () => contributions() }) });
    const failing: Array<[string, PluginSpec, string]> = [
      ['load', { source: 'host', manifest: manifest({ id: 'loadfail' }), load: async () => { throw new Error('import failed'); } }, 'PLUGIN_LOAD_FAILED'],
      ['configure', { source: 'host', config: { retries: 'many' }, plugin: definePlugin({ manifest: manifest({ id: 'configfail' }), config: z.object({ retries: z.number() }), setup: () => contributions() }) }, 'PLUGIN_CONFIG_INVALID'],
      ['start', { source: 'host', plugin: definePlugin({ manifest: manifest({ id: 'startfail' }), setup: () => { throw new Error('no package manager'); } }) }, 'PLUGIN_SETUP_FAILED'],
      ['register', { source: 'host', plugin: definePlugin({ manifest: manifest({ id: 'twice' }), setup: () => ({ hooks: contributions().hooks, tools: [...contributions().tools!, ...contributions().tools!] }) }) }, 'PLUGIN_CONFLICT'],
      ['register', { source: 'host', plugin: definePlugin({ manifest: manifest({ id: 'badschema' }), setup: () => ({ tools: [{ name: 'echo', description: 'x', parameters: { type: 'string' }, risk: 'read', execute: async () => 'x' }] }) }) }, 'PLUGIN_CONTRIBUTION_INVALID'],
      ['register', { source: 'host', plugin: definePlugin({ manifest: manifest({ id: 'undeclared', contributes: { tools: [] } }), setup: () => contributions() }) }, 'PLUGIN_CONTRIBUTION_INVALID'],
      ['register', { source: 'host', plugin: definePlugin({ manifest: manifest({ id: 'risky', permissions: ['model'] }), setup: () => contributions() }) }, 'PLUGIN_CONTRIBUTION_INVALID'],
    ];
    for (const [phase, spec, code] of failing) {
      const state = await host.load(spec);
      expect(state.state, phase).toBe('failed');
      expect(state.error).toMatchObject({ phase, code });
    }
    expect(host.registry.toolNames()).toEqual(['good__echo']);
    expect(host.registry.hookRegistrations().map((hook) => hook.id)).toEqual(['good:guard']);
    // A plugin whose namespaced tool collides with another plugin's is refused whole.
    const clash = await host.load({ source: 'host', plugin: definePlugin({ manifest: manifest({ id: 'good', name: 'again' }), setup: () => contributions() }) });
    expect(clash.error?.code).toBe('PLUGIN_CONFLICT');
    expect(host.registry.toolNames()).toEqual(['good__echo']);
  });

  it('fails a running plugin by revoking what it had registered, and stops the rest', async () => {
    const host = hostWith();
    let stopped = 0;
    await load(host, { plugin: definePlugin({ manifest: manifest({ id: 'one' }), setup: () => ({ ...contributions(), stop: () => void stopped++ }) }) });
    await load(host, { plugin: definePlugin({ manifest: manifest({ id: 'two' }), setup: () => contributions() }) });
    host.failPlugin('one', 'start', 'PLUGIN_SETUP_FAILED', 'its server went away');
    expect(host.journal().at(-1)).toMatchObject({ type: 'plugin.failed', data: { pluginId: 'one', revoked: ['one__echo', 'one__fake', 'one:guard', 'one hello'] } });
    expect(host.registry.toolNames()).toEqual(['two__echo']);
    await host.stopAll('the harness closed');
    expect(host.registry.toolNames()).toEqual([]);
    expect(host.plugins().map((plugin) => [plugin.id, plugin.state])).toEqual([['one', 'failed'], ['two', 'stopped']]);
    expect(types(host).at(-1)).toBe('plugin.stopped');
    expect(stopped).toBe(0);
  });

  it('gives setup a restricted context: logger, its config, workspace info and helpers — no runtime, store or state', async () => {
    const host = hostWith();
    let seen: PluginSetupContext | undefined;
    await load(host, { config: { greeting: 'hi' }, plugin: definePlugin({ manifest: manifest({ id: 'peek' }), setup: (context) => { seen = context; return {}; } }) });
    expect(Object.keys(seen!).sort()).toEqual(['config', 'define', 'host', 'logger', 'pluginId', 'workspace']);
    expect(seen!.config).toEqual({ greeting: 'hi' });
    expect(Object.isFrozen(seen)).toBe(true);
    expect(Object.keys(seen!.workspace)).toEqual(['root']);
  });
});

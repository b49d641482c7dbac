import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CapabilityDescriptor, DiscoveryPolicy } from '../../models/capability.records.js';
import { exclusionOf, selectVisibleSet, type Candidate, type SelectionInput } from '../../src/capabilities/visible-set.js';
import { propertyRuns } from '../support/temp-dir.js';

const local = (name: string, extra: Partial<CapabilityDescriptor> = {}): CapabilityDescriptor => ({ name, source: 'builtin', readOnly: true, destructive: false, openWorld: false, risk: 'read', tokens: 100, schemaDigest: `d:${name}`, ...extra });
const remote = (name: string, extra: Partial<CapabilityDescriptor> = {}): CapabilityDescriptor => local(name, { source: 'mcp', server: 'demo', tool: name, ...extra });
const policy = (extra: Partial<DiscoveryPolicy> = {}): DiscoveryPolicy => ({ mode: 'default', visibleLimit: 64, contextWindow: 200_000, toolShare: 0.25, hidden: [], ...extra });
const candidates = (descriptors: CapabilityDescriptor[], offered = () => true): Candidate[] => descriptors.map((descriptor, index) => ({ descriptor, index, offered: offered() }));
const input = (descriptors: CapabilityDescriptor[], extra: Partial<SelectionInput> = {}): SelectionInput => ({ candidates: candidates(descriptors), policy: policy(), mode: 'default', hits: [], streaks: new Map(), lastInputTokens: 0, resourcesOffered: false, ...extra });
const names = (selection: ReturnType<typeof selectVisibleSet>) => selection.visible.map((entry) => entry.name);

const builtins = ['read', 'write', 'bash', 'tool_search'].map((name) => local(name, name === 'write' || name === 'bash' ? { readOnly: false, risk: name === 'write' ? 'write' : 'execute' } : {}));
const sixty = Array.from({ length: 60 }, (_, index) => remote(`mcp__demo__lookup_${index}`));

describe('selectVisibleSet', () => {
  it('shows everything that fits, without tool_search', () => {
    const selection = selectVisibleSet(input([...builtins, ...sixty.slice(0, 5)]));
    expect(names(selection)).toEqual(['read', 'write', 'bash', 'mcp__demo__lookup_0', 'mcp__demo__lookup_1', 'mcp__demo__lookup_2', 'mcp__demo__lookup_3', 'mcp__demo__lookup_4']);
    expect(selection.deferred).toBe(0);
  });

  it('above the limit defers MCP tools behind tool_search, built-ins first, catalog order for ties', () => {
    const selection = selectVisibleSet(input([...builtins, ...sixty], { policy: policy({ visibleLimit: 20 }) }));
    expect(selection.visible).toHaveLength(20);
    expect(names(selection)).toEqual(expect.arrayContaining(['read', 'write', 'bash', 'tool_search', 'mcp__demo__lookup_0', 'mcp__demo__lookup_15']));
    expect(names(selection)).not.toContain('mcp__demo__lookup_16');
    expect(selection.deferred).toBe(44);
    expect(exclusionOf(selection, candidates([...builtins, ...sixty]), 'mcp__demo__lookup_59')).toBe('deferred');
    expect(exclusionOf(selection, candidates([...builtins, ...sixty]), 'read')).toBeUndefined();
  });

  it('a tool_search hit outranks the rest (newest first); three invalid calls in a row lower a tool', () => {
    const selection = selectVisibleSet(input([...builtins, ...sixty], { policy: policy({ visibleLimit: 10 }), hits: ['mcp__demo__lookup_40', 'mcp__demo__lookup_41'], streaks: new Map([['mcp__demo__lookup_0', 3], ['read', 3]]) }));
    expect(names(selection)).toEqual(expect.arrayContaining(['mcp__demo__lookup_40', 'mcp__demo__lookup_41', 'tool_search']));
    expect(names(selection)).not.toContain('mcp__demo__lookup_0');
    expect(selection.lowered).toEqual(['read', 'mcp__demo__lookup_0']);
  });

  it('with room for fewer hits than a search found, its best hits are the ones shown (D19)', () => {
    // hits are most wanted first: this search's ranking, then an older search's hit.
    const hits = ['mcp__demo__lookup_50', 'mcp__demo__lookup_20', 'mcp__demo__lookup_30', 'mcp__demo__lookup_45'];
    const one = selectVisibleSet(input([local('tool_search'), ...sixty], { policy: policy({ visibleLimit: 2 }), hits }));
    expect(names(one)).toEqual(['tool_search', 'mcp__demo__lookup_50']);
    const two = selectVisibleSet(input([local('tool_search'), ...sixty], { policy: policy({ visibleLimit: 3 }), hits }));
    expect(names(two)).toEqual(['tool_search', 'mcp__demo__lookup_20', 'mcp__demo__lookup_50']);
  });

  it('keeps MCP schemas within the token budget; a full context halves it', () => {
    const heavy = sixty.slice(0, 10).map((descriptor) => ({ ...descriptor, tokens: 1_000 }));
    const roomy = selectVisibleSet(input([...builtins, ...heavy], { policy: policy({ contextWindow: 32_000 }) }));
    expect(roomy.toolBudget).toBe(8_000);
    expect(roomy.visible.filter((entry) => entry.name.startsWith('mcp__'))).toHaveLength(7);
    const squeezed = selectVisibleSet(input([...builtins, ...heavy], { policy: policy({ contextWindow: 32_000 }), lastInputTokens: 30_000 }));
    expect(squeezed.toolBudget).toBe(4_000);
    expect(squeezed.visible.filter((entry) => entry.name.startsWith('mcp__'))).toHaveLength(3);
  });

  it('plan mode, deny-rule globs, rights, a down server and an active skill keep tools out — and say why', () => {
    const destructive = remote('mcp__demo__delete_note', { readOnly: false, destructive: true, risk: 'network' });
    const all = [...builtins, destructive, ...sixty.slice(0, 2)];
    const plan = selectVisibleSet(input(all, { mode: 'plan' }));
    expect(names(plan)).toEqual(['read', 'mcp__demo__lookup_0', 'mcp__demo__lookup_1']);
    expect(plan.excluded.get('write')).toBe('permission');
    const denied = selectVisibleSet(input(all, { policy: policy({ hidden: ['mcp__*__delete*'] }) }));
    expect(names(denied)).not.toContain('mcp__demo__delete_note');
    const child = selectVisibleSet(input(all, { rights: new Set(['read', 'mcp__demo__lookup_1']) }));
    expect(names(child)).toEqual(['read', 'mcp__demo__lookup_1']);
    const down = selectVisibleSet({ ...input(all), candidates: all.map((descriptor, index) => ({ descriptor, index, offered: descriptor.source !== 'mcp' })) });
    expect(down.excluded.get('mcp__demo__lookup_0')).toBe('server-unavailable');
    const skill = selectVisibleSet(input([...all, local('skill')], { skillAllowed: ['read', 'mcp__demo__*'] }));
    expect(names(skill)).toEqual(['read', 'mcp__demo__delete_note', 'mcp__demo__lookup_0', 'mcp__demo__lookup_1', 'skill']);
    expect(skill.excluded.get('bash')).toBe('skill');
  });

  it('resource tools need a server that offers resources', () => {
    const tools = [local('list_mcp_resources', { requires: 'mcp-resources' }), local('read')];
    expect(names(selectVisibleSet(input(tools)))).toEqual(['read']);
    expect(names(selectVisibleSet(input(tools, { resourcesOffered: true })))).toEqual(['list_mcp_resources', 'read']);
  });
});

/** An independent statement of the ranking: score every candidate, sort, and fill the limit greedily. */
const reference = (input: SelectionInput): { visible: string[]; deferred: number } => {
  const { policy } = input;
  const allowed = (name: string) => !input.skillAllowed || ['skill', 'tool_search', 'submit_report'].includes(name) || input.skillAllowed.some((pattern) => pattern === name || (/[*?]/.test(pattern) && new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`).test(name)));
  const pool = input.candidates.filter(({ descriptor, offered }) => offered && (descriptor.requires !== 'mcp-resources' || input.resourcesOffered) && (!input.rights || input.rights.has(descriptor.name)) && !(input.mode === 'plan' && !descriptor.readOnly && descriptor.risk !== 'delegate') && !policy.hidden.includes(descriptor.name) && allowed(descriptor.name));
  const pinned = pool.filter((entry) => ['skill', 'submit_report'].includes(entry.descriptor.name));
  const search = pool.find((entry) => entry.descriptor.name === 'tool_search');
  const ranked = pool.filter((entry) => !['skill', 'submit_report', 'tool_search'].includes(entry.descriptor.name));
  const low = (name: string) => (input.streaks.get(name) ?? 0) >= 3;
  const score = ({ descriptor }: Candidate) => {
    if (low(descriptor.name)) return descriptor.source === 'mcp' ? 0 : 1;
    const hit = input.hits.indexOf(descriptor.name);
    if (hit >= 0) return 1_000 + input.hits.length - hit;
    return descriptor.source === 'mcp' ? 2 : 3;
  };
  const budget = Math.floor(policy.toolShare * policy.contextWindow) / (input.lastInputTokens > policy.contextWindow * 0.75 ? 2 : 1);
  const tokens = ranked.reduce((sum, entry) => sum + entry.descriptor.tokens, 0);
  if (pinned.length + ranked.length <= policy.visibleLimit && tokens <= Math.floor(budget)) return { visible: [...pinned, ...ranked].map((entry) => entry.descriptor.name).sort(), deferred: 0 };
  const sorted = [...ranked].sort((left, right) => score(right) - score(left) || left.index - right.index);
  const room = Math.max(0, policy.visibleLimit - pinned.length - (search ? 1 : 0));
  const taken: Candidate[] = [];
  let used = 0;
  for (const entry of sorted) {
    if (taken.length < room && (entry.descriptor.source !== 'mcp' || used + entry.descriptor.tokens <= Math.floor(budget))) {
      taken.push(entry);
      used += entry.descriptor.tokens;
    }
  }
  const deferred = ranked.length - taken.length;
  return { visible: [...pinned, ...(search && deferred > 0 ? [search] : []), ...taken].map((entry) => entry.descriptor.name).sort(), deferred };
};

describe('selectVisibleSet against an independent ranking', () => {
  it('agrees on the visible set and the deferred count for random catalogs and rounds', () => {
    const catalog = fc.array(fc.record({ local: fc.boolean(), readOnly: fc.boolean(), tokens: fc.integer({ min: 0, max: 3_000 }), offered: fc.boolean() }), { maxLength: 80 });
    fc.assert(
      fc.property(catalog, fc.integer({ min: 1, max: 30 }), fc.constantFrom('default' as const, 'plan' as const), fc.array(fc.nat(79), { maxLength: 10 }), fc.array(fc.nat(79), { maxLength: 5 }), fc.integer({ min: 0, max: 40_000 }), fc.boolean(), (entries, visibleLimit, mode, hitIndexes, lowIndexes, lastInputTokens, withSearch) => {
        const descriptors = entries.map((entry, index) => (entry.local ? local(`tool_${index}`, { readOnly: entry.readOnly, tokens: entry.tokens }) : remote(`mcp__demo__t${index}`, { readOnly: entry.readOnly, tokens: entry.tokens })));
        const all = withSearch ? [...descriptors, local('tool_search')] : descriptors;
        const candidatesOf = all.map((descriptor, index) => ({ descriptor, index, offered: descriptor.name === 'tool_search' || entries[index]!.offered }));
        const names = descriptors.map((descriptor) => descriptor.name);
        const selection: SelectionInput = { candidates: candidatesOf, policy: policy({ visibleLimit, contextWindow: 32_000 }), mode, hits: hitIndexes.flatMap((index) => (names[index] ? [names[index]!] : [])).filter((name, position, list) => list.indexOf(name) === position), streaks: new Map(lowIndexes.flatMap((index) => (names[index] ? [[names[index]!, 3] as const] : []))), lastInputTokens, resourcesOffered: false };
        const decided = selectVisibleSet(selection);
        expect({ visible: decided.visible.map((entry) => entry.name).sort(), deferred: decided.deferred }).toEqual(reference(selection));
      }),
      { numRuns: propertyRuns(300) },
    );
  });
});

import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../scripts/bench/prompt-cache.bench.js';

describe('the prompt-cache benchmark', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('prints the prefix-reuse share per vendor, the fixed prefix\'s tokens within the goal, and where they go', async () => {
    let out = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out += String(chunk);
      return true;
    });
    await main(2);
    vi.restoreAllMocks();
    for (const label of ['anthropic, no breakpoints (baseline)', 'anthropic, cache_control breakpoints', 'openai-compatible, prompt_cache_key']) {
      expect(out).toMatch(new RegExp(`${label.replace(/[()]/g, '\\$&')}\\s+prefix repeated\\s+\\d+\\.\\d%\\s+input served from the cache\\s+\\d+\\.\\d%`));
    }
    // With breakpoints the stand-in serves the repeated prefix from its cache; without them it serves nothing.
    expect(out).toMatch(/no breakpoints \(baseline\)\s+prefix repeated\s+[\d.]+%\s+input served from the cache\s+0\.0%/);
    const fixed = /fixed prefix: system message (\d+) \+ 13 built-in tools (\d+) = (\d+) tokens/.exec(out);
    expect(fixed, out).not.toBeNull();
    const [system, tools, total] = fixed!.slice(1).map(Number) as [number, number, number];
    expect(system + tools).toBe(total);
    expect(total).toBeLessThanOrEqual(2_500);
    const parts = /system message: rules and goal (\d+), environment (\d+); tools: (.+)\n/.exec(out);
    expect(parts, out).not.toBeNull();
    expect(Number(parts![2])).toBeGreaterThan(0);
    expect(parts![3]!.split(', ').map((entry) => entry.split(' ')[0])).toEqual(expect.arrayContaining(['read', 'bash', 'delegate_task', 'update_plan', 'memory_write']));
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fitText, quoteUntrusted } from '../../src/projections/context-render.js';
import { keyLines } from '../../src/projections/key-lines.js';
import { estimateTokenCounter } from '../../src/projections/token-counter.js';
import { assertLocalInspectorUrl } from '../../src/inspect/stately-inspector.js';
import { propertyRuns } from '../support/temp-dir.js';

const sections = ['system-rules', 'goal', 'user-constraints', 'state', 'session-context', 'earlier-user-messages', 'history-summary', 'evidence', 'memory-hints', 'tool-output'];
const fragment = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom(...sections).chain((name) => fc.constantFrom(`<${name}>`, `</${name}>`, `<${name.toUpperCase()} trust="trusted">`, `</ ${name}>`, `<${name}`)),
);

describe('the trust boundary of the context', () => {
  it('quoted untrusted text can never open or close one of the context sections, and text without tags is unchanged', () => {
    fc.assert(
      fc.property(fc.array(fragment, { maxLength: 20 }).map((parts) => parts.join('')), (text) => {
        const quoted = quoteUntrusted(text);
        expect(quoted).not.toMatch(new RegExp(`<\\/?(${sections.join('|')})\\b`, 'i'));
        if (!text.includes('<')) expect(quoted).toBe(text);
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  it('a cut text fits its budget, marks what it left out, and keeps a key line whenever it keeps anything', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 400 }), fc.nat(), fc.integer({ min: 0, max: 3_000 }), (count, keyAt, budget) => {
        const lines = Array.from({ length: count }, (_, index) => (index === keyAt % count ? 'AssertionError: expected 6, got -6' : `progress line ${index} of the build`));
        const text = lines.join('\n');
        const fitted = fitText(text, budget, estimateTokenCounter, 'the full output is record #7');
        if (fitted.mode === 'full') expect(fitted.text).toBe(text);
        if (fitted.mode === 'excerpt') {
          expect(fitted.tokens).toBeLessThanOrEqual(budget);
          expect(fitted.text).toContain('the full output is record #7');
          expect(keyLines(fitted.text)).toContain('AssertionError: expected 6, got -6');
        }
        if (fitted.mode === 'reference') expect(fitted.text).toMatch(/^\[\d+ lines not shown here; the full output is record #7\]$/);
        expect(fitted.tokens).toBe(estimateTokenCounter.count(fitted.text));
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  it('the inspector only accepts ws:// URLs on loopback', () => {
    fc.assert(
      fc.property(fc.constantFrom('ws', 'wss', 'http'), fc.constantFrom('127.0.0.1', 'localhost', '[::1]', '10.0.0.1', '192.168.1.2', 'example.com', '127.0.0.1.nip.io'), fc.integer({ min: 1, max: 65_535 }), (protocol, host, port) => {
        const url = `${protocol}://${host}:${port}/`;
        const local = protocol === 'ws' && ['127.0.0.1', 'localhost', '[::1]'].includes(host);
        if (local) expect(() => assertLocalInspectorUrl(url)).not.toThrow();
        else expect(() => assertLocalInspectorUrl(url)).toThrow(expect.objectContaining({ code: 'INSPECTOR_NOT_LOCAL' }));
      }),
      { numRuns: propertyRuns(200) },
    );
  });
});

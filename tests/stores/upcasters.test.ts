import { describe, expect, it } from 'vitest';
import type { RecordEnvelope } from '../../models/envelope.js';
import { createUpcaster, upcastSteps } from '../../stores/upcasters.js';

const record = (type: string, v: number, data: unknown): RecordEnvelope => ({ stream: 's', seq: 1, id: 'i', type, v, at: 0, actor: 'root', data });

describe('upcasters', () => {
  it('lifts an old record step by step to the current version', () => {
    const upcast = createUpcaster(
      [
        { type: 'user.message', from: 1, up: (data) => ({ text: (data as { content: string }).content }) },
        { type: 'user.message', from: 2, up: (data) => ({ ...(data as object), lang: 'en' }) },
      ],
      (type) => (type === 'user.message' ? 3 : 1),
    );
    expect(upcast(record('user.message', 1, { content: 'hi' }))).toMatchObject({ v: 3, data: { text: 'hi', lang: 'en' } });
    expect(upcast(record('user.message', 3, { text: 'x', lang: 'fr' }))).toMatchObject({ v: 3, data: { text: 'x', lang: 'fr' } });
  });

  it('refuses a record from a newer release with STORE_VERSION_UNSUPPORTED', () => {
    expect(() => createUpcaster()(record('user.message', 9, { text: 'x' }))).toThrow(expect.objectContaining({ code: 'STORE_VERSION_UNSUPPORTED' }));
  });

  it('refuses an old version with no step to lift it', () => {
    const upcast = createUpcaster([], (type) => (type === 'user.message' ? 2 : 1));
    expect(() => upcast(record('user.message', 1, { text: 'x' }))).toThrow(expect.objectContaining({ code: 'STORE_VERSION_UNSUPPORTED' }));
  });

  it('passes unknown record types and current versions through untouched', () => {
    const unknown = record('plugin.custom', 7, { a: 1 });
    expect(createUpcaster()(unknown)).toBe(unknown);
    const current = record('user.message', 1, { text: 'x' });
    expect(createUpcaster()(current)).toBe(current);
    expect(upcastSteps.map((step) => `${step.type}@${step.from}`)).toEqual(['model.attempted@1', 'context.projected@1', 'model.responded@1', 'step.derived@1']);
  });
});

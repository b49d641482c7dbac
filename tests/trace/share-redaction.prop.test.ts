import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRedactor, secretLike } from '../../src/telemetry/redact.js';
import { shareRedactor } from '../../src/trace/share-redaction.js';
import { propertyRuns } from '../support/temp-dir.js';

describe('a secret found once is redacted wherever it recurs (issue 25 §6)', () => {
  it('the redactor learns a secret-named value and removes it from later text, the model\'s sentences included', () => {
    const redact = createRedactor();
    expect(redact('DB_PASSWORD=Tr0ub4dor-and-3\nAPP=zz')).toBe('DB_PASSWORD=[redacted]\nAPP=zz');
    expect(redact('The database password is Tr0ub4dor-and-3.')).toBe('The database password is [redacted].');
    // In the same string, after the pair that taught it.
    expect(createRedactor()('key: "Zq9-abcdefgh" and again Zq9-abcdefgh')).toBe('key: "[redacted]" and again [redacted]');
    // With learning off, only what has a shape or a name goes.
    const plain = createRedactor([], { learn: false });
    plain('DB_PASSWORD=Tr0ub4dor-and-3');
    expect(plain('it is Tr0ub4dor-and-3')).toBe('it is Tr0ub4dor-and-3');
  });

  it('learns no word, flag, number or reference: ordinary text stays', () => {
    const redact = createRedactor();
    for (const pair of ['password: string', 'token=true', 'apiKey: process.env.OPENAI_API_KEY', 'SECRET=${VAULT_SECRET}', 'auth_timeout_key: 30000000', 'secret: correcthorsebattery']) redact(pair);
    expect(redact('a string, true, process.env.OPENAI_API_KEY, 30000000 and correcthorsebattery')).toBe('a string, true, process.env.OPENAI_API_KEY, 30000000 and correcthorsebattery');
    for (const word of ['string', 'password', 'undefined', '12345678', 'process.env.X', '${TOKEN}', 'all lower case']) expect(secretLike(word), word).toBe(false);
    for (const value of ['Tr0ub4dor-and-3', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'hunter22', 'Abc-Defgh']) expect(secretLike(value), value).toBe(true);
  });

  it('a private key teaches each line of its body', () => {
    const redact = createRedactor();
    redact('-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE\n-----END OPENSSH PRIVATE KEY-----');
    expect(redact('it starts b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE')).toBe('it starts [redacted]');
  });

  it('shareRedactor reads every source first, so a sentence before the tool output that taught it is redacted too', () => {
    const records = [{ type: 'model.responded', data: { text: 'I will guess Tr0ub4dor-and-3' } }, { type: 'tool.settled', data: { observation: 'DB_PASSWORD=Tr0ub4dor-and-3' } }];
    const share = shareRedactor(records.map((record) => record.data));
    expect(share.text('I will guess Tr0ub4dor-and-3')).toBe('I will guess [redacted]');
    const copy = share.value({ text: 'Tr0ub4dor-and-3', n: 1, list: ['Tr0ub4dor-and-3', null], ['__proto__']: 'kept as a key' } as Record<string, unknown>);
    expect(copy).toEqual({ text: '[redacted]', n: 1, list: ['[redacted]', null], ['__proto__']: 'kept as a key' });
    expect(Object.keys(copy)).toContain('__proto__');
    // The sources themselves are never changed.
    expect(records[0]!.data.text).toBe('I will guess Tr0ub4dor-and-3');
  });

  it('property: any secret-like value under any secret name is gone from any later text that holds it', () => {
    const secretValue = fc.string({ unit: fc.constantFrom(...'abcdefghXYZ0123456789-_/+'), minLength: 8, maxLength: 40 }).filter(secretLike);
    const name = fc.constantFrom('DB_PASSWORD', 'AWS_SECRET_ACCESS_KEY', 'apiKey', 'github-token', 'Authorization', 'session.secret');
    const around = fc.string({ maxLength: 30 });
    fc.assert(
      fc.property(name, secretValue, around, around, fc.constantFrom((k: string, v: string) => `${k}=${v}\n`, (k: string, v: string) => `${k}: ${v}`, (k: string, v: string) => `{"${k}": "${v}"}`, (k: string, v: string) => `${k} = '${v}'`), (key, value, before, after, pair) => {
        const share = shareRedactor([{ env: pair(key, value) }]);
        const said = share.text(`${before}${value}${after}`);
        expect(said).not.toContain(value);
      }),
      { numRuns: propertyRuns(300) },
    );
  });
});

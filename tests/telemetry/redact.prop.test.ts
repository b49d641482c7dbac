import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRedactor, hasCredentialShape, redactCredentialShapes } from '../../src/telemetry/redact.js';
import { classifyMemoryRisks } from '../../src/memory/risk-classifier.js';

const alnum = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'), minLength: min, maxLength: max });
const base64 = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'), minLength: min, maxLength: max });
const upper = (length: number) => fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'), minLength: length, maxLength: length });
/** A secret value that cannot occur by chance in the surrounding text (the text is built around it). */
const password = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!%^*~+_-'), minLength: 6, maxLength: 30 }).map((value) => `Q9${value}`);
/** Text around a secret: ordinary words and punctuation, never touching it. */
const prose = fc.array(fc.constantFrom('the', 'build', 'failed', 'see', 'line', '12', '->', 'ok', 'config:', 'done.'), { maxLength: 6 }).map((words) => words.join(' '));

/** Each format the trial found exported verbatim (trial 6 F23), and the vendor shapes added with them: [text, secret]. */
const formats: Record<string, fc.Arbitrary<[string, string]>> = {
  'a URL password (postgres://user:pass@host)': fc.tuple(fc.constantFrom('postgres', 'mysql', 'redis', 'https', 'amqp', 'mongodb+srv'), alnum(1, 10), password, alnum(1, 12)).map(([scheme, user, secret, host]) => [`DATABASE_URL=${scheme}://${user}:${secret}@${host}.internal:5432/app`, secret]),
  'a Stripe live or test key': fc.tuple(fc.constantFrom('sk', 'rk'), fc.constantFrom('live', 'test'), alnum(16, 40)).map(([kind, mode, body]) => [`STRIPE=${kind}_${mode}_${body}`.replace('STRIPE=', 'stripe key '), `${kind}_${mode}_${body}`]),
  'an AWS secret access key named in a file': fc.tuple(fc.constantFrom('AWS_SECRET_ACCESS_KEY=', 'aws_secret_access_key = ', 'export AWS_SECRET_ACCESS_KEY="'), base64(40, 40)).map(([name, key]) => [`${name}${key}${name.endsWith('"') ? '"' : ''}`, key]),
  'a Slack webhook URL': fc.tuple(upper(9), upper(9), alnum(24, 24)).map(([team, bot, token]) => [`slack=https://hooks.slack.com/services/T${team}/B${bot}/${token}`, token]),
  'a secret-named pair (.env, YAML, JSON, escaped JSON, a header)': fc.tuple(fc.constantFrom('DB_PASSWORD=%', 'password: %', '"apiKey": "%"', '{\\"client_secret\\": \\"%\\"}', 'X-Api-Key: %', 'Authorization: Basic %', 'GITHUB_TOKEN=%', 'auth_token=%&x=1'), password).map(([template, secret]) => [template.replace('%', secret), secret]),
  'a JSON Web Token': fc.tuple(alnum(10, 30), alnum(10, 60), alnum(20, 43)).map(([header, payload, signature]) => { const token = `eyJ${header}.eyJ${payload}.${signature}`; return [`cookie value ${token}`, token]; }),
  'vendor tokens (GitLab, npm, Hugging Face, Slack app, AWS session key id)': fc.tuple(fc.constantFrom('glpat-', 'npm_', 'hf_', 'xapp-1-', 'ASIA'), alnum(36, 36)).map(([prefix, body]) => { const token = prefix === 'ASIA' ? `ASIA${body.slice(0, 16).toUpperCase()}` : `${prefix}${body}`; return [`token is ${token} here`, token]; }),
  // What was redacted before must stay redacted (never weaken it).
  'the shapes redacted before (sk-, ghp_, github_pat_, AKIA, xox?-, AIza, Bearer, private keys)': fc.tuple(fc.constantFrom('sk-', 'ghp_', 'github_pat_', 'AKIA', 'xoxb-', 'AIza', 'Bearer ', 'PEM'), alnum(35, 40)).map(([prefix, body]) => {
    const token = prefix === 'AKIA' ? `AKIA${body.slice(0, 16).toUpperCase()}` : prefix === 'AIza' ? `AIza${body.slice(0, 35)}` : prefix === 'PEM' ? `-----BEGIN RSA PRIVATE KEY-----\n${body}\n-----END RSA PRIVATE KEY-----` : `${prefix}${body}`;
    return [`here: ${token} .`, prefix === 'Bearer ' ? body : token];
  }),
};

describe('the redactor removes every known secret shape (trial 6 F23)', () => {
  for (const [name, format] of Object.entries(formats)) {
    it(`${name}: the secret is gone wherever it stands, the rest is kept, and redacting again changes nothing`, () => {
      fc.assert(fc.property(prose, format, prose, (before, [text, secret], after) => {
        const whole = `${before} ${text} ${after}`;
        const redacted = createRedactor()(whole);
        expect(redacted).not.toContain(secret);
        expect(redacted).toContain('[redacted]');
        expect(redacted.startsWith(before)).toBe(true);
        expect(redactCredentialShapes(redacted)).toBe(redacted);
        expect(hasCredentialShape(whole)).toBe(true);
        // Memory sends what holds one to a person, never keeps it on its own.
        expect(classifyMemoryRisks({ content: whole, kind: 'project_fact', scope: { level: 'repo' } })).toContain('credential');
      }), { numRuns: 150 });
    });
  }

  it('the four values of the trial\'s app.env are all redacted, the names and hosts kept', () => {
    const env = 'DATABASE_URL=postgres://app:hunter2pw@db.internal/x\nSTRIPE=rk_live_51H8abcdefghijklmnopqrstu\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nslack=https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX\n';
    expect(createRedactor()(env)).toBe('DATABASE_URL=postgres://app:[redacted]@db.internal/x\nSTRIPE=[redacted]\nAWS_SECRET_ACCESS_KEY=[redacted]\nslack=https://hooks.slack.com/[redacted]\n');
  });

  it('long runs without a separator (a base64 blob, a minified line) are scanned once, not once per position', () => {
    // A scan quadratic in the run's length would take minutes here and time the test out; this takes milliseconds.
    for (const blob of ['A'.repeat(200_000), 'a.b-c_'.repeat(40_000), `${'x'.repeat(100_000)}=${'y'.repeat(100_000)}`]) expect(createRedactor()(blob)).toBe(blob);
    expect(createRedactor()(`${'k'.repeat(100_000)}_token=${'v'.repeat(10)}`)).toBe(`${'k'.repeat(100_000)}_token=[redacted]`);
  });

  it('ordinary text, code and token counts pass unchanged', () => {
    for (const text of ['"max_tokens": 1000, "input_tokens": 12', 'https://example.com:8080/path?q=1', 'the keyboard=qwerty layout', 'if (token === "") return', 'monkey=banana', 'read a.txt then list_dir .', 'ssh git@github.com:owner/repo.git']) expect(createRedactor()(text), text).toBe(text);
  });
});
